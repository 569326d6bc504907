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

// TestShortcutsSameAnswer: the Solver with its shortcuts (plainCap, the
// one-pod descent, requiredFast and requiredFrac, the fractional and
// whole-host scans, the released-jobs fills) and without them (SetLegacy)
// give the same answer — fit, reason, every pod, the domain — on random
// trees and loads, for random requests (a quarter of them one fractional
// set required in a domain, half of those plain: requiredFrac's case), with
// and without jobs gone. Each fitting plan is applied, and Check runs after.
func TestShortcutsSameAnswer(t *testing.T) {
	seed := testkit.Seed(t, 1)
	rng := rand.New(rand.NewPCG(seed, 0x73686f72))
	n := testkit.Steps(t, 600)
	compared, fits := 0, 0
	for inst := range n {
		tree := genTree(rng, 24)
		if tree.NumGPUs() == 0 {
			continue
		}
		s := topology.NewState(tree)
		nominees := genLoad(rng, s)
		var fast, slow placement.Solver
		slow.SetLegacy(true)
		var pf, ps placement.Plan
		for step := range 20 {
			r := genRequest(rng, tree, nominees, reqLimits{maxPods: 12, maxGPUs: 8, maxSets: 2, policies: true})
			if rng.IntN(4) == 0 && tree.HostLevel() > 1 { // one fractional set required in a domain, mostly plain
				r.Sets = []placement.PodSet{{Pods: int32(1 + rng.IntN(12)), GPUs: 1, Milli: pick[int32](rng, 250, 300, 500, 700)}}
				r.Required, r.Preferred = topology.Level(1+rng.IntN(int(tree.HostLevel())-1)), topology.NoLevel
				if rng.IntN(2) == 0 {
					r.Policy, r.Models, r.Eligible, r.Restriction, r.Exclusive = placement.BestFit, nil, nil, nil, false
				}
			}
			r.Job = topology.JobID(1000 + step)
			var gone []topology.JobID
			if rng.IntN(4) == 0 {
				if id := topology.JobID(rng.IntN(7)); s.HasJob(id) {
					gone = []topology.JobID{id}
				}
			}
			where := fmt.Sprintf("instance %d step %d (seed %d): %+v gone %v", inst, step, seed, r, gone)
			compared++
			if sameAnswer(t, s, r, gone, &fast, &slow, &pf, &ps, where) && len(gone) == 0 {
				fits++
			}
		}
	}
	t.Logf("%d requests compared, %d fits applied", compared, fits)
	require.Positive(t, fits)
}

// sameAnswer places r with jobs gone by fast and by slow and requires the
// same error, fit, reason, pods, host and domain; with no job gone, a plan
// that fits is applied and the State checked. It reports whether r fit.
func sameAnswer(t *testing.T, s *topology.State, r *placement.Request, gone []topology.JobID,
	fast, slow *placement.Solver, pf, ps *placement.Plan, where string) bool {
	t.Helper()
	okF, whyF, errF := fast.PlaceWithout(s, r, 0, gone, pf)
	okS, whyS, errS := slow.PlaceWithout(s, r, 0, gone, ps)
	require.Equal(t, errS, errF, where)
	require.Equal(t, okS, okF, where)
	require.Equal(t, whyS, whyF, where)
	if !okS {
		return false
	}
	require.Equal(t, ps.Pods, pf.Pods, where)
	require.Equal(t, ps.Domain, pf.Domain, where)
	require.Equal(t, ps.Host, pf.Host, where)
	if len(gone) == 0 {
		require.NoError(t, s.Apply(pf.Delta()), where)
		require.NoError(t, s.Check(), where)
	}
	return true
}
