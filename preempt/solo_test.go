package preempt_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestSoloSameAnswer compares Planner.Plan with and without the
// single-victim bound (solo.go) on busy clusters too large for the oracle
// (half of them packed clusters of uniform hosts in racks and blocks), for
// requests of one or two pod sets, whole GPUs and fractions, required at
// every level (a quarter of them fractions in a rack, where many leaves
// share their bound and the credit bound does not apply): the same feasibility; where the search without the bound
// proves its answer, the one with it proves one of the same cost (which of
// equal-cost answers the search meets first may differ: a raised leaf is
// met later); neither below the other's bound; each answer valid and
// irreducible.
func TestSoloSameAnswer(t *testing.T) {
	seed := testSeed(t)
	n := testSteps(t, 1500)
	var solo, plain preempt.Planner
	preempt.SetSolo(&plain, false)
	var a, b preempt.Result
	checked, both, victims, fewer := 0, 0, 0, 0
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)+1<<44))
		tree := genTree(rng, 40)
		if i%2 == 1 {
			tree = genUniform(rng, 40)
		}
		s := topology.NewState(tree)
		genTiled(rng, s, i%2 == 1)
		r := genRequest(rng, tree, nil, 1+rng.IntN(2))
		if i%4 == 3 && tree.HostLevel() > 1 { // fractions required in a last-level domain: the leaves share their bound
			r.Required, r.Preferred = tree.HostLevel()-1, topology.NoLevel
			r.Sets = r.Sets[:1]
			r.Sets[0] = placement.PodSet{Pods: int32(2 + rng.IntN(7)), GPUs: 1, Milli: pick[int32](rng, 250, 500, 750)}
		}
		if r.Validate(tree) != nil {
			continue
		}
		where := fmt.Sprintf("instance %d (seed %d): %+v", i, seed, r)
		okA, _, errA := solo.Plan(s, r, 10, 1000, &a)
		okB, _, errB := plain.Plan(s, r, 10, 1000, &b)
		require.NoError(t, errA, where)
		require.NoError(t, errB, where)
		require.Zero(t, preempt.Fallbacks(&solo), where)
		checked++
		require.Equal(t, okB, okA, where)
		if !okA {
			continue
		}
		require.False(t, a.Cost.Less(b.Bound), "%s: %v below the bound %v without solo", where, a.Cost, b.Bound)
		require.False(t, b.Cost.Less(a.Bound), "%s: %v below the bound %v with solo", where, b.Cost, a.Bound)
		if b.Exact {
			both++
			require.True(t, a.Exact, where)
			require.Equal(t, b.Cost, a.Cost, where) // which of equal-cost answers comes first may differ: raised leaves are met later
		}
		if a.Scopes < b.Scopes {
			fewer++
		}
		if len(a.Victims) > 0 {
			victims++
		}
		checkResult(t, s, r, &a, i)
		requireIrreducible(t, &oracle{s: s, r: r}, a.Victims, where)
	}
	t.Logf("seed %d: %d instances, %d with victims, %d proven without the bound and the same with it, %d searched fewer scopes",
		seed, checked, victims, both, fewer)
	require.Positive(t, fewer, "the bound never applied")
}
