package placement_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestGangHostSameAnswer: refusing the hosts a gang of several pod sets
// required on one host cannot fit (hostHoldsGang), or the domains when it
// is required in one (domHoldsGang), changes no answer — fit, reason, every
// pod, the domain — on random trees and loads (shared GPUs, CPU and memory,
// exclusive jobs, nominations, failures), with and without jobs gone, for
// gangs of 2–3 sets of whole GPUs, fractions and CPU-only pods (mostly
// fractions, where the bound refuses most), under every policy (BestFit
// scans hosts in passes by free GPUs, each stopping at a host none of the
// pass that holds the gang comes before, FirstFit stops at the first; both
// scan on when it does not hold the gang). Each fitting plan is applied,
// and Check runs after.
func TestGangHostSameAnswer(t *testing.T) {
	seed := testkit.Seed(t, 1)
	rng := rand.New(rand.NewPCG(seed, 0x67616e67))
	n := testkit.Steps(t, 1000)
	compared, fits, tooLarge, cut := 0, 0, 0, 0
	for inst := range n {
		tree := genTree(rng, 24)
		if tree.NumGPUs() == 0 {
			continue
		}
		s := topology.NewState(tree)
		nominees := genLoad(rng, s)
		var fast, slow placement.Solver
		slow.SetNoGangBound(true)
		var pf, ps placement.Plan
		for step := range 20 {
			r := gangHostRequest(rng, tree, nominees)
			r.Job = topology.JobID(1000 + step)
			var gone []topology.JobID
			if rng.IntN(3) == 0 {
				gone = []topology.JobID{topology.JobID(rng.IntN(7))}
				if !s.HasJob(gone[0]) {
					gone = nil
				}
			}
			where := fmt.Sprintf("instance %d step %d (seed %d): %+v gone %v", inst, step, seed, r, gone)
			okF, whyF, errF := fast.PlaceWithout(s, r, 0, gone, &pf)
			okS, whyS, errS := slow.PlaceWithout(s, r, 0, gone, &ps)
			require.Equal(t, errS, errF, where)
			require.Equal(t, okS, okF, where)
			compared++
			switch whyF.Code {
			case placement.GangHostTooSmall, placement.HostCPUTooSmall, placement.HostMemoryTooSmall: // refused before any search
				if whyF.Code == placement.GangHostTooSmall || whyF.Set < 0 { // the sets' sums: a gang bound
					tooLarge++
					require.Greater(t, whyF.Need, whyF.Have, where)
					continue
				}
			case placement.GangHost: // refused from free counts, with no host that holds the primary set left
				cut++
				require.Contains(t, []placement.ReasonCode{placement.GangSets, placement.RequiredLevel}, whyS.Code, where)
				require.Positive(t, whyF.Need, where)
				require.Contains(t, whyF.Format(tree), "no host holds the pod sets together", where)
				continue
			}
			require.Equal(t, whyS, whyF, where)
			if !okS || len(gone) > 0 {
				continue
			}
			fits++
			require.Equal(t, ps.Pods, pf.Pods, where)
			require.Equal(t, ps.Domain, pf.Domain, where)
			require.NoError(t, s.Apply(pf.Delta()), where)
			require.NoError(t, s.Check(), where)
		}
	}
	t.Logf("%d requests compared, %d fits applied, %d too large for any host, %d refused from free counts",
		compared, fits, tooLarge, cut)
	require.Positive(t, fits)
	require.Positive(t, tooLarge)
	require.Positive(t, cut)
}

