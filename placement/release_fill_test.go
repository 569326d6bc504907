package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestLoadedReleaseSameAnswer: on nearly full clusters (racks the State
// alone gives nothing, so released hosts hold all the room: fillReleased and
// the other shortcuts for released hosts), with many jobs of whole hosts
// gone, the answer — fit, reason and every pod — is the general paths'
// (Solver.legacy). Requests are mostly whole-host pods at a preferred level,
// sometimes smaller pods, two sets, a fraction or CPU.
func TestLoadedReleaseSameAnswer(t *testing.T) {
	seed := testkit.Seed(t, 1)
	var fast, slow Solver
	slow.legacy = true
	var pf, ps Plan
	fits := 0
	n := testkit.Steps(t, 1000)
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)+1<<46))
		s, gone := genLoadedState(t, rng)
		r := genLoadedRequest(rng, s.Tree())
		if r.Validate(s.Tree()) != nil {
			continue
		}
		for _, g := range [][]topology.JobID{gone, gone} { // the second call finds the overlays in place
			if requireSameWithout(t, &fast, &slow, s, r, 0, g, &pf, &ps, fmt.Sprintf("instance %d (seed %d)", i, seed)) {
				fits++
			}
		}
	}
	t.Logf("%d instances, %d fits compared (seed %d)", n, fits, seed)
	require.Greater(t, fits, n/4, "too few fits to compare")
}

// genLoadedState draws a cluster of blocks, SUs and racks, nearly every
// host used: most by one job's pod of the whole host (jobs of several
// hosts), some by smaller pods, a few left free or partly free; now and
// then a failed GPU or a draining host. About half the jobs are gone.
func genLoadedState(t *testing.T, rng *rand.Rand) (*topology.State, []topology.JobID) {
	perHost := []int{2, 4, 8}[rng.IntN(3)]
	fan := []int{1 + rng.IntN(3), 1 + rng.IntN(4), 1 + rng.IntN(4), 1 + rng.IntN(9)}
	tr, err := topology.BuildShape(topology.Shape{Levels: []string{"block", "su", "rack"}, FanOut: fan,
		GPUsPerHost: perHost, CPUMilli: 64000, MemoryMiB: 1 << 20})
	require.NoError(t, err)
	s := topology.NewState(tr)
	all := uint64(1)<<uint(perHost) - 1
	var live []topology.JobID
	j := topology.JobID(0)
	for h := topology.HostID(0); int(h) < tr.NumHosts(); {
		var pods []topology.Pod
		for range 1 + rng.IntN(4) { // a job of a few consecutive hosts
			if int(h) >= tr.NumHosts() {
				break
			}
			cpu, mem := int32(1000*rng.IntN(3)), int32(1024*rng.IntN(3))
			switch k := rng.IntN(16); {
			case k == 0: // left free
			case k == 1: // partly free
				pods = append(pods, topology.Pod{Host: h, GPUs: 1, CPUMilli: cpu})
			case k == 2: // two smaller pods
				pods = append(pods, topology.Pod{Host: h, GPUs: all >> uint(perHost/2), CPUMilli: 500, MemoryMiB: mem},
					topology.Pod{Host: h, GPUs: all &^ (all >> uint(perHost/2)), CPUMilli: cpu, MemoryMiB: mem})
			default:
				pods = append(pods, topology.Pod{Host: h, GPUs: all, CPUMilli: cpu, MemoryMiB: mem})
			}
			h++
		}
		info := topology.Job{Priority: 1, Preemptible: true}
		if len(pods) > 0 && s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(j, info, pods...)}}) == nil {
			live = append(live, j)
		}
		j++
	}
	if rng.IntN(4) == 0 {
		g := topology.GPUID(rng.IntN(tr.NumGPUs()))
		_ = s.Apply(topology.Delta{Ops: []topology.Op{topology.SetGPUHealth(g, topology.Failed)}})
	}
	if rng.IntN(4) == 0 {
		h := topology.HostID(rng.IntN(tr.NumHosts()))
		_ = s.Apply(topology.Delta{Ops: []topology.Op{topology.SetHostHealth(h, topology.Draining)}})
	}
	require.NoError(t, s.Check())
	var gone []topology.JobID
	for _, j := range live {
		if rng.IntN(2) == 0 {
			gone = append(gone, j)
		}
	}
	return s, gone
}

