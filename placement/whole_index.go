package placement

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// wholeIndex answers bestDomainWhole over a wide range of one level's
// domains (a gang of whole largest hosts required in a rack, say, among
// 14,500 racks) without reading every domain: the level's domains bucketed
// by their count of wholly free hosts (the histogram's last bucket, one
// model), each bucket a bitmap in index order. BestFit's choice is the
// domain of the smallest count ≥ need, then the fewest free GPUs, then the
// lowest index: the first non-empty bucket from need up, scanned over the
// range. It is brought up to date from the State's touch log (TouchedSpans):
// O(hosts touched) per call, O(the level's domains) when the log no longer
// covers what changed. For a restricted request the counts are the open
// hosts' (the Restriction's sums subtracted), in an index of their own that
// starts over when the closed set changes.
type wholeIndex struct {
	s     *topology.State
	seq   uint64
	rx    *Restriction // the closed hosts left out (nil: none)
	rxGen uint64       // its gen when last synced
	level topology.Level
	lo    int32    // the level's first domain
	count []int32  // per domain of the level: its bucket
	words int      // words of a bucket's bitmap
	bits  []uint64 // bucket k (a count of wholly free hosts): bits[k·words:], bit d-lo set for domain d
	size  []int32  // domains per bucket
}

// wholeIndexMin is the range of domains from which bestDomainWhole asks the
// index: below it, reading every domain is as cheap.
const wholeIndexMin = 256

// wholeFrom is the range of domains from which bestDomainWhole asks the
// index.
func (v *Solver) wholeFrom() int32 {
	if v.wholeMin > 0 {
		return v.wholeMin
	}
	return wholeIndexMin
}

// wholeBest is bestDomainWhole over domains [lo, hi) of one level, from the
// level's index.
func (v *Solver) wholeBest(lo, hi int32, need int64) (int32, bool) {
	l := v.t.DomainLevel(topology.DomainID(lo))
	all := &v.whole
	if v.rx != nil {
		all = &v.wholeRx
	}
	for len(*all) <= int(l) {
		*all = append(*all, nil)
	}
	w := (*all)[l]
	if w == nil {
		w = &wholeIndex{level: l}
		(*all)[l] = w
	}
	w.sync(v.s, v.rx)
	free := v.s.DomainFreeData()
	var closed []int32 // free GPUs on closed hosts, per domain (one model)
	if v.rx != nil {
		closed = v.rx.dfree
	}
	_, _, nb := v.s.HistogramData()
	for k := max(need, 1); k < int64(len(w.size)); k++ {
		if w.size[k] > 0 {
			if best := w.least(w.bucket(int(k)), lo, hi, free, closed, int32(k)*int32(nb-1)); best >= 0 {
				return v.chose(best, k)
			}
		}
	}
	return v.chose(-1, 0)
}

// least returns the domain in [lo, hi) of bucket b with the fewest free GPUs
// (free less closed, if closed is not nil; the lowest index among equals),
// or -1. No domain of the bucket has fewer free GPUs than floor (its wholly
// free hosts'): the first with floor is the answer.
func (w *wholeIndex) least(b []uint64, lo, hi int32, free, closed []int32, floor int32) int32 {
	from, to := lo-w.lo, hi-w.lo
	best, bestFree := int32(-1), int32(0)
	for wi := from >> 6; wi<<6 < to; wi++ {
		word := b[wi]
		if base := wi << 6; base < from {
			word &^= 1<<uint(from-base) - 1
		}
		if to < (wi+1)<<6 {
			word &= 1<<uint(to-wi<<6) - 1
		}
		for ; word != 0; word &= word - 1 {
			d := w.lo + wi<<6 + int32(bits.TrailingZeros64(word))
			f := free[d]
			if closed != nil {
				f -= closed[d]
			}
			if best < 0 || f < bestFree {
				if f <= floor {
					return d
				}
				best, bestFree = d, f
			}
		}
	}
	return best
}

