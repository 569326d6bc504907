package placement

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// The released hosts in host order, and how many of them lie below a host
// (relSearch, for relGain's range sums). Two ways, chosen by how many pods
// are released against the cluster's size:
//
//   - dense: a bitmap of the hosts, interleaved with, per word of 64 hosts,
//     the number of released hosts in the words before it (relOrder: word 0,
//     count 0, word 1, count 1, …). Listing the hosts is a pass over the
//     words, and a rank query is one word and a popcount: O(1). Building it
//     costs O(hosts/64), so only for many pods (a preemption that frees a
//     fifth of a cluster queries every domain's rank).
//   - sparse: the pods sorted by host (relOrder empty); ranks by binary
//     search over the entries. O(pods·log pods), nothing per host.

// denseRel reports whether the released hosts are listed by bitmap: when the
// pods outnumber an eighth of the bitmap's words, so that clearing it costs
// no more than sorting them would.
func (v *Solver) denseRel() bool {
	return len(v.relPods)*8 >= relWords(v.t)
}

// relWords is the number of 64-host words of tree t's host bitmap.
func relWords(t *topology.Tree) int { return (t.NumHosts() + 63) / 64 }

// relHostsDense creates an entry per host of relPods, in host order, through
// the bitmap of released hosts, and leaves the per-word counts for
// relSearch. O(pods + hosts/64).
func (v *Solver) relHostsDense() {
	words := relWords(v.t)
	b := slices.Grow(v.relOrder[:0], 2*words)[:2*words]
	clear(b)
	for _, p := range v.relPods {
		b[2*int(p.Host>>6)] |= 1 << (uint(p.Host) & 63)
	}
	n := int64(0)
	for w := range words {
		b[2*w+1] = n
		for x := uint64(b[2*w]); x != 0; x &= x - 1 {
			v.newRel(topology.HostID(w<<6 | bits.TrailingZeros64(x)))
			n++
		}
	}
	v.relOrder = b
}

// relHostsSparse creates an entry per host of relPods, in host order, by
// sorting the pods by host. O(pods·log pods).
func (v *Solver) relHostsSparse() {
	v.relOrder = v.relOrder[:0]
	byHost := func(a, b topology.Pod) int { return int(a.Host - b.Host) }
	pods := v.relPods
	if !slices.IsSortedFunc(pods, byHost) {
		slices.SortFunc(pods, byHost)
	}
	for i, p := range pods {
		if i == 0 || p.Host != pods[i-1].Host {
			v.newRel(p.Host)
		}
	}
}

// relSearch is the number of released hosts below host h.
func (v *Solver) relSearch(h topology.HostID) int {
	if b := v.relOrder; len(b) > 0 {
		w := int(h >> 6)
		if 2*w >= len(b) {
			return len(v.rel)
		}
		return int(b[2*w+1]) + bits.OnesCount64(uint64(b[2*w])&(1<<(uint(h)&63)-1))
	}
	lo, hi := 0, len(v.rel)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if v.rel[m].h < h {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
