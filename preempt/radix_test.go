package preempt

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
)

// TestSortGPUs compares sortGPUs (radix above 256 ids, a bitmap for many
// ids in a small span) with slices.Sort on random inputs of sizes around the
// switches and above, duplicates dropped.
func TestSortGPUs(t *testing.T) {
	seed := testkit.Seed(t, 1)
	var p Planner
	for i := range testkit.Steps(t, 200) {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		n := pickSize(rng)
		g := make([]topology.GPUID, n)
		span := 1 + rng.IntN(1<<uint(1+rng.IntN(24)))
		for k := range g {
			g[k] = topology.GPUID(rng.IntN(span))
		}
		want := slices.Clone(g)
		slices.Sort(want)
		if got := p.sortGPUs(g, span); !slices.Equal(slices.Compact(want), slices.Compact(got)) {
			t.Fatalf("seed %d, instance %d (%d ids below %d): radix order differs", seed, i, n, span)
		}
	}
}

func pickSize(rng *rand.Rand) int {
	switch rng.IntN(3) {
	case 0:
		return rng.IntN(300)
	case 1:
		return 255 + rng.IntN(3)
	}
	return rng.IntN(5000)
}
