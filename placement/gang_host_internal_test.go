package placement

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestFracBoundExamples: the bench grid's two gangs that fit no host
// (fracsets: more milli than a host has; fracpack: 600s that cannot share)
// are refused on a free 4-GPU host, and gangs that pack are not.
func TestFracBoundExamples(t *testing.T) {
	free := []uint16{1000, 1000, 1000, 1000}
	sets := func(ps ...int32) []PodSet { // pods, milli pairs
		var out []PodSet
		for i := 0; i < len(ps); i += 2 {
			out = append(out, PodSet{Pods: ps[i], GPUs: 1, Milli: ps[i+1]})
		}
		return out
	}
	require.False(t, fracBound(free, sets(8, 400, 8, 300)), "fracsets")
	require.False(t, fracBound(free, sets(3, 600, 3, 500)), "fracpack")
	require.False(t, fracBound(free, sets(5, 600)), "five 600s on four GPUs")
	require.True(t, fracBound(free, sets(3, 600, 2, 500)), "600s alone, two 500s share the fourth")
	require.True(t, fracBound(free, sets(4, 400, 4, 300)), "400+300+300 twice, 400+400")
	require.True(t, fracBound([]uint16{300, 700}, sets(1, 700, 1, 300)), "tight")
	require.False(t, fracBound([]uint16{300, 700}, sets(1, 700, 1, 400)), "400 has no GPU")
}

// TestFracBoundSound: fracBound never refuses fractions that an exhaustive
// packing places (random GPUs' free milli and pod sets); it is also
// measured how many of those that do not pack it refuses.
func TestFracBoundSound(t *testing.T) {
	seed := testkit.Seed(t, 1)
	rng := rand.New(rand.NewPCG(seed, 0x66726163))
	n := testkit.Steps(t, 20000)
	packed, infeasible, refused := 0, 0, 0
	sizes := []int32{100, 250, 300, 333, 400, 450, 500, 501, 550, 600, 700, 999}
	for inst := range n {
		bins := make([]uint16, 1+rng.IntN(6))
		for i := range bins {
			bins[i] = uint16(1 + rng.IntN(topology.FullGPU))
			if rng.IntN(2) == 0 {
				bins[i] = topology.FullGPU
			}
		}
		slices.Sort(bins)
		var sets []PodSet
		var items []int32
		for range 1 + rng.IntN(3) {
			m := sizes[rng.IntN(len(sizes))]
			if rng.IntN(4) == 0 {
				m = int32(1 + rng.IntN(topology.FullGPU-1))
			}
			p := int32(1 + rng.IntN(4))
			sets = append(sets, PodSet{Pods: p, GPUs: 1, Milli: m})
			for range p {
				items = append(items, m)
			}
		}
		got := fracBound(bins, sets)
		if packsExactly(bins, items) {
			packed++
			require.True(t, got, "instance %d (seed %d): bins %v sets %+v pack, but refused", inst, seed, bins, sets)
			continue
		}
		infeasible++
		if !got {
			refused++
		}
	}
	t.Logf("seed %d: %d pack, %d do not, of which fracBound refuses %d", seed, packed, infeasible, refused)
	require.Positive(t, packed)
	require.Positive(t, refused)
}

// packsExactly is the oracle: a depth-first search of every GPU for every
// pod, largest pods first.
func packsExactly(bins []uint16, items []int32) bool {
	free := make([]int32, len(bins))
	for i, b := range bins {
		free[i] = int32(b)
	}
	items = slices.Clone(items)
	slices.Sort(items)
	slices.Reverse(items)
	var dfs func(k int) bool
	dfs = func(k int) bool {
		if k == len(items) {
			return true
		}
		for g := range free {
			if free[g] >= items[k] {
				free[g] -= items[k]
				ok := dfs(k + 1)
				free[g] += items[k]
				if ok {
					return true
				}
			}
		}
		return false
	}
	return dfs(0)
}

// TestHostBins: whole pods take free GPUs, those of least milli, and GPUs
// with nothing free are left out.
func TestHostBins(t *testing.T) {
	var ms gpuMilli
	copy(ms[:], []uint16{1000, 300, 0, 1000, 1000, 700})
	var buf [topology.MaxHostGPUs]uint16
	mask := uint64(0b011001) // GPUs 0, 3, 4 are whole-free
	require.Equal(t, []uint16{300, 700, 1000, 1000, 1000}, hostBins(&ms, mask, 6, 0, &buf))
	require.Equal(t, []uint16{300, 700, 1000}, hostBins(&ms, mask, 6, 2, &buf))
	require.Equal(t, []uint16{300, 700}, hostBins(&ms, mask, 6, 3, &buf))
}