// TestGangHostTooSmall: gangs of several pods (of one set or several)
// required on one host that no host holds even when all its GPUs are free
// are refused with the GPUs they need, and a gang that packs exactly into
// the largest host is placed.
func TestGangHostTooSmall(t *testing.T) {
	var hosts []topology.HostSpec
	for i := range 4 {
		hosts = append(hosts, topology.HostSpec{Name: fmt.Sprintf("h%d", i), Path: []string{"r0"}, GPUs: 4,
			CPUMilli: topology.Unlimited, MemoryMiB: topology.Unlimited})
	}
	tree, err := topology.BuildHosts([]string{"rack"}, hosts)
	require.NoError(t, err)
	s := topology.NewState(tree)
	frac := func(ps ...int32) *placement.Request {
		r := &placement.Request{Job: 1, Required: tree.HostLevel(), Preferred: topology.NoLevel}
		for i := 0; i < len(ps); i += 2 {
			r.Sets = append(r.Sets, placement.PodSet{Pods: ps[i], GPUs: 1, Milli: ps[i+1]})
		}
		return r
	}
	var v placement.Solver
	var plan placement.Plan
	for _, tc := range []struct {
		r    *placement.Request
		need int64
	}{
		{frac(8, 400, 8, 300), 6}, // 400+300+300 four times, 400+400 twice
		{frac(3, 600, 3, 500), 5}, // the 600s alone, the 500s in pairs
		{&placement.Request{Job: 1, Required: tree.HostLevel(), Preferred: topology.NoLevel,
			Sets: []placement.PodSet{{Pods: 3, GPUs: 1}, {Pods: 3, GPUs: 1, Milli: 600}}}, 6},
		// One pod set of several pods on one host: the same sums.
		{&placement.Request{Job: 1, Required: tree.HostLevel(), Preferred: topology.NoLevel,
			Sets: []placement.PodSet{{Pods: 2, GPUs: 4}}}, 8},
		{frac(9, 500), 5}, // two halves a GPU, and one more
	} {
		ok, why, err := v.Place(s, tc.r, &plan)
		require.NoError(t, err)
		require.False(t, ok)
		require.Equal(t, placement.Reason{Code: placement.GangHostTooSmall, Have: 4, Need: tc.need}, why, "%+v", tc.r.Sets)
		require.Contains(t, why.Format(tree), "need a host of")
	}
	ok, why, err := v.Place(s, frac(4, 400, 4, 300), &plan)
	require.NoError(t, err)
	require.True(t, ok, why.Format(tree))
	require.NoError(t, s.Apply(plan.Delta()))
	require.NoError(t, s.Check())
}

// gangHostRequest is a gang of 2–3 pod sets (now and then one) of 1–4 pods
// required on one host (sometimes one domain), its sets mostly fractional,
// under a random policy.
func gangHostRequest(rng *rand.Rand, t *topology.Tree, nominees []topology.JobID) *placement.Request {
	r := &placement.Request{Required: t.HostLevel(), Preferred: topology.NoLevel, Priority: int32(rng.IntN(22)) - 1,
		Policy: pick(rng, placement.BestFit, placement.BestFit, placement.FirstFit, placement.Spread)}
	if rng.IntN(4) == 0 && t.HostLevel() > 1 { // a domain instead (domHoldsGang)
		r.Required = topology.Level(1 + rng.IntN(int(t.HostLevel())-1))
	}
	if len(nominees) > 0 && rng.IntN(3) == 0 {
		r.Job = pick(rng, nominees...)
	}
	r.Exclusive = rng.IntN(7) == 0
	n := 2 + rng.IntN(2)
	if rng.IntN(5) == 0 {
		n = 1 // one set: Spread's stop (spreadTops)
	}
	for range n {
		set := genSet(rng, t, r.Required, int32(1+rng.IntN(4)), max(t.MaxHostGPUs(), 1))
		if rng.IntN(4) > 0 { // slices now and then (a host counts whole slices)
			set.SliceSize, set.SliceLevel = 0, 0
		}
		if rng.IntN(3) > 0 {
			set.GPUs, set.Milli = 1, pick[int32](rng, 200, 300, 400, 500, 600, 700, int32(1+rng.IntN(999)))
			if rng.IntN(2) == 0 {
				set.CPUMilli, set.MemoryMiB = 0, 0
			}
		}
		r.Sets = append(r.Sets, set)
	}
	return r
}
