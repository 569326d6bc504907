package placement_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// The profile oracle: the capacity-loss rule of placement.Profile restated
// from its documentation, scoring every host from scratch from the State's
// primary data (free milli per GPU, free bits, CPU, memory).

// profOracle holds a profile's integer weights, computed as documented.
type profOracle struct {
	shapes []placement.ProfileShape // the kept shapes (GPU shapes that fit somewhere)
	w      []int64
}

func newProfOracle(t *topology.Tree, p *placement.Profile) *profOracle {
	o := &profOracle{}
	var raw []float64
	maxW := 0.0
	for _, s := range p.Shapes {
		if s.GPUs == 0 {
			continue
		}
		anyModel := s
		anyModel.Models = nil
		total, all := int64(0), int64(0) // Cap(m), and Cap(m) were every model acceptable
		for h := range topology.HostID(t.NumHosts()) {
			milli := make([]int, t.HostGPUCount(h))
			for i := range milli {
				milli[i] = topology.FullGPU
			}
			total += oracleCap(&s, t.HostModel(h), milli, int64(t.HostCPU(h)), int64(t.HostMemory(h)))
			all += oracleCap(&anyModel, t.HostModel(h), milli, int64(t.HostCPU(h)), int64(t.HostMemory(h)))
		}
		if total == 0 {
			continue
		}
		demand := float64(s.Milli)
		if s.Milli == 0 {
			demand = float64(s.GPUs) * 1000
		}
		w := s.Weight * demand / math.Pow(float64(all), 0.25) * float64(all) / float64(total)
		o.shapes = append(o.shapes, s)
		raw = append(raw, w)
		maxW = max(maxW, w)
	}
	for _, w := range raw {
		o.w = append(o.w, max(int64(math.Round(w/maxW*(1<<20))), 1))
	}
	return o
}

// oracleCap is how many pods of shape s a host holds: milli are the free
// milli of its GPUs (1000: unused).
func oracleCap(s *placement.ProfileShape, model int, milli []int, cpu, mem int64) int64 {
	if len(s.Models) > 0 && !slices.Contains(s.Models, model) {
		return 0
	}
	n := int64(0)
	for _, m := range milli {
		if s.Milli > 0 {
			n += int64(m / int(s.Milli))
		} else if m == topology.FullGPU {
			n++
		}
	}
	if s.Milli == 0 {
		n /= int64(s.GPUs)
	}
	if s.CPUMilli > 0 {
		n = min(n, max(cpu, 0)/int64(s.CPUMilli))
	}
	if s.MemoryMiB > 0 {
		n = min(n, max(mem, 0)/int64(s.MemoryMiB))
	}
	return n
}

func (o *profOracle) value(model int, milli []int, cpu, mem int64) int64 {
	v := int64(0)
	for i := range o.shapes {
		v += o.w[i] * oracleCap(&o.shapes[i], model, milli, cpu, mem)
	}
	return v
}

