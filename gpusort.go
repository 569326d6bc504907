package blink

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// sortGPUs sorts gpus ascending and drops repeats, in place. A nomination's
// GPUs come by host in the order a plan or a reservation took them —
// thousands for a gang of whole hosts — and lie in one domain's range: when
// that range is at most a few words per GPU, they are sorted through a
// bitmap of it (the engine's scratch gpuBits), in O(range/64 + GPUs), not by
// comparisons. The result is the same as slices.Sort then slices.Compact.
func (e *Engine) sortGPUs(gpus []topology.GPUID) []topology.GPUID {
	if len(gpus) < 64 {
		slices.Sort(gpus)
		return slices.Compact(gpus)
	}
	lo, hi := gpus[0], gpus[0]
	for _, g := range gpus {
		lo, hi = min(lo, g), max(hi, g)
	}
	words := int(hi-lo)/64 + 1
	if words > 4*len(gpus) { // spread over the cluster: compare
		slices.Sort(gpus)
		return slices.Compact(gpus)
	}
	b := slices.Grow(e.gpuBits[:0], words)[:words]
	clear(b)
	for _, g := range gpus {
		o := uint(g - lo)
		b[o>>6] |= 1 << (o & 63)
	}
	k := 0
	for w, x := range b {
		for ; x != 0; x &= x - 1 {
			gpus[k] = lo + topology.GPUID(w<<6|bits.TrailingZeros64(x))
			k++
		}
	}
	e.gpuBits = b
	return gpus[:k]
}
