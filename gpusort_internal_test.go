package blink

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestSortGPUs compares sortGPUs with slices.Sort then slices.Compact on
// random lists: short ones, long ones in a dense range (the bitmap), long
// ones spread wide (the comparison sort), with repeats, in host order
// shuffled by runs as plans give them, and at word edges; one engine for
// all, so that its bitmap is reused.
func TestSortGPUs(t *testing.T) {
	seed := testkit.Seed(t, 1)
	rng := rand.New(rand.NewPCG(seed, 0x67707573))
	e := &Engine{}
	bitmap := 0
	for i := range testkit.Steps(t, 2000) {
		n := []int{0, 1, 63, 64, 65, 127, 128, 129, 1 + rng.IntN(3000)}[rng.IntN(9)]
		base := topology.GPUID(rng.IntN(1 << 20))
		span := []int{n, 2 * n, 64 * n, 256 * n, 1 << 22}[rng.IntN(5)] + 1
		gpus := make([]topology.GPUID, n)
		for k := range gpus {
			gpus[k] = base + topology.GPUID(rng.IntN(span))
			if k > 0 && rng.IntN(4) == 0 {
				gpus[k] = gpus[k-1] + 1 // runs, as a host's GPUs come
			}
			if k > 0 && rng.IntN(16) == 0 {
				gpus[k] = gpus[rng.IntN(k)] // a repeat
			}
		}
		want := slices.Compact(slices.Sorted(slices.Values(gpus)))
		if n >= 64 && span <= 4*64*n {
			bitmap++
		}
		got := e.sortGPUs(slices.Clone(gpus))
		require.Equal(t, len(want), len(got), "instance %d (seed %d)", i, seed)
		if len(want) > 0 {
			require.Equal(t, want, got, "instance %d (seed %d)", i, seed)
		}
	}
	t.Logf("seed %d: %d lists likely through the bitmap", seed, bitmap)
	require.Positive(t, bitmap)
}
