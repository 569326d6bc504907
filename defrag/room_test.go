package defrag_test

import (
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/defrag"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestMakeRoomRandom runs MakeRoom on random clusters too large for
// exhaustive destinations (up to 96 hosts), with fractional pods, CPU, pod
// sets and slices, failed and draining hosts: the State is unchanged, a fit
// comes with a plan valid move by move (Check clean, moved jobs valid and
// outside the target) and a request placement valid after it, a no-fit with
// no moves and a reason, and a request that fits as it is with no moves.
func TestMakeRoomRandom(t *testing.T) {
	seed := testSeed(t)
	n := testSteps(t, 300)
	var p defrag.Planner
	var plan defrag.Plan
	var v placement.Solver
	var direct placement.Plan
	var fits, moved, exact int
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)+1<<40))
		o := genOpts{maxMovable: 1000, frac: true, cpu: rng.IntN(2) == 0, sets: true, health: rng.IntN(2) == 0, models: rng.IntN(3) == 0}
		sh := topology.Shape{Levels: []string{"block", "rack"}, FanOut: []int{1 + rng.IntN(3), 2 + rng.IntN(4), 2 + rng.IntN(8)},
			GPUsPerHost: 2 + rng.IntN(7)}
		tree, err := topology.BuildShape(sh)
		require.NoError(t, err)
		s := topology.NewState(tree)
		genLoad(rng, s, o, 0.5+0.45*rng.Float64())
		r := genRequest(rng, tree, s.JobIDBound(), o)
		if rng.IntN(3) > 0 {
			r = genTightRequest(rng, s, s.JobIDBound(), o)
		}
		if rng.IntN(4) == 0 {
			r.Required = 1 // a block
		}
		cfg := defrag.Config{MaxMoves: 1 + rng.IntN(8)}
		before, _ := s.MarshalBinary()
		res, err := p.MakeRoom(s, r, cfg, &plan)
		require.NoError(t, err)
		after, _ := s.MarshalBinary()
		require.Equal(t, before, after, "MakeRoom changed the State")
		ok, _, err := v.Place(s, r, &direct)
		require.NoError(t, err)
		if ok {
			require.True(t, res.Fits, "instance %d: fits as it is", i)
			require.Empty(t, plan.Moves, "instance %d: fits as it is, yet moves", i)
		}
		if res.Exact {
			exact++
		}
		if !res.Fits {
			require.Empty(t, plan.Moves)
			require.NotEqual(t, defrag.Fits, res.Reason.Code)
			require.NotEmpty(t, res.Reason.Format(tree))
			continue
		}
		fits++
		require.LessOrEqual(t, len(plan.Moves), cfg.MaxMoves)
		target := plan.Target
		if plan.TargetHost >= 0 || len(plan.Moves) == 0 {
			target = -1
		}
		_, err = checkPlan(s, &plan, r, target)
		require.NoError(t, err, "instance %d (seed %d)\n%s", i, seed, picture(s, r, &plan))
		if len(plan.Moves) > 0 {
			moved++
			if plan.TargetHost >= 0 {
				for _, mv := range plan.Moves {
					for _, pod := range mv.Pods {
						require.NotEqual(t, plan.TargetHost, pod.Host, "a move lands on the target host")
					}
				}
			}
		}
	}
	t.Logf("%d instances: %d fit, %d of them with moves; %d exact", n, fits, moved, exact)
}

// TestMakeRoomErrors: bad configs and requests are errors.
func TestMakeRoomErrors(t *testing.T) {
	tree, err := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{2, 2}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := topology.NewState(tree)
	var p defrag.Planner
	var plan defrag.Plan
	ok := &placement.Request{Job: 1, Sets: []placement.PodSet{{Pods: 1, GPUs: 1}}}
	_, err = p.MakeRoom(s, ok, defrag.Config{MaxMoves: -1}, &plan)
	require.ErrorIs(t, err, defrag.ErrInvalid)
	_, err = p.MakeRoom(s, ok, defrag.Config{MaxMoves: 1, MaxWork: -1}, &plan)
	require.ErrorIs(t, err, defrag.ErrInvalid)
	_, err = p.MakeRoom(s, &placement.Request{Job: 1}, defrag.Config{MaxMoves: 1}, &plan)
	require.ErrorIs(t, err, placement.ErrInvalid)
}

