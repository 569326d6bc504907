package placement

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestDomainScan compares bestDomainExact (its one-GPU and whole-host passes
// and the general one) with bestScan, which it replaces, on the children of
// every domain above the racks and on every level's domains (whole or in
// part, with the whole-host index and without), after each of random steps
// (jobs added and removed, Clones, snapshot round trips), for every pod size
// and several pod counts: the same choice, ties included, and the capacity it
// hands to fill (capAt) is capOf's. Restricted requests too: hosts closed by
// a Restriction (a quarter at first, one opened or closed now and then) and
// the Restriction copied (CloneFor) with each State clone.
func TestDomainScan(t *testing.T) {
	seed := testkit.Seed(t, 6)
	steps := testkit.Steps(t, 3000)
	for _, sh := range []topology.Shape{
		{Levels: []string{"block", "su", "rack"}, FanOut: []int{2, 5, 4, 3}, GPUsPerHost: 4},
		{Levels: []string{"su", "rack"}, FanOut: []int{3, 50, 2}, GPUsPerHost: 4}, // 150 racks: bitmaps of 3 words
	} {
		for _, restricted := range []bool{false, true} {
			domainScan(t, rand.New(rand.NewPCG(seed, 4)), sh, steps, restricted)
		}
	}
}

func domainScan(t *testing.T, rng *rand.Rand, sh topology.Shape, steps int, restricted bool) {
	tr, err := topology.BuildShape(sh)
	require.NoError(t, err)
	s := topology.NewState(tr)
	var x *Restriction
	if restricted {
		x = NewRestriction(tr)
		for h := range topology.HostID(tr.NumHosts()) {
			if rng.IntN(4) == 0 {
				require.NoError(t, x.Close(h))
			}
		}
	}
	var v Solver
	next := topology.JobID(0)
	var live []topology.JobID
	checks := 0
	for step := range steps {
		was := s
		s = randomStep(t, rng, tr, s, &live, &next, step)
		if x != nil {
			if s != was {
				x = x.CloneFor(s)
			}
			if h := topology.HostID(rng.IntN(tr.NumHosts())); rng.IntN(4) == 0 && x.Closed(h) {
				require.NoError(t, x.Open(h))
			} else if rng.IntN(4) == 0 {
				require.NoError(t, x.Close(h))
			}
		}
		for g := int32(1); g <= 4; g++ {
			for _, need := range []int64{1, 2, 3, 5, 8} {
				r := Request{Job: next, Sets: []PodSet{{Pods: int32(need), GPUs: g}}}
				if x != nil {
					r.Eligible, r.Restriction = x.Eligible(), x
				}
				v.begin(s, &r)
				v.setCurrent(0)
				if !v.exact {
					continue
				}
				for l := topology.Level(0); l < tr.HostLevel()-1; l++ {
					lo, hi := tr.LevelDomains(l)
					for d := lo; d < hi; d++ {
						clo, chi := v.childRange(d, l+1)
						checks += compareScan(t, &v, l+1, clo, chi, need, "step %d: %d pods of %d GPUs in %s", step, need, g, tr.DomainPath(d))
					}
				}
				lo, hi := tr.LevelDomains(tr.HostLevel() - 1)
				for d := lo; d < hi; d++ {
					checks += compareHostScan(t, &v, d, need, "step %d: %d pods of %d GPUs in %s", step, need, g, tr.DomainPath(d))
				}
				for l := topology.Level(1); l < tr.HostLevel(); l++ { // a whole level, as requiredFast asks, and a part of it
					lo, hi := tr.LevelDomains(l)
					checks += compareScan(t, &v, l, int32(lo), int32(hi), need, "step %d: %d pods of %d GPUs at level %d", step, need, g, l)
					checks += compareScan(t, &v, l, int32(lo)+1, int32(hi)-1, need, "step %d: %d pods of %d GPUs inside level %d", step, need, g, l)
				}
			}
		}
	}
	t.Logf("%v (restricted %v): %d choices compared", sh.FanOut, restricted, checks)
}

// compareHostScan checks bestHostExact over the hosts of domain d against
// bestScan, for need pods and for more than any host holds; it returns the
// choices compared.
func compareHostScan(t *testing.T, v *Solver, d topology.DomainID, need int64, what string, args ...any) int {
	t.Helper()
	lo, hi := v.childRange(d, v.hl)
	for _, n := range []int64{need, topology.MaxHostGPUs + 1} {
		want, wok := v.bestScan(v.hl, lo, hi, n)
		if got, gok := v.bestHostExact(lo, hi, n); gok != wok || want != got {
			t.Fatalf("%s, %d pods: bestHostExact chose host %d (%v), bestScan %d (%v)",
				fmt.Sprintf(what, args...), n, got, gok, want, wok)
		}
	}
	return 2
}

// compareScan checks bestDomainExact over domains [lo, hi) of level l, with
// the whole-host index on every range and on none, against bestScan; it
// returns the choices compared.
func compareScan(t *testing.T, v *Solver, l topology.Level, lo, hi int32, need int64, what string, args ...any) int {
	t.Helper()
	want, wok := v.bestScan(l, lo, hi, need)
	for _, from := range []int32{1, math.MaxInt32} {
		v.wholeMin = from
		v.known.level = l // as bestChild sets it
		got, gok := v.bestDomainExact(lo, hi, need)
		if gok != wok || want != got || gok && v.capOf(l, got) != v.capAt(l, got) {
			t.Fatalf("%s (index from %d domains): chose %d (%v, capacity handed %d), bestScan %d (%v)",
				fmt.Sprintf(what, args...), from, got, gok, v.capAt(l, got), want, wok)
		}
	}
	v.wholeMin = 0
	return 2
}
