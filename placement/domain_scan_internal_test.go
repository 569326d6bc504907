package placement

import (
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestDomainScan compares bestDomainExact (its one-GPU and whole-host passes
// and the general one) with bestScan, which it replaces, on the children of
// every domain above the racks, after each of random steps (jobs added and
// removed, Clones, snapshot round trips), for every pod size and several pod
// counts: the same choice, ties included, and the capacity it hands to fill
// (capAt) is capOf's.
func TestDomainScan(t *testing.T) {
	seed := testkit.Seed(t, 6)
	rng := rand.New(rand.NewPCG(seed, 4))
	tr, err := topology.BuildShape(topology.Shape{Levels: []string{"block", "su", "rack"}, FanOut: []int{2, 5, 4, 3}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := topology.NewState(tr)
	var v Solver
	next := topology.JobID(0)
	var live []topology.JobID
	checks := 0
	for step := range testkit.Steps(t, 3000) {
		s = randomStep(t, rng, tr, s, &live, &next, step)
		for g := int32(1); g <= 4; g++ {
			for _, need := range []int64{1, 2, 3, 5, 8} {
				r := Request{Job: next, Sets: []PodSet{{Pods: int32(need), GPUs: g}}}
				v.begin(s, &r)
				v.setCurrent(0)
				if !v.exact {
					continue
				}
				for l := topology.Level(0); l < tr.HostLevel()-1; l++ {
					lo, hi := tr.LevelDomains(l)
					for d := lo; d < hi; d++ {
						clo, chi := v.childRange(d, l+1)
						want, wok := v.bestScan(l+1, clo, chi, need)
						v.known.level = l + 1 // as bestChild sets it
						got, gok := v.bestDomainExact(clo, chi, need)
						require.Equal(t, wok, gok, "step %d: %d pods of %d GPUs in %s", step, need, g, tr.DomainPath(d))
						if gok { // the capacity it hands to fill is capOf's
							require.Equal(t, v.capOf(l+1, got), v.capAt(l+1, got), "step %d: %d pods of %d GPUs in %s", step, need, g, tr.DomainPath(d))
						}
						require.Equal(t, want, got, "step %d: %d pods of %d GPUs in %s", step, need, g, tr.DomainPath(d))
						checks++
					}
				}
			}
		}
	}
	t.Logf("%d choices compared", checks)
}