// choose returns the host and GPU (-1 for whole-GPU and CPU-only pods) the
// rule picks for one pod of set on a flat tree, or host -1.
func (o *profOracle) choose(s *topology.State, set placement.PodSet, models []int, elig []uint64) (topology.HostID, int) {
	t := s.Tree()
	best, bestGPU := topology.HostID(-1), -1
	var bestLoss, bestKey int64
	for h := range topology.HostID(t.NumHosts()) {
		model := t.HostModel(h)
		if len(models) > 0 && !slices.Contains(models, model) || s.HostHealth(h) != topology.Healthy ||
			elig != nil && elig[h/64]&(1<<(uint(h)%64)) == 0 {
			continue
		}
		lo, hi := t.HostGPUs(h)
		milli := make([]int, hi-lo)
		free, unused := int64(0), 0
		for g := lo; g < hi; g++ {
			milli[g-lo] = s.GPUMilli(g)
			free += int64(milli[g-lo])
			if s.GPUFree(g) {
				unused++
			}
		}
		cpu, mem := int64(s.HostCPU(h)), int64(s.HostMemory(h))
		if cpu < int64(set.CPUMilli) || mem < int64(set.MemoryMiB) || set.Milli == 0 && unused < int(set.GPUs) {
			continue
		}
		before := o.value(model, milli, cpu, mem)
		after := slices.Clone(milli)
		cpu, mem = cpu-int64(set.CPUMilli), mem-int64(set.MemoryMiB)
		loss, gpu := int64(-1), -1
		switch {
		case set.Milli > 0:
			for i, x := range milli {
				if x < int(set.Milli) {
					continue
				}
				after[i] = x - int(set.Milli)
				l := before - o.value(model, after, cpu, mem)
				after[i] = x
				if gpu < 0 || l < loss || l == loss && x < milli[gpu] {
					loss, gpu = l, i
				}
			}
			if gpu < 0 {
				continue
			}
		case set.GPUs > 0:
			for i, left := 0, int(set.GPUs); left > 0; i++ {
				if after[i] == topology.FullGPU {
					after[i] = 0
					left--
				}
			}
			fallthrough
		default:
			loss = before - o.value(model, after, cpu, mem)
		}
		key := int64(s.HostCPU(h)) + 16*free
		if best < 0 || loss < bestLoss || loss == bestLoss && key < bestKey {
			best, bestGPU, bestLoss, bestKey = h, gpu, loss, key
		}
	}
	return best, bestGPU
}

// profTree is a random flat tree of 2…24 hosts (one in eight: 60…139, past
// word edges) drawn from a few kinds, so
// that hosts of equal state are common; one kind has 16 GPUs (more than the
// index shares states for).
func profTree(rng *rand.Rand) *topology.Tree {
	kinds := []topology.HostSpec{
		{GPUs: 8, Model: "A", CPUMilli: 64000, MemoryMiB: 256000},
		{GPUs: 2, Model: "B", CPUMilli: 32000, MemoryMiB: 64000},
		{GPUs: 4, Model: "A", CPUMilli: 16000, MemoryMiB: 128000},
		{GPUs: 1, Model: "C", CPUMilli: 8000, MemoryMiB: 32000},
		{GPUs: 16, Model: "B", CPUMilli: 96000, MemoryMiB: 512000},
		{GPUs: 0, Model: "", CPUMilli: 48000, MemoryMiB: 96000},
	}
	n := 2 + rng.IntN(23)
	if rng.IntN(8) == 0 {
		n = 60 + rng.IntN(80)
	}
	var hosts []topology.HostSpec
	for i := range n {
		k := kinds[rng.IntN(len(kinds))]
		k.Name = fmt.Sprintf("h%d", i)
		hosts = append(hosts, k)
	}
	t, err := topology.BuildHosts(nil, hosts)
	if err != nil {
		panic(err)
	}
	return t
}

// profShape draws a random pod shape on tree t.
func profShape(rng *rand.Rand, t *topology.Tree) placement.ProfileShape {
	s := placement.ProfileShape{CPUMilli: int32(rng.IntN(9)) * 2000, MemoryMiB: int32(rng.IntN(5)) * 16000, Weight: float64(1 + rng.IntN(20))}
	switch rng.IntN(5) {
	case 0: // CPU-only
	case 1, 2:
		s.GPUs, s.Milli = 1, int32(50*(1+rng.IntN(19)))
	default:
		s.GPUs = []int32{1, 1, 2, 4, 8}[rng.IntN(5)]
	}
	if rng.IntN(4) == 0 {
		s.Models = []int{rng.IntN(t.NumModels())}
	}
	return s
}

func profProfile(rng *rand.Rand, t *topology.Tree) *placement.Profile {
	p := &placement.Profile{}
	for range 1 + rng.IntN(8) {
		p.Shapes = append(p.Shapes, profShape(rng, t))
	}
	return p
}

