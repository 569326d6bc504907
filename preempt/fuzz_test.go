package preempt_test

import (
	"bytes"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// FuzzPlan is the oracle tests steered by a fuzzer: the generators draw the
// cluster, its load, nominations, faults, the request (one pod set, or a gang
// of two) and the planner's budgets from the fuzzer's bytes (testkit.Bytes).
// Every answer must leave the State unchanged, be valid (victims are
// candidates, the plan applies once they are gone, the nomination applies)
// and irreducible; for one pod set, feasibility must be the oracle's, the
// cost no cheaper than its optimum and the bound no dearer, exact answers
// and the default budgets' answers at the optimum.
//
//	go test -run '^$' -fuzz FuzzPlan -fuzztime 10m ./preempt
func FuzzPlan(f *testing.F) {
	testkit.AddSeeds(f, 48)
	configs := []preempt.Config{{}, {ExactVictims: 1}, {ExactVictims: 2, MaxScopes: 1, MaxTests: 1}, {MaxSubsets: 3}}
	f.Fuzz(func(t *testing.T, in []byte) {
		rng := testkit.Rand(in)
		cfg := configs[rng.IntN(len(configs))]
		sets := 1 + rng.IntN(2)
		tree := genTree(rng, 10)
		s := topology.NewState(tree)
		nominees := genLoad(rng, s, 6+rng.IntN(14))
		r := genRequest(rng, tree, nominees, sets)
		if r.Validate(tree) != nil {
			return
		}
		o := &oracle{s: s, r: r, cands: candidates(s, r.Priority)}
		if len(o.cands) > 14-2*(sets-1) {
			return
		}
		p := preempt.Planner{Config: cfg}
		var res preempt.Result
		before, _ := s.MarshalBinary()
		ok, why, err := p.Plan(s, r, 10, 1000, &res)
		require.NoError(t, err)
		after, _ := s.MarshalBinary()
		require.True(t, bytes.Equal(before, after), "Plan changed the State")
		if sets == 1 {
			want, feasible := o.optimum()
			require.Equal(t, feasible, ok, "config %+v: feasible %v, planner %v (%s)", cfg, feasible, ok, why.Format(tree))
			if ok {
				require.False(t, res.Cost.Less(want), "config %+v: cheaper than the optimum", cfg)
				require.False(t, want.Less(res.Bound), "config %+v: bound %v above the optimum %v", cfg, res.Bound, want)
				if res.Exact || cfg == (preempt.Config{}) {
					require.Equal(t, want, res.Cost, "config %+v (exact %v): not optimal", cfg, res.Exact)
				}
			}
		}
		if !ok {
			require.NotEqual(t, preempt.Fits, why.Code)
			require.NotEmpty(t, why.Format(tree))
			return
		}
		require.Equal(t, costOf(s, res.Victims), res.Cost)
		checkResult(t, s, r, &res, 0)
		requireIrreducible(t, o, res.Victims, "the answer")
	})
}
