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

// TestSoloKey checks the single-victim bound against the least milli of a
// job holding at least the bound's, on random sets of job sizes (GPUs and
// fractions, small and up to thousands of GPUs): never above it (a valid
// bound), two victims exactly when no job is large enough, and equal to it
// unless the bound's bucket holds jobs on both sides of it.
func TestSoloKey(t *testing.T) {
	seed := testSeed(t)
	exact, some, n := 0, 0, testSteps(t, 3000)
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)+1<<46))
		millis := make([]uint64, 1+rng.IntN(40))
		for j := range millis {
			switch rng.IntN(3) {
			case 0:
				millis[j] = uint64(1 + rng.IntN(999)) // a fraction
			case 1:
				millis[j] = uint64(1+rng.IntN(80)) * 1000
			default:
				millis[j] = uint64(pick(rng, 72, 144, 576, 1000, 4608, 9216)+rng.IntN(3)) * 1000
			}
		}
		lb := preempt.Cost{Priority: 0, Victims: 1, Milli: int64(rng.IntN(10_000_000))}
		if rng.IntN(2) == 0 {
			lb.Milli = int64(millis[rng.IntN(len(millis))]) + int64(rng.IntN(3)) - 1
		}
		want := int64(-1) // the least milli of a job of at least lb.Milli
		for _, m := range millis {
			if int64(m) >= lb.Milli && (want < 0 || int64(m) < want) {
				want = int64(m)
			}
		}
		got := preempt.SoloKey(millis, lb)
		where := fmt.Sprintf("instance %d (seed %d): %v, bound %v", i, seed, millis, lb)
		if want < 0 {
			require.Equal(t, preempt.Cost{Priority: 0, Victims: 2}, got, where)
			continue
		}
		require.Equal(t, 1, got.Victims, where)
		require.LessOrEqual(t, got.Milli, want, where)
		require.GreaterOrEqual(t, got.Milli, lb.Milli, where)
		straddled := false // the bound's bucket holds a job below it
		for _, m := range millis {
			straddled = straddled || int64(m) < lb.Milli && preempt.SoloBucket(int64(m)) == preempt.SoloBucket(lb.Milli)
		}
		if !straddled {
			exact++
			require.Equal(t, want, got.Milli, where)
		}
		some++
	}
	t.Logf("seed %d: %d instances, %d with a job large enough, %d of them exact (their bucket not straddled)", seed, n, some, exact)
	require.Positive(t, exact)
}
