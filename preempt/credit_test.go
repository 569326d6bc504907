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

// TestCreditKeys checks the credit bound domain by domain against the
// oracle restricted to the domain, as TestSlotKeys does the slot bound:
// no leaf's bound is dearer than the cheapest victim set that fits the
// request there, and a leaf it calls infeasible has none.
func TestCreditKeys(t *testing.T) {
	seed := testSeed(t)
	n := testSteps(t, 2000)
	var p preempt.Planner
	domains, raised, prio, infeasible := 0, 0, 0, 0
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)+7<<40))
		tree := genSlotTree(rng, 16)
		s := topology.NewState(tree)
		nominees := genSlotLoad(rng, s)
		r := genSlotRequest(rng, tree, nominees)
		if r.Validate(tree) != nil {
			continue
		}
		var probe placement.Solver
		var plan placement.Plan
		if fits, _, _ := probe.Place(s, r, &plan); fits {
			continue // no victims: the search never starts
		}
		leaves, keys, oks := preempt.CreditKeys(&p, s, r)
		for k, d := range leaves {
			rd := restrictTo(r, tree, d)
			o := &oracle{s: s, r: rd, cands: inDomain(s, d, candidates(s, r.Priority))}
			if len(o.cands) > 12 {
				continue
			}
			domains++
			want, feasible := o.optimum()
			if !oks[k] {
				infeasible++
				require.False(t, feasible, "instance %d (seed %d), domain %d: the bound says infeasible, the oracle %v", i, seed, d, want)
				continue
			}
			if feasible {
				require.False(t, want.Less(keys[k]), "instance %d (seed %d), domain %d: bound %v above the optimum %v", i, seed, d, keys[k], want)
				if keys[k].Victims > 1 {
					raised++
				}
				if keys[k].Priority == want.Priority && keys[k].Victims == want.Victims && keys[k].Milli == want.Milli {
					prio++
				}
			}
		}
	}
	t.Logf("seed %d: %d domains checked, %d bounds of several victims, %d equal to the optimum, %d infeasible",
		seed, domains, raised, prio, infeasible)
}

// TestCreditOracle compares Planner.Plan with the credit bound on every
// leaf and without it with the oracle on gangs the bound applies to: the
// same feasibility, answers valid and irreducible, the optimum when proven,
// and the same cost both ways when both are proven.
func TestCreditOracle(t *testing.T) {
	seed := testSeed(t)
	n := testSteps(t, 2000)
	var with, without preempt.Planner
	preempt.SetCreditBound(&with, 1)
	preempt.SetCreditBound(&without, -1)
	var a, b preempt.Result
	checked, fits, exact := 0, 0, 0
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)+9<<40))
		tree := genSlotTree(rng, 16)
		s := topology.NewState(tree)
		nominees := genSlotLoad(rng, s)
		r := genSlotRequest(rng, tree, nominees)
		if r.Validate(tree) != nil {
			continue
		}
		o := &oracle{s: s, r: r, cands: candidates(s, r.Priority)}
		if len(o.cands) > 12 {
			continue
		}
		okA, _, errA := with.Plan(s, r, 10, 1000, &a)
		okB, _, errB := without.Plan(s, r, 10, 1000, &b)
		require.NoError(t, errA, "instance %d", i)
		require.NoError(t, errB, "instance %d", i)
		checked++
		want, feasible := o.optimum()
		require.Equal(t, feasible, okA, "instance %d (seed %d): feasibility", i, seed)
		require.Equal(t, okB, okA, "instance %d (seed %d): feasibility both ways", i, seed)
		if !okA {
			continue
		}
		fits++
		checkResult(t, s, r, &a, i)
		require.False(t, a.Cost.Less(want), "instance %d (seed %d): cheaper than the optimum", i, seed)
		require.False(t, want.Less(a.Bound), "instance %d (seed %d): bound %v above the optimum %v", i, seed, a.Bound, want)
		if a.Exact {
			exact++
			require.Equal(t, want, a.Cost, "instance %d (seed %d): exact but not optimal", i, seed)
		}
		if a.Exact && b.Exact {
			require.Equal(t, b.Cost, a.Cost, "instance %d (seed %d)", i, seed)
		}
		requireIrreducible(t, o, a.Victims, fmt.Sprintf("instance %d", i))
	}
	t.Logf("seed %d: %d gangs checked, %d fit, %d proven optimal", seed, checked, fits, exact)
}
