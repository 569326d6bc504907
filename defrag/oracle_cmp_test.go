package defrag_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/defrag"
	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestMakeRoomOracle compares MakeRoom with the exhaustive oracle on random
// small clusters (at most 5 movable jobs, K ≤ 3): same answer, the fewest
// moves and then the fewest GPUs moved (when MakeRoom says Exact), and a
// plan that applies move by move with Check clean and every moved job valid.
func TestMakeRoomOracle(t *testing.T) {
	seed := testSeed(t)
	n := testSteps(t, 1000)
	var p defrag.Planner
	var plan defrag.Plan
	var stats struct{ instances, fits, withMoves, gpusEqual, states, exact int }
	hist := map[int]int{}
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		c := oracleInstance(t, rng, &p, &plan, fmt.Sprintf("instance %d (seed %d)", i, seed))
		stats.instances++
		stats.states += c.states
		if c.exact {
			stats.exact++
		}
		if !c.fits {
			continue
		}
		stats.fits++
		hist[c.moves]++
		if c.moves > 0 {
			stats.withMoves++
			if c.fewestGPUs {
				stats.gpusEqual++
			}
		}
	}
	t.Logf("%d instances, %d fit (%d with moves: %v), fewest GPUs moved in %d of %d, exact %d, oracle states %d",
		stats.instances, stats.fits, stats.withMoves, hist, stats.gpusEqual, stats.withMoves, stats.exact, stats.states)
}

// FuzzMakeRoomOracle is TestMakeRoomOracle steered by a fuzzer: the
// generators draw the instance from the fuzzer's bytes (testkit.Bytes).
//
//	go test -run '^$' -fuzz FuzzMakeRoomOracle -fuzztime 10m ./defrag
func FuzzMakeRoomOracle(f *testing.F) {
	testkit.AddSeeds(f, 48)
	var p defrag.Planner // reused, as in the test
	var plan defrag.Plan
	f.Fuzz(func(t *testing.T, in []byte) {
		oracleInstance(t, testkit.Rand(in), &p, &plan, "the instance")
	})
}

// checked is what oracleInstance found.
type checked struct {
	fits, exact bool
	moves       int  // the oracle's fewest moves
	fewestGPUs  bool // the plan moves the oracle's fewest GPUs for them
	states      int  // the oracle's states
}

// oracleInstance draws an instance from rng, answers it with p and the
// oracle, and fails t where they disagree or the plan is not valid.
func oracleInstance(t *testing.T, rng *rand.Rand, p *defrag.Planner, plan *defrag.Plan, what string) checked {
	o := genOpts{maxMovable: 5, cpu: rng.IntN(3) == 0, sets: rng.IntN(2) == 0, health: rng.IntN(3) == 0, models: rng.IntN(4) == 0,
		mostly: rng.IntN(2) == 0, elig: rng.IntN(3) == 0, noms: rng.IntN(3) == 0}
	tree := genCluster(rng, o)
	s := topology.NewState(tree)
	genLoad(rng, s, o, 0.6+0.35*rng.Float64())
	r := genRequest(rng, tree, s.JobIDBound(), o)
	if rng.IntN(4) > 0 {
		r = genTightRequestN(rng, s, s.JobIDBound(), o, 5)
	}
	k := 1 + rng.IntN(3)
	res, err := p.MakeRoom(s, r, defrag.Config{MaxMoves: k}, plan)
	require.NoError(t, err)
	or := newOracle(s, r, k)
	moves, gpus, ok := or.solve()
	c := checked{fits: ok, exact: res.Exact, moves: moves, states: or.states}
	require.Equal(t, ok, res.Fits, "%s: oracle %v (%d moves), MakeRoom %v %s\n%s", what, ok, moves, res.Fits, res.Reason.Format(tree), picture(s, r, plan))
	if !ok {
		return c
	}
	require.Equal(t, moves, len(plan.Moves), "%s: moves\n%s", what, picture(s, r, plan))
	target := plan.Target
	if plan.TargetHost >= 0 || len(plan.Moves) == 0 {
		target = -1
	}
	_, err = checkPlan(s, plan, r, target)
	require.NoError(t, err, "%s\n%s", what, picture(s, r, plan))
	if moves > 0 {
		if res.Exact {
			require.Equal(t, gpus, plan.GPUs, "%s: GPUs moved\n%s", what, picture(s, r, plan))
		}
		require.GreaterOrEqual(t, plan.GPUs, gpus)
		c.fewestGPUs = plan.GPUs == gpus
	}
	return c
}