// sync brings the index up to date with s, for the hosts rx leaves open.
func (w *wholeIndex) sync(s *topology.State, rx *Restriction) {
	if w.rx != rx || rx != nil && w.rxGen != rx.gen {
		w.s, w.rx = nil, rx // another closed set, a host closed or opened, or its sums counted afresh: start over
	}
	if rx != nil {
		w.rxGen = rx.gen
	}
	if w.s == s {
		if first, second, ok := s.TouchedSpans(w.seq); ok {
			w.seq = s.TouchSeq()
			var runLo, runHi topology.HostID // the last domain's hosts: a run of touches there is one
			w.syncHosts(s, first, &runLo, &runHi)
			w.syncHosts(s, second, &runLo, &runHi)
			return
		}
	}
	w.rebuild(s)
}

// syncHosts moves the domains of touched hosts to their buckets now, once
// for a run of hosts in the domain last moved ([*runLo, *runHi)).
func (w *wholeIndex) syncHosts(s *topology.State, hosts []topology.HostID, runLo, runHi *topology.HostID) {
	t := s.Tree()
	hist, _, nb := s.HistogramData()
	for _, h := range hosts {
		if h >= *runLo && h < *runHi || t.DomainLevel(t.HostParent(h)) < w.level {
			continue
		}
		d := t.HostDomain(h, w.level)
		*runLo, *runHi = t.Hosts(d)
		w.set(int32(d), wholly(hist, w.closedHist(), int(d)*nb+nb-1))
	}
}

// rebuild buckets every domain of the level afresh: one pass over the
// level's wholly-free counts, then one setting their bits, into a bucket for
// every count up to the most hosts a domain of the level holds (set never
// adds one). The slices are cut to local variables: the loops then read no
// field of w.
func (w *wholeIndex) rebuild(s *topology.State) {
	t := s.Tree()
	w.s, w.seq = s, s.TouchSeq()
	lo, hi := t.LevelDomains(w.level)
	w.lo = int32(lo)
	n := int(hi - lo)
	words, buckets := (n+63)/64, t.LevelMaxHosts(w.level)+1
	w.words = words
	w.bits = clearSized(w.bits, buckets*words)
	w.size = clearSized(w.size, buckets)
	w.count = slices.Grow(w.count[:0], n)[:n]
	hist, _, nb := s.HistogramData()
	count, j := w.count, int(lo)*nb+nb-1 // the first domain's wholly free hosts
	if closed := w.closedHist(); closed != nil {
		for i := range count {
			count[i] = hist[j] - closed[j]
			j += nb
		}
	} else {
		for i := range count {
			count[i] = hist[j]
			j += nb
		}
	}
	bits, size := w.bits, w.size
	for i, c := range count {
		bits[int(c)*words+i>>6] |= 1 << (uint(i) & 63)
		size[c]++
	}
}

// clearSized returns a of length n, all zero, reusing its array if it has
// the room.
func clearSized[T any](a []T, n int) []T {
	a = slices.Grow(a[:0], n)[:n]
	clear(a)
	return a
}

// bucket is bucket k's bitmap.
func (w *wholeIndex) bucket(k int) []uint64 { return w.bits[k*w.words : (k+1)*w.words] }

// closedHist is the Restriction's histograms (the tree has one model), or
// nil without one.
func (w *wholeIndex) closedHist() []int32 {
	if w.rx == nil {
		return nil
	}
	return w.rx.hist
}

// wholly is a domain's count of wholly free hosts, hist[j] (j its last
// bucket), less the closed hosts' if closed is not nil.
func wholly(hist, closed []int32, j int) int32 {
	if closed != nil {
		return hist[j] - closed[j]
	}
	return hist[j]
}

// set moves domain d to bucket c, its count now.
func (w *wholeIndex) set(d, c int32) {
	i := d - w.lo
	old := w.count[i]
	if c == old {
		return
	}
	w.bits[int(old)*w.words+int(i>>6)] &^= 1 << (uint(i) & 63)
	w.bits[int(c)*w.words+int(i>>6)] |= 1 << (uint(i) & 63)
	w.size[old]--
	w.size[c]++
	w.count[i] = c
}