// TestProfileOracle places random one-pod requests with a random profile on
// random flat trees, with random eligible-host sets, removes random jobs and
// drains or restores random hosts now and then (and sometimes goes on with a
// clone of the State, or overwrites the State with an earlier snapshot of it,
// which brings hosts back to generations they had with other content), and
// checks every choice — the host, and a
// fraction's GPU — against the oracle that scores every host from scratch.
// Every plan is applied, with State.Check after each step.
func TestProfileOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(testkit.Seed(t, 7), 0))
	instances, steps := testkit.Steps(t, 150), 60
	agree, placed := 0, 0
	for inst := range instances {
		tree := profTree(rng)
		prof := profProfile(rng, tree)
		var v placement.Solver
		require.NoError(t, v.SetProfile(tree, prof))
		o := newProfOracle(tree, prof)
		s := topology.NewState(tree)
		var plan placement.Plan
		var live, savedLive []topology.JobID
		var saved []byte
		for step := range steps {
			switch k := rng.IntN(25); {
			case k == 0:
				b, err := s.MarshalBinary()
				require.NoError(t, err)
				saved, savedLive = b, slices.Clone(live)
			case k == 1 && saved != nil:
				require.NoError(t, s.UnmarshalBinary(saved))
				live = slices.Clone(savedLive)
			}
			if len(live) > 0 && rng.IntN(5) == 0 {
				k := rng.IntN(len(live))
				require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{topology.RemoveJob(live[k])}}))
				live = slices.Delete(live, k, k+1)
				continue
			}
			if rng.IntN(20) == 0 {
				s = s.Clone()
			}
			if rng.IntN(15) == 0 {
				h := topology.HostID(rng.IntN(tree.NumHosts()))
				health := topology.Healthy
				if s.HostHealth(h) == topology.Healthy {
					health = topology.Draining
				}
				require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{topology.SetHostHealth(h, health)}}))
				continue
			}
			var elig []uint64
			if rng.IntN(3) == 0 {
				for range (tree.NumHosts() + 63) / 64 {
					elig = append(elig, rng.Uint64()|rng.Uint64())
				}
			}
			ps := prof.Shapes[rng.IntN(len(prof.Shapes))]
			if rng.IntN(4) == 0 {
				ps = profShape(rng, tree)
			}
			set := placement.PodSet{Pods: 1, GPUs: ps.GPUs, Milli: ps.Milli, CPUMilli: ps.CPUMilli, MemoryMiB: ps.MemoryMiB}
			job := topology.JobID(step) // each instance has its own State: ids from 0 keep its job table small
			req := placement.Request{Job: job, Sets: []placement.PodSet{set}, Models: ps.Models, Eligible: elig}
			ok, _, err := v.Place(s, &req, &plan)
			require.NoError(t, err)
			wantHost, wantGPU := o.choose(s, set, ps.Models, elig)
			where := fmt.Sprintf("instance %d step %d: pod %+v models %v", inst, step, set, ps.Models)
			require.Equal(t, wantHost >= 0, ok, where)
			if !ok {
				continue
			}
			got := plan.Pods[0]
			require.Equal(t, wantHost, got.Host, where)
			if set.Milli > 0 {
				require.Equal(t, uint64(1)<<uint(wantGPU), got.GPUs, where)
			}
			agree++
			require.NoError(t, s.Apply(plan.Delta()), where)
			require.NoError(t, s.Check(), where)
			live = append(live, job)
			placed++
		}
	}
	t.Logf("%d instances: %d placements agree with the oracle", instances, agree)
	require.Positive(t, placed)
}

// TestProfileGangs: with a profile, requests the rule does not cover (gangs,
// several pod sets, racks) still get valid plans.
func TestProfileGangs(t *testing.T) {
	rng := rand.New(rand.NewPCG(testkit.Seed(t, 11), 0))
	tree := loopTree(t)
	s := topology.NewState(tree)
	var v placement.Solver
	require.NoError(t, v.SetProfile(tree, profProfile(rng, tree)))
	var plan placement.Plan
	for job := range topology.JobID(testkit.Steps(t, 200)) {
		set := placement.PodSet{Pods: int32(1 + rng.IntN(3)), GPUs: int32(1 + rng.IntN(4)), CPUMilli: int32(rng.IntN(4)) * 1000}
		if rng.IntN(2) == 0 {
			set.Pods, set.GPUs, set.Milli = 1, 1, int32(100*(1+rng.IntN(9)))
		}
		req := placement.Request{Job: job, Sets: []placement.PodSet{set}}
		ok, _, err := v.Place(s, &req, &plan)
		require.NoError(t, err)
		if ok {
			require.NoError(t, s.Apply(plan.Delta()))
			require.NoError(t, s.Check())
		}
	}
}