// TestMakeRoomAllocs: a warmed-up Planner allocates nothing for a one-move
// plan.
func TestMakeRoomAllocs(t *testing.T) {
	tree, s, small, rack := nvl72Block(t)
	// One 1-GPU job in every rack: no rack is free.
	lo, hi := tree.LevelDomains(rack)
	for d := lo; d < hi; d++ {
		h, _ := tree.Hosts(d)
		mustApply(s, topology.AddJob(topology.JobID(d-lo), small, topology.Pod{Host: h + topology.HostID(int(d)%18), GPUs: 1}))
	}
	r := &placement.Request{Job: s.JobIDBound(), Required: rack, Preferred: topology.NoLevel, Sets: []placement.PodSet{{Pods: 18, GPUs: 4}}}
	var p defrag.Planner
	var plan defrag.Plan
	cfg := defrag.Config{MaxMoves: 8}
	res, err := p.MakeRoom(s, r, cfg, &plan)
	require.NoError(t, err)
	require.True(t, res.Fits && res.Exact)
	require.Len(t, plan.Moves, 1)
	allocs := testing.AllocsPerRun(50, func() { _, _ = p.MakeRoom(s, r, cfg, &plan) })
	require.Zero(t, allocs)
}

// FuzzMakeRoom draws a small instance from the fuzzed seed and checks what
// MakeRoom promises on it: a valid plan move by move, or no fit and no moves.
func FuzzMakeRoom(f *testing.F) {
	for _, seed := range []uint64{1, 2, 3, 42, 1 << 40} {
		f.Add(seed, uint8(3))
	}
	f.Fuzz(func(t *testing.T, seed uint64, k uint8) {
		rng := rand.New(rand.NewPCG(seed, 7))
		o := genOpts{maxMovable: 6, frac: rng.IntN(2) == 0, cpu: rng.IntN(2) == 0, sets: true, health: rng.IntN(2) == 0}
		tree := genCluster(rng, o)
		s := topology.NewState(tree)
		genLoad(rng, s, o, 0.5+0.45*rng.Float64())
		r := genTightRequest(rng, s, s.JobIDBound(), o)
		var p defrag.Planner
		var plan defrag.Plan
		res, err := p.MakeRoom(s, r, defrag.Config{MaxMoves: int(k % 6)}, &plan)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Fits {
			if len(plan.Moves) != 0 {
				t.Fatal("a no-fit with moves")
			}
			return
		}
		target := plan.Target
		if plan.TargetHost >= 0 || len(plan.Moves) == 0 {
			target = -1
		}
		if _, err := checkPlan(s, &plan, r, target); err != nil {
			t.Fatalf("%v\n%s", err, picture(s, r, &plan))
		}
	})
}

// TestMakeRoomMovableBound: a rack gang missing three hosts in every rack,
// where no movable job holds more than one GPU, is refused for two moves
// from the movable-size histogram alone (exactly, and with no target's pods
// read: no work beyond the plain placement) and placed with three.
func TestMakeRoomMovableBound(t *testing.T) {
	tree, s, small, rack := nvl72Block(t)
	lo, hi := tree.LevelDomains(rack)
	id := topology.JobID(0)
	for d := lo; d < hi; d++ {
		h, _ := tree.Hosts(d)
		for i := range 3 {
			mustApply(s, topology.AddJob(id, small, topology.Pod{Host: h + topology.HostID(5*i), GPUs: 1}))
			id++
		}
	}
	require.Equal(t, int64(2), s.MovableGPUsBound(2))
	r := &placement.Request{Job: s.JobIDBound(), Required: rack, Preferred: topology.NoLevel, Sets: []placement.PodSet{{Pods: 18, GPUs: 4}}}
	var p defrag.Planner
	var plan defrag.Plan
	res, err := p.MakeRoom(s, r, defrag.Config{MaxMoves: 2}, &plan)
	require.NoError(t, err)
	require.False(t, res.Fits)
	require.True(t, res.Exact)
	require.Equal(t, defrag.NoPlan, res.Reason.Code)
	require.LessOrEqual(t, res.Work, 1, "no target's pods are read")
	res, err = p.MakeRoom(s, r, defrag.Config{MaxMoves: 3}, &plan)
	require.NoError(t, err)
	require.True(t, res.Fits, "%+v", res)
	require.Len(t, plan.Moves, 3, "every rack misses three hosts")
}

// nvl72Block returns one NVL72 block, an empty State of it, the attributes of
// a small movable preemptible job, and the rack level.
func nvl72Block(t *testing.T) (*topology.Tree, *topology.State, topology.Job, topology.Level) {
	t.Helper()
	tree, err := topology.BuildShape(topology.NVL72(1))
	require.NoError(t, err)
	small := topology.Job{Priority: 1, Preemptible: true, Movable: true, Required: topology.NoLevel, Preferred: topology.NoLevel}
	rack, _ := tree.LevelByName("rack")
	return tree, topology.NewState(tree), small, rack
}
