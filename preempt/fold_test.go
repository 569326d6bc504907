package preempt_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestFoldingOracle compares Planner.Plan with dead hosts folded into the
// model's rest (the default) against the same Planner modelling every host
// (the simple form), on random clusters with more candidates than the
// exhaustive oracle takes, so that the greedy answers too: the same
// feasibility, both answers valid and irreducible, each no cheaper than the
// other's bound (both bounds hold for the optimum), and the same cost where
// both are proven optimal.
func TestFoldingOracle(t *testing.T) {
	seed := testSeed(t)
	n := testSteps(t, 3000)
	var folded, plain preempt.Planner
	preempt.SetFolding(&plain, false)
	cfg := preempt.Config{ExactVictims: 3} // force greedy answers often
	var a, b preempt.Result
	checked, fits, victims, exact := 0, 0, 0, 0
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)+1<<41))
		tree := genTree(rng, 24)
		s := topology.NewState(tree)
		nominees := genLoad(rng, s, 10+rng.IntN(40))
		r := genRequest(rng, tree, nominees, 1)
		if r.Validate(tree) != nil {
			continue
		}
		folded.Config, plain.Config = preempt.Config{}, preempt.Config{}
		if i%2 == 1 {
			folded.Config, plain.Config = cfg, cfg
		}
		okA, _, errA := folded.Plan(s, r, 10, 1000, &a)
		okB, _, errB := plain.Plan(s, r, 10, 1000, &b)
		require.NoError(t, errA, "instance %d", i)
		require.NoError(t, errB, "instance %d", i)
		require.Zero(t, preempt.Fallbacks(&folded), "instance %d: model and placement disagreed", i)
		checked++
		require.Equal(t, okB, okA, "instance %d (seed %d): feasibility", i, seed)
		if !okA {
			continue
		}
		fits++
		if len(a.Victims) > 0 {
			victims++
		}
		require.False(t, a.Cost.Less(b.Bound), "instance %d (seed %d): folded %v below the bound %v", i, seed, a.Cost, b.Bound)
		require.False(t, b.Cost.Less(a.Bound), "instance %d (seed %d): plain %v below the folded bound %v", i, seed, b.Cost, a.Bound)
		if a.Exact && b.Exact {
			exact++
			require.Equal(t, b.Cost, a.Cost, "instance %d (seed %d)", i, seed)
		}
		checkResult(t, s, r, &a, i)
		o := &oracle{s: s, r: r}
		requireIrreducible(t, o, a.Victims, fmt.Sprintf("instance %d", i))
	}
	t.Logf("seed %d: %d instances, %d fit (%d with victims), %d proven optimal both ways and equal", seed, checked, fits, victims, exact)
}