// TestSetProfileInvalid: malformed profiles are ErrInvalid and leave the
// Solver's profile as it was.
func TestSetProfileInvalid(t *testing.T) {
	tree := loopTree(t)
	good := &placement.Profile{Shapes: []placement.ProfileShape{{GPUs: 1, Milli: 500, CPUMilli: 4000, Weight: 3}}}
	bad := []*placement.Profile{
		{},
		{Shapes: []placement.ProfileShape{{GPUs: 1, Weight: 0}}},
		{Shapes: []placement.ProfileShape{{GPUs: 1, Weight: math.NaN()}}},
		{Shapes: []placement.ProfileShape{{GPUs: 1, Weight: math.Inf(1)}}},
		{Shapes: []placement.ProfileShape{{GPUs: 2, Milli: 500, Weight: 1}}},
		{Shapes: []placement.ProfileShape{{GPUs: 65, Weight: 1}}},
		{Shapes: []placement.ProfileShape{{GPUs: 1, Milli: 1000, Weight: 1}}},
		{Shapes: []placement.ProfileShape{{GPUs: 1, CPUMilli: -1, Weight: 1}}},
		{Shapes: []placement.ProfileShape{{GPUs: 1, Models: []int{7}, Weight: 1}}},
	}
	var v, ref placement.Solver
	require.NoError(t, v.SetProfile(tree, good))
	require.NoError(t, ref.SetProfile(tree, good))
	for i, p := range bad {
		err := v.SetProfile(tree, p)
		require.True(t, errors.Is(err, placement.ErrInvalid), "profile %d: %v", i, err)
	}
	require.True(t, errors.Is(v.SetProfile(nil, good), placement.ErrInvalid))
	// still the good profile: the same choices as a Solver that only saw it
	s := topology.NewState(tree)
	var p1, p2 placement.Plan
	for job := range topology.JobID(40) {
		req := placement.Request{Job: job, Sets: []placement.PodSet{{Pods: 1, GPUs: 1, Milli: int32(100 + 100*(job%8)), CPUMilli: 2000}}}
		ok1, _, err1 := v.Place(s, &req, &p1)
		ok2, _, err2 := ref.Place(s, &req, &p2)
		require.NoError(t, err1)
		require.NoError(t, err2)
		require.Equal(t, ok2, ok1)
		require.Equal(t, p2.Pods, p1.Pods)
		require.NoError(t, s.Apply(p1.Delta()))
	}
}

// TestProfileAllocs: a warmed-up Solver with a profile places one-pod
// requests without allocating.
func TestProfileAllocs(t *testing.T) {
	tree := loopTree(t)
	s := topology.NewState(tree)
	var v placement.Solver
	prof := &placement.Profile{Shapes: []placement.ProfileShape{
		{GPUs: 1, Milli: 500, CPUMilli: 4000, Weight: 3}, {GPUs: 2, CPUMilli: 8000, Weight: 1}}}
	require.NoError(t, v.SetProfile(tree, prof))
	var plan placement.Plan
	reqs := []placement.Request{
		{Job: 1, Sets: []placement.PodSet{{Pods: 1, GPUs: 1, Milli: 300, CPUMilli: 2000}}},
		{Job: 2, Sets: []placement.PodSet{{Pods: 1, GPUs: 2, CPUMilli: 8000}}},
		{Job: 3, Sets: []placement.PodSet{{Pods: 1, CPUMilli: 1000}}},
	}
	for i := range reqs { // warm up, with some pods in place
		ok, _, err := v.Place(s, &reqs[i], &plan)
		require.True(t, ok)
		require.NoError(t, err)
		require.NoError(t, s.Apply(plan.Delta()))
	}
	for i := range reqs {
		reqs[i].Job += 10
		allocs := testing.AllocsPerRun(50, func() {
			if ok, _, err := v.Place(s, &reqs[i], &plan); !ok || err != nil {
				t.Fatal(ok, err)
			}
		})
		require.Zero(t, allocs, "request %d", i)
	}
}
