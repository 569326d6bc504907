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

// podGPUs appends the GPUs of pods to dst, ascending and once (pods may
// share a GPU): what listing them pod by pod, then sortGPUs, gives. When
// the hosts' GPU range is at most a few words per GPU, each pod's mask goes
// into a bitmap of the range whole, in O(pods + range/64 + GPUs), with no
// GPU listed out of order first; else they are listed and sorted.
func (e *Engine) podGPUs(dst []topology.GPUID, pods []topology.Pod) []topology.GPUID {
	if len(pods) == 0 {
		return dst
	}
	n, hlo, hhi := 0, pods[0].Host, pods[0].Host
	for _, p := range pods {
		n += bits.OnesCount64(p.GPUs)
		hlo, hhi = min(hlo, p.Host), max(hhi, p.Host)
	}
	lo, _ := e.t.HostGPUs(hlo)
	_, hi := e.t.HostGPUs(hhi)
	words := int(hi-lo)/64 + 2 // a host's mask may reach into the word after its last GPU's
	if n < 64 || words > 4*n {
		start := len(dst)
		dst = slices.Grow(dst, n) // a gang of 200k GPUs: room once, not growth by copies
		for _, p := range pods {
			glo, _ := e.t.HostGPUs(p.Host)
			for m := p.GPUs; m != 0; m &= m - 1 {
				dst = append(dst, glo+topology.GPUID(bits.TrailingZeros64(m)))
			}
		}
		return append(dst[:start], e.sortGPUs(dst[start:])...)
	}
	b := slices.Grow(e.gpuBits[:0], words)[:words]
	clear(b)
	for _, p := range pods {
		glo, _ := e.t.HostGPUs(p.Host)
		o := uint(glo - lo)
		b[o>>6] |= p.GPUs << (o & 63)
		b[o>>6+1] |= p.GPUs >> (64 - o&63) // nothing when o is a word's first bit: a shift by 64
	}
	e.gpuBits = b
	k := len(dst)
	dst = slices.Grow(dst, n)[:k+n] // n counts a GPU pods share once per pod: room enough
	for w, x := range b {
		for ; x != 0; x &= x - 1 {
			dst[k] = lo + topology.GPUID(w<<6|bits.TrailingZeros64(x))
			k++
		}
	}
	return dst[:k]
}
