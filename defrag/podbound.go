package defrag

import (
	"slices"

	"github.com/blinksched/blink/topology"
)

// The pod bound. The count filter (passes) bounds the primary shape's pods
// the target holds once a set of candidates is gone: its capacity now
// (baseCap) plus, per host, ⌊after/g⌋ − ⌊free/g⌋ with after the free GPUs
// plus those the set's pods there hold. Per host that gain is at most
// ⌊n/g⌋ − ⌊free/g⌋ (n: its GPUs) and at most Σ ⌈a_c/g⌉ over the set's
// candidates c holding a_c GPUs there, so it is at most Σ_c min(⌈a_c/g⌉,
// ⌊n/g⌋ − ⌊free/g⌋): a candidate's podUB, the sum over its hosts of its
// term, adds up over any set. No set of m candidates passes the filter if
// baseCap plus the m largest podUB stays below the pods wanted — a whole-host
// gang missing 28 hosts is not made room for by 4 moves of one-host jobs —
// which prunes a target before its subsets are enumerated, and the
// enumeration's branches.

// podBounds sets every candidate's podUB and p.topUB; false (topUB empty)
// when the count filter does not apply.
func (p *Planner) podBounds() bool {
	p.topUB = p.topUB[:0]
	n := &p.need
	if n.primary == 0 {
		return false
	}
	g := n.primary
	ubs := p.ubBuf[:0]
	for i := range p.cands {
		c := &p.cands[i]
		c.podUB = 0
		for _, e := range p.inD[c.off : c.off+c.n] {
			if p.s.HostHealth(e.h) != topology.Healthy || !p.modelOK(e.h) {
				continue
			}
			free := p.s.HostFree(e.h)
			room := p.t.HostGPUCount(e.h)/g - free/g
			c.podUB += int64(min((e.gpus+g-1)/g, room))
		}
		ubs = append(ubs, c.podUB)
	}
	slices.SortFunc(ubs, func(a, b int64) int { return cmpInt(b, a) })
	p.ubBuf = ubs
	p.topUB = append(p.topUB, 0)
	for i, u := range ubs {
		p.topUB = append(p.topUB, p.topUB[i]+u)
	}
	return true
}
