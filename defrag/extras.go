package defrag

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// Nominated GPUs. A GPU nominated for a job the request may displace
// (topology.State.AppendAdmitted) is not free, yet placement may give it to
// the request. The bounds that count free GPUs (the targets' keys, the
// GPUs a target misses, its pod capacity) add these GPUs, p.extras, so that
// they stay bounds when nominations exist.

// extraRange returns the positions [a, b) in p.extras of hosts [lo, hi).
func (p *Planner) extraRange(lo, hi topology.HostID) (a, b int) {
	cmp := func(e topology.HostMask, h topology.HostID) int { return int(e.Host - h) }
	a, _ = slices.BinarySearchFunc(p.extras, lo, cmp)
	b, _ = slices.BinarySearchFunc(p.extras, hi, cmp)
	return a, b
}

// extraGPUs counts the extra GPUs on hosts [lo, hi).
func (p *Planner) extraGPUs(lo, hi topology.HostID) int64 {
	if len(p.extras) == 0 {
		return 0
	}
	a, b := p.extraRange(lo, hi)
	return p.extraSum[b] - p.extraSum[a]
}

// extraPods bounds the pods of g GPUs the extra GPUs on hosts [lo, hi) add
// to a capacity counted from free GPUs: ⌈e/g⌉ on a host with e of them
// (⌊(f+e)/g⌋ − ⌊f/g⌋ ≤ ⌈e/g⌉ for any f).
func (p *Planner) extraPods(lo, hi topology.HostID, g int) int64 {
	if len(p.extras) == 0 {
		return 0
	}
	a, b := p.extraRange(lo, hi)
	var n int64
	for _, e := range p.extras[a:b] {
		n += int64((bits.OnesCount64(e.Mask) + g - 1) / g)
	}
	return n
}
