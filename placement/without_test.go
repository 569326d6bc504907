package placement_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestPlaceWithout checks placing as if jobs were gone against the oracle on
// the State with those jobs removed: same feasibility (single pod sets: the
// solver is exact there), plans valid there, and the scope honoured.
func TestPlaceWithout(t *testing.T) {
	seed := testSeed(t)
	n := testSteps(t, 2000)
	var v placement.Solver
	var plan placement.Plan
	checked, fits := 0, 0
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)+1<<32))
		tree := genTree(rng, 8)
		s := topology.NewState(tree)
		nominees := genLoad(rng, s)
		r := genRequest(rng, tree, nominees, reqLimits{maxPods: 10, maxGPUs: 8, maxSets: 1, policies: true})
		var live, gone []topology.JobID
		for j := range s.JobIDBound() {
			if s.HasJob(j) {
				live = append(live, j)
				if rng.IntN(2) == 0 {
					gone = append(gone, j)
				}
			}
		}
		after := s.Clone()
		for _, j := range gone {
			require.NoError(t, after.Apply(topology.Delta{Ops: []topology.Op{topology.RemoveJob(j)}}))
		}
		scope := topology.DomainID(0)
		if rng.IntN(3) == 0 {
			scope = topology.DomainID(rng.IntN(tree.NumDomains()))
		}
		before, _ := s.MarshalBinary()
		ok, _, err := v.PlaceWithout(s, r, scope, gone, &plan)
		require.NoError(t, err)
		now, _ := s.MarshalBinary()
		require.Equal(t, before, now, "PlaceWithout changed the State")
		o := newOracle(after, r)
		want := feasibleInScope(o, tree, r, scope)
		checked++
		require.Equal(t, want, ok, "instance %d (seed %d): gone %v scope %s\n%s", i, seed, gone, tree.DomainPath(scope), describe(after, r))
		if !ok {
			continue
		}
		fits++
		require.Empty(t, o.validate(&plan), "instance %d", i)
		lo, hi := tree.Hosts(scope)
		for _, p := range plan.Pods {
			require.True(t, p.Host >= lo && p.Host < hi, "pod outside scope %s", tree.DomainPath(scope))
		}
		require.NoError(t, after.Apply(plan.Delta()), "instance %d", i)
		require.NoError(t, after.Check())
		_ = slices.Contains(live, 0)
	}
	t.Logf("seed %d: %d instances, %d fit", seed, checked, fits)
}

func feasibleInScope(o *oracle, tree *topology.Tree, r *placement.Request, scope topology.DomainID) bool {
	sl := tree.DomainLevel(scope)
	if r.Required <= sl {
		return o.feasibleIn(tree.Hosts(scope))
	}
	if r.Required == tree.HostLevel() {
		lo, hi := tree.Hosts(scope)
		for h := lo; h < hi; h++ {
			if o.feasibleIn(h, h+1) {
				return true
			}
		}
		return false
	}
	lo, hi := tree.Descendants(scope, r.Required)
	for d := lo; d < hi; d++ {
		if o.feasibleIn(tree.Hosts(d)) {
			return true
		}
	}
	return false
}
