package blink

import (
	"fmt"
	"math/bits"
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

// TestPodGPUs compares podGPUs with listing every pod's GPUs and sorting
// them (slices.Sort, slices.Compact), on trees of hosts of 1 to 64 GPUs
// (hosts crossing words, masks reaching into the next word), for pods on
// few hosts or many, adjacent or spread, some sharing GPUs, after GPUs
// already in dst.
func TestPodGPUs(t *testing.T) {
	seed := testkit.Seed(t, 1)
	rng := rand.New(rand.NewPCG(seed, 0x706f6467))
	bitmap := 0
	for i := range testkit.Steps(t, 500) {
		var hosts []topology.HostSpec
		big := rng.IntN(4) == 0
		for h := range 1 + rng.IntN(300) {
			g := []int{1, 3, 4, 5, 7, 8}[rng.IntN(6)]
			if big && rng.IntN(8) == 0 {
				g = 64
			}
			hosts = append(hosts, topology.HostSpec{Name: fmt.Sprint("h", h), Path: []string{"r"}, GPUs: g})
		}
		tree, err := topology.BuildHosts([]string{"rack"}, hosts)
		require.NoError(t, err)
		e := &Engine{t: tree}
		H := tree.NumHosts()
		var pods []topology.Pod
		first, span := rng.IntN(H), 1+rng.IntN(H)
		for range rng.IntN(200) {
			h := topology.HostID(min(H-1, first+rng.IntN(span)))
			full := uint64(1)<<uint(tree.HostGPUCount(h)) - 1
			if tree.HostGPUCount(h) == 64 {
				full = ^uint64(0)
			}
			m := full
			if rng.IntN(3) == 0 {
				m &= rng.Uint64()
			}
			if m != 0 {
				pods = append(pods, topology.Pod{Host: h, GPUs: m})
			}
		}
		dst := []topology.GPUID{7, 3} // kept as they are
		var want []topology.GPUID
		for _, p := range pods {
			lo, _ := tree.HostGPUs(p.Host)
			for m := p.GPUs; m != 0; m &= m - 1 {
				want = append(want, lo+topology.GPUID(bits.TrailingZeros64(m)))
			}
		}
		if len(want) >= 64 {
			bitmap++
		}
		slices.Sort(want)
		want = append([]topology.GPUID{7, 3}, slices.Compact(want)...)
		got := e.podGPUs(dst, pods)
		require.Equal(t, want, got, "instance %d (seed %d)", i, seed)
	}
	t.Logf("seed %d: %d lists of 64 GPUs or more", seed, bitmap)
	require.Positive(t, bitmap)
}
