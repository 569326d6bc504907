package preempt

import (
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
)

// TestEntryHeap compares entryHeap with a plain list searched for its least
// entry (before) on random pushes and pops: entries drawn from few values,
// so that bounds, levels and nodes tie often, and heaps of every size up to
// a few hundred, each drained.
func TestEntryHeap(t *testing.T) {
	seed := testkit.Seed(t, 1)
	rng := rand.New(rand.NewPCG(seed, 0))
	steps := testkit.Steps(t, 300)
	var h entryHeap
	var list []entry
	for range steps {
		n := rng.IntN(300)
		for k := 0; k < n || len(list) > 0; k++ { // pushes and pops, then pops until empty
			if len(list) > 0 && (k >= n || rng.IntN(3) == 0) {
				m := 0
				for i := range list {
					if list[i].before(&list[m]) {
						m = i
					}
				}
				want, got := list[m], h.pop()
				list = append(list[:m], list[m+1:]...)
				if want.before(&got) || got.before(&want) {
					t.Fatalf("seed %d: pop %+v, want %+v", seed, got, want)
				}
				continue
			}
			e := entry{
				lb:    Cost{Priority: int32(rng.IntN(3)), Victims: rng.IntN(3), Milli: int64(rng.IntN(3))},
				node:  topology.DomainID(rng.IntN(4)),
				next:  topology.DomainID(rng.IntN(3) - 1),
				level: topology.Level(rng.IntN(3)),
			}
			h.push(e)
			list = append(list, e)
		}
		if len(h) != 0 {
			t.Fatalf("seed %d: %d entries left", seed, len(h))
		}
	}
}

// TestCostLess: Less, written out for the heap's comparisons, orders costs
// as Compare does, on costs drawn from few values so that every field ties
// often.
func TestCostLess(t *testing.T) {
	seed := testkit.Seed(t, 1)
	rng := rand.New(rand.NewPCG(seed, 1))
	draw := func() Cost {
		return Cost{Priority: int32(rng.IntN(3) - 1), Victims: rng.IntN(3), Milli: int64(rng.IntN(3))}
	}
	for range testkit.Steps(t, 10000) {
		a, b := draw(), draw()
		if a.Less(b) != (a.Compare(b) < 0) {
			t.Fatalf("seed %d: %v.Less(%v) = %v, Compare %d", seed, a, b, a.Less(b), a.Compare(b))
		}
	}
}
