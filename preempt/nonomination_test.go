package preempt_test

import (
	"testing"

	"github.com/blinksched/blink/preempt"
	"github.com/stretchr/testify/require"
)

// TestNoNomination: with Config.NoNomination a Plan answers the same (found
// or not, reason, victims, placement, cost, bound, scope, counts) and
// leaves the nomination, the displaced jobs and the Delta empty.
func TestNoNomination(t *testing.T) {
	seed := testSeed(t)
	var with, without preempt.Planner
	without.Config.NoNomination = true
	var a, b preempt.Result
	answers := 0
	for i := range testSteps(t, 1000) {
		s, r := slotInstance(seed, i, 13<<40)
		if r == nil {
			continue
		}
		okA, whyA, errA := with.Plan(s, r, 5, 50, &a)
		okB, whyB, errB := without.Plan(s, r, 5, 50, &b)
		require.Equal(t, errA, errB, "instance %d (seed %d)", i, seed)
		require.Equal(t, okA, okB, "instance %d (seed %d)", i, seed)
		require.Equal(t, whyA, whyB, "instance %d (seed %d)", i, seed)
		if !okA {
			continue
		}
		require.Empty(t, b.Nomination.GPUs, "instance %d (seed %d)", i, seed)
		require.Empty(t, b.Displaced, "instance %d (seed %d)", i, seed)
		require.Empty(t, b.Delta().Ops, "instance %d (seed %d)", i, seed)
		if len(a.Victims) > 0 {
			answers++
		}
		require.Equal(t, a.Victims, b.Victims, "instance %d (seed %d)", i, seed)
		require.Equal(t, a.Plan, b.Plan, "instance %d (seed %d)", i, seed)
		require.Equal(t, [5]any{a.Cost, a.Exact, a.Bound, a.Scope, a.Tests}, [5]any{b.Cost, b.Exact, b.Bound, b.Scope, b.Tests},
			"instance %d (seed %d)", i, seed)
		require.Equal(t, a.Scopes, b.Scopes, "instance %d (seed %d)", i, seed)
	}
	t.Logf("seed %d: %d answers with victims compared", seed, answers)
	require.Positive(t, answers)
}