// genLoadedRequest draws mostly whole-host pods at a random preferred level,
// as many as a fraction of the hosts; sometimes half-host pods, a second
// set, a fractional, CPU or memory set, exclusivity, a required level or
// another policy.
func genLoadedRequest(rng *rand.Rand, tr *topology.Tree) *Request {
	hl := tr.HostLevel()
	maxG := int32(tr.MaxHostGPUs())
	r := &Request{Job: 1 << 20, Priority: 2, Preferred: topology.Level(1 + rng.IntN(int(hl)))}
	if rng.IntN(4) == 0 {
		r.Policy = Policy(rng.IntN(3))
	}
	if rng.IntN(8) == 0 {
		r.Required = topology.Level(rng.IntN(int(hl)))
	}
	r.Exclusive = rng.IntN(10) == 0
	set := PodSet{Pods: 1 + int32(rng.IntN(tr.NumHosts()/2+1)), GPUs: maxG}
	if rng.IntN(4) == 0 {
		set.GPUs = maxG / 2
	}
	r.Sets = append(r.Sets, set)
	switch rng.IntN(8) {
	case 0:
		r.Sets = append(r.Sets, PodSet{Pods: 1 + int32(rng.IntN(3)), GPUs: 1})
	case 1:
		r.Sets = append(r.Sets, PodSet{Pods: 1 + int32(rng.IntN(3)), GPUs: 1, Milli: 500})
	case 2:
		r.Sets[0].CPUMilli = 1000
	case 3:
		r.Sets[0].MemoryMiB = 1024
	}
	return r
}

// TestReleaseWholeOracle compares the released hosts' entries built in one
// pass (buildWhole: whole-GPU pods, every GPU shareable, no fraction or
// exclusivity asked) and the relGain sums against releaseOracle's, on
// loaded clusters (pods with CPU and memory, several on some hosts).
func TestReleaseWholeOracle(t *testing.T) {
	seed := testkit.Seed(t, 1)
	var v Solver
	built := 0
	for i := range testkit.Steps(t, 500) {
		rng := rand.New(rand.NewPCG(seed, uint64(i)+1<<47))
		s, gone := genLoadedState(t, rng)
		r := genLoadedRequest(rng, s.Tree())
		v.begin(s, r)
		v.release(gone)
		want, wantMilli := releaseOracle(&v, s, gone)
		checkRel(t, &v, want, fmt.Sprintf("instance %d (seed %d)", i, seed))
		checkRelMilli(t, &v, wantMilli)
		checkRelGain(t, &v, rng, want)
		if v.relAll && !v.fracs && !r.Exclusive && len(v.relOrder) > 0 {
			built++
		}
	}
	t.Logf("%d builds of whole-GPU entries checked (seed %d)", built, seed)
	require.Positive(t, built)
}

// TestSparseReleaseSameAnswer: a few jobs gone on a large full cluster (a
// sparse release: their hosts listed without a bitmap, found through the
// overlays' stamps), and a request whose pods share a released host (so
// the fill assigns to it through its overlay), answered as the general paths
// (Solver.legacy) answer, attempt after attempt.
func TestSparseReleaseSameAnswer(t *testing.T) {
	tree, err := topology.BuildShape(topology.NVL72(1))
	require.NoError(t, err)
	s := topology.NewState(tree)
	var ops []topology.Op
	for h := range topology.HostID(tree.NumHosts()) {
		if h == 5 || h == 700 {
			continue // job 0 holds them
		}
		ops = append(ops, topology.AddJob(topology.JobID(h)+1, topology.Job{Priority: 5}, topology.Pod{Host: h, GPUs: 0xF}))
	}
	ops = append(ops, topology.AddJob(0, topology.Job{Priority: 1, Preemptible: true},
		topology.Pod{Host: 5, GPUs: 0xF}, topology.Pod{Host: 700, GPUs: 0xF}))
	require.NoError(t, s.Apply(topology.Delta{Ops: ops}))
	var fast, slow Solver
	slow.legacy = true
	var pf, ps Plan
	gone := []topology.JobID{0}
	for _, r := range []*Request{
		{Job: 9000, Sets: []PodSet{{Pods: 4, GPUs: 2}}},
		{Job: 9000, Sets: []PodSet{{Pods: 2, GPUs: 2}, {Pods: 4, GPUs: 1}}},
		{Job: 9000, Sets: []PodSet{{Pods: 8, GPUs: 1}}},
		{Job: 9000, Sets: []PodSet{{Pods: 3, GPUs: 2}}},
	} {
		for range 2 { // the second call finds the overlays in place
			require.True(t, requireSameWithout(t, &fast, &slow, s, r, 0, gone, &pf, &ps, fmt.Sprint(r.Sets)), "%v", r.Sets)
		}
	}
}
