package placement

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestPlainSameAnswer: the shortcuts for plain pod sets with overlays in
// play (plainCap, noHostHolds, the sorts choose skips, the released
// overlays installRel keeps) give the same answer — fit, reason and every
// pod — as the general paths (Solver.legacy), on random clusters of two
// domain levels whose host counts cross 64-host words, random loads (shared
// GPUs, CPU and memory, exclusive jobs, failed GPUs, draining hosts,
// nominations), random jobs gone and random requests, most of them plain.
func TestPlainSameAnswer(t *testing.T) {
	seed := testkit.Seed(t, 1)
	var fast, slow Solver
	slow.legacy = true
	var pf, ps Plan
	fits := 0
	n := testkit.Steps(t, 1500)
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)+1<<45))
		s, gone := genPlainState(t, rng)
		r := genPlainRequest(rng, s.Tree())
		if r.Validate(s.Tree()) != nil {
			continue
		}
		scope := topology.DomainID(0)
		if rng.IntN(4) == 0 {
			scope = topology.DomainID(rng.IntN(s.Tree().NumDomains()))
		}
		for _, g := range [][]topology.JobID{gone, gone, nil} { // the same jobs twice: installRel finds the overlays in place
			if requireSameWithout(t, &fast, &slow, s, r, scope, g, &pf, &ps, fmt.Sprintf("instance %d (seed %d)", i, seed)) {
				fits++
			}
		}
	}
	t.Logf("%d instances, %d fits compared", n, fits)
}

// requireSameWithout places r in scope as if the jobs gone were gone with
// both Solvers (into pf and ps) and requires the same answer — error, fit,
// reason, every pod, the domain; what names the instance. So does fast
// given the jobs' pods (PlaceWithoutPods, the jobs in reverse order). It
// reports whether r fits.
func requireSameWithout(t *testing.T, fast, slow *Solver, s *topology.State, r *Request, scope topology.DomainID,
	gone []topology.JobID, pf, ps *Plan, what string) bool {
	t.Helper()
	okF, whyF, errF := fast.PlaceWithout(s, r, scope, gone, pf)
	okS, whyS, errS := slow.PlaceWithout(s, r, scope, gone, ps)
	requireSameAnswer(t, r, gone, okS, okF, whyS, whyF, errS, errF, ps, pf, what)
	rev := slices.Clone(gone)
	slices.Reverse(rev)
	pods := s.AppendJobsPods(nil, rev, make([]int32, len(rev)))
	var pg Plan
	okG, whyG, errG := fast.PlaceWithoutPods(s, r, scope, gone, pods, &pg)
	requireSameAnswer(t, r, gone, okS, okG, whyS, whyG, errS, errG, ps, &pg, what+", given the pods")
	return okS
}

// requireSameAnswer requires answer b (ok, why, err, plan) to be answer a.
func requireSameAnswer(t *testing.T, r *Request, gone []topology.JobID, okA, okB bool, whyA, whyB Reason, errA, errB error,
	pa, pb *Plan, what string) {
	t.Helper()
	require.Equal(t, errA, errB, what)
	require.Equal(t, okA, okB, "%s: %+v", what, r)
	require.Equal(t, whyA, whyB, "%s: %+v", what, r)
	if okA {
		require.Equal(t, pa.Pods, pb.Pods, "%s: %+v gone %v", what, r, gone)
		require.Equal(t, pa.Domain, pb.Domain, what)
	}
}

// genPlainState draws a loaded cluster of blocks and racks (host counts at
// and across word edges) and a set of its jobs to treat as gone.
func genPlainState(t *testing.T, rng *rand.Rand) (*topology.State, []topology.JobID) {
	perHost := []int{1, 2, 4, 8, 64}[rng.IntN(5)]
	fan := [][3]int{{1, 2, 32}, {2, 2, 16}, {1, 1, 65}, {3, 3, 15}, {2, 4, 17}, {1, 3, 43}}[rng.IntN(6)]
	tr, err := topology.BuildShape(topology.Shape{Levels: []string{"block", "rack"}, FanOut: fan[:],
		GPUsPerHost: perHost, CPUMilli: 64000, MemoryMiB: 1 << 20})
	require.NoError(t, err)
	s := topology.NewState(tr)
	var live []topology.JobID
	jobs := tr.NumHosts() * (1 + rng.IntN(3)) / 2
	for j := range topology.JobID(jobs) {
		info := topology.Job{Priority: int32(rng.IntN(4)), Preemptible: true, Exclusive: rng.IntN(16) == 0}
		var pods []topology.Pod
		for range 1 + rng.IntN(4) {
			if p, ok := genReleasePod(rng, s, pods); ok {
				if rng.IntN(2) == 0 {
					p.CPUMilli, p.MemoryMiB = 0, 0
				}
				pods = append(pods, p)
			}
		}
		if len(pods) > 0 && s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(j, info, pods...)}}) == nil {
			live = append(live, j)
		}
	}
	for range rng.IntN(4) {
		g := topology.GPUID(rng.IntN(tr.NumGPUs()))
		_ = s.Apply(topology.Delta{Ops: []topology.Op{topology.SetGPUHealth(g, topology.Failed)}})
	}
	for range rng.IntN(3) {
		h := topology.HostID(rng.IntN(tr.NumHosts()))
		_ = s.Apply(topology.Delta{Ops: []topology.Op{topology.SetHostHealth(h, topology.Draining)}})
	}
	if rng.IntN(3) == 0 {
		g := topology.GPUID(rng.IntN(tr.NumGPUs()))
		_ = s.Apply(topology.Delta{Ops: []topology.Op{topology.Nominate(topology.Nomination{Job: topology.JobID(jobs + 10),
			Priority: int32(rng.IntN(6)), Ready: 5, Expiry: 50, GPUs: []topology.GPUID{g}})}})
	}
	require.NoError(t, s.Check())
	var gone []topology.JobID
	keep := rng.IntN(4)
	for _, j := range live {
		if rng.IntN(4) >= keep {
			gone = append(gone, j)
		}
	}
	return s, gone
}

// genPlainRequest draws a request: mostly plain pod sets (whole GPUs,
// nothing else), sometimes two sets, slices, CPU, a fraction or
// exclusivity; random required and preferred levels and policy.
func genPlainRequest(rng *rand.Rand, tr *topology.Tree) *Request {
	hl := tr.HostLevel()
	maxG := tr.MaxHostGPUs()
	r := &Request{Job: 1 << 20, Priority: int32(rng.IntN(8)), Policy: Policy(rng.IntN(3))}
	if rng.IntN(3) == 0 {
		r.Required = topology.Level(rng.IntN(int(hl) + 1))
	}
	if rng.IntN(2) == 0 {
		r.Preferred = topology.Level(1 + rng.IntN(int(hl)))
	}
	r.Exclusive = rng.IntN(10) == 0
	for range 1 + rng.IntN(2) {
		g := []int{1, 2, maxG / 2, maxG}[rng.IntN(4)]
		set := PodSet{Pods: 1 + int32(rng.IntN(tr.NumHosts()*maxG/max(g, 1)/2+2)), GPUs: int32(max(g, 1))}
		switch rng.IntN(10) {
		case 0:
			set.CPUMilli = 1000
		case 1:
			set.GPUs, set.Milli = 1, 500
		case 2:
			set.SliceSize, set.SliceLevel = 2, hl-1
			set.Pods += set.Pods % 2
		}
		r.Sets = append(r.Sets, set)
	}
	return r
}
