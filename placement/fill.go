package placement

import (
	"slices"

	"github.com/blinksched/blink/topology"
)

// candidates appends to buf the nodes of level L inside node (l0, i0) whose
// capacity for the current set is at least need, pruning subtrees whose
// aggregate upper bound is below need. v.seen tracks the largest capacity
// met, v.seenBelow the largest below need (for reasons).
func (v *Solver) candidates(l0 topology.Level, i0 int32, L topology.Level, need int64, buf []cand) []cand {
	if l0 == L {
		return v.consider(L, i0, need, buf)
	}
	d := topology.DomainID(i0)
	if v.gangFree > 0 && !v.domHasFree(d, v.gangFree) {
		v.gangCut = true
		return buf
	}
	if v.gangPass > 0 && !v.domPassOK(d) || v.upper(d) < need {
		return buf
	}
	lo, hi := v.t.Children(d)
	if lo == hi { // d is at the last domain level; L must be the host level
		hlo, hhi := v.t.Hosts(d)
		for h := hlo; h < hhi && !v.stop; h++ {
			buf = v.consider(L, int32(h), need, buf)
		}
		return buf
	}
	for c := lo; c < hi && !v.stop; c++ {
		buf = v.candidates(l0+1, int32(c), L, need, buf)
	}
	return buf
}

func (v *Solver) consider(L topology.Level, i int32, need int64, buf []cand) []cand {
	if v.gangFree > 0 && L == v.hl && v.s.HostFree(topology.HostID(i)) < v.gangFree {
		v.gangCut = true
		return buf
	}
	if v.gangPass > 0 && L == v.hl && v.s.HostFree(topology.HostID(i)) != v.gangPass-1 {
		return buf // another pass's (gangByFree)
	}
	c := v.capOf(L, i)
	v.seen = max(v.seen, c)
	if c < need {
		v.seenBelow = max(v.seenBelow, c)
		return buf
	}
	if v.gangAll && (c < v.gangCap || !v.holdsGang(L, i)) { // gangCap: hosts only (0 otherwise)
		v.gangOut = true
		return buf
	}
	free := v.freeOf(L, i)
	switch {
	case v.unbeatable(c, free, need):
		v.stop = true
	case v.spreadTop > 0 && L == v.hl && c >= v.spreadTop && free >= v.spreadFree: // Spread: no host has more
		v.stop, v.gangStopped = true, len(v.r.Sets) > 1
	case v.gangStop && v.gangFirst(c, free):
		v.stop, v.gangStopped = true, true
	}
	return append(buf, cand{idx: i, cap: c, free: free, host: L == v.hl})
}

// unbeatable: with one pod set (so a node that fits is sure to hold the
// gang), no node later in index order can be preferred to this one —
// FirstFit takes the first; BestFit cannot go below capacity need with the
// fewest free GPUs that capacity allows. Any node is when the search is for
// one (v.anyOne).
func (v *Solver) unbeatable(c, free, need int64) bool {
	if v.anyOne {
		return true
	}
	if len(v.r.Sets) != 1 || !v.exact || v.sliceS > 1 {
		return false
	}
	switch v.r.Policy {
	case FirstFit:
		return true
	case BestFit:
		lb := int64(0)
		if v.set.Milli == 0 {
			lb = need * int64(v.set.GPUs)
		}
		return c == need && free <= lb
	}
	return false
}

// hostUnbeatable: for one pod set under BestFit, no later host can beat
// host k — host capacities are exact, and k has the fewest free GPUs a host
// that holds need pods can have (none for fractions and CPU-only pods) and
// the smallest capacity that holds them.
func (v *Solver) hostUnbeatable(k *cand, need int64) bool {
	if len(v.r.Sets) != 1 || v.r.Policy != BestFit || v.sliceS > 1 || k.cap != need {
		return false
	}
	lb := int64(0)
	if v.set.Milli == 0 {
		lb = need * int64(v.set.GPUs)
	}
	return k.free <= lb
}

// better orders candidates by the policy: BestFit smallest capacity, then
// fewest free GPUs (hosts: fewest free GPUs, then smallest capacity); Spread
// largest capacity, then most free GPUs; FirstFit neither; always then lowest
// index.
func (v *Solver) better(a, b *cand) bool {
	switch v.r.Policy {
	case BestFit:
		if a.host && a.free != b.free { // hosts: tightest GPUs first (see doc.go)
			return a.free < b.free
		}
		if a.cap != b.cap {
			return a.cap < b.cap
		}
		if a.free != b.free {
			return a.free < b.free
		}
	case Spread:
		if a.cap != b.cap {
			return a.cap > b.cap
		}
		if a.free != b.free {
			return a.free > b.free
		}
	}
	return a.idx < b.idx
}

func (v *Solver) sortCands(cs []cand) {
	slices.SortFunc(cs, func(a, b cand) int {
		if v.better(&a, &b) {
			return -1
		}
		if v.better(&b, &a) {
			return 1
		}
		return 0
	})
}

// scratch returns the candidate buffer of the current recursion depth.
func (v *Solver) scratch() []cand {
	for len(v.stack) <= v.depth {
		v.stack = append(v.stack, nil)
	}
	return v.stack[v.depth][:0]
}

// children appends d's children at level cl with positive capacity, except
// skip.
func (v *Solver) children(cl topology.Level, d topology.DomainID, skip int32, buf []cand) []cand {
	lo, hi := v.childRange(d, cl)
	if cl == v.hl && v.exact && v.sliceS == 1 {
		return v.exactHosts(lo, hi, skip, buf)
	}
	for c := lo; c < hi; c++ {
		if c == skip {
			continue
		}
		if cp := v.capOf(cl, c); cp > 0 {
			buf = append(buf, cand{idx: c, cap: cp, free: v.freeOf(cl, c), host: cl == v.hl})
		}
	}
	return buf
}

// exactHosts is children over hosts [lo, hi) when capacities are exact and
// the set has no slices (capOf rounds a host's capacity to whole slices
// where hosts are the slice level): one pass over a byte per host. A host's
// capacity is then hostCap's, from its free count, and its free GPUs
// (freeOf: no overlay, no nominated GPUs in play) that count.
func (v *Solver) exactHosts(lo, hi, skip int32, buf []cand) []cand {
	for i, k := range v.s.HostFreeCounts()[lo:hi] {
		h := lo + int32(i)
		cp := v.perK[k]
		if cp == 0 || h == skip || !v.modelOK[v.t.HostModel(topology.HostID(h))] ||
			v.rx != nil && v.rx.closed(topology.HostID(h)) {
			continue
		}
		buf = append(buf, cand{idx: h, cap: cp, free: int64(k), host: true})
	}
	return buf
}

// fill places up to want pods of the current set inside node (l, i) and
// returns how many it placed. Children are chosen by capacity: the child that
// holds them all, by the policy; if none does, the fewest children (largest
// first) with the last chosen by the policy among those that hold the rest;
// chosen children are filled in index order, so consecutive ranks land on
// neighbouring hosts. Where capacities are upper bounds (v.exact is false) a
// child may place fewer than it was given; the shortfall goes to the next
// children by the same rule.
func (v *Solver) fill(l topology.Level, i int32, want int64) int64 {
	if l == v.hl {
		n := min(want, v.capOf(l, i))
		v.touchRack(topology.HostID(i))
		v.assign(topology.HostID(i), n)
		return n
	}
	d := topology.DomainID(i)
	if v.exact && v.sliceS == 1 && want == v.capAt(l, i) {
		return v.fillAll(d)
	}
	if v.plain && !v.exact {
		if got, ok := v.fillHosts(d, want); ok {
			return got
		}
		if v.everyApplies(l, i, want) {
			return v.fillEvery(l, d, want)
		}
	}
	if l == v.sliceL { // whole slices only: count them exactly here
		want = min(want, v.scanCap(d))
		want -= want % v.sliceS
		if want == 0 {
			return 0
		}
	}
	cl := l + 1 // children one level down: hosts below the last named level
	tried := int32(-1)
	if c, ok := v.bestChild(d, cl, want); ok {
		got := v.fill(cl, c, want)
		if got == want {
			return got
		}
		tried, want = c, want-got
		return got + v.fillChildren(d, cl, want, tried)
	}
	if cl == v.hl && want == 1 { // bestChild saw every host: none holds one pod
		return 0
	}
	return v.fillChildren(d, cl, want, tried)
}

// fillAll places as many pods as domain d holds, exact capacities known:
// every host in index order, with no choice to make. Hosts that cannot take a
// pod cost one byte read; a host that takes one pod of the last pod set takes
// its free GPUs straight from the free-mask.
func (v *Solver) fillAll(d topology.DomainID) int64 {
	lo, hi := v.t.Hosts(d)
	g := uint8(v.set.GPUs)
	last := v.last
	if last && g > 0 && int(g) == v.t.UniformHostGPUs() && v.anyModel && v.rx == nil && !v.legacy {
		return v.fillWhole(lo, hi, g)
	}
	got := int64(0)
	for i, k := range v.s.HostFreeCounts()[lo:hi] {
		h := lo + topology.HostID(i)
		if k < g || !v.anyModel && !v.modelOK[v.t.HostModel(h)] || v.rx != nil && v.rx.closed(h) {
			continue
		}
		if k == g && last {
			mask := uint64(1)<<k - 1 // an idle host: all of its GPUs
			if int(k) != v.t.HostGPUCount(h) {
				mask = v.s.HostFreeMask(h)
			}
			v.out[v.pos] = topology.Pod{Host: h, GPUs: mask, CPUMilli: v.set.CPUMilli, MemoryMiB: v.set.MemoryMiB}
			v.pos++
			got++
			continue
		}
		n := int64(k / g)
		v.assign(h, n)
		got += n
	}
	return got
}

// fillWhole is fillAll for pods of the last pod set that each take a whole
// host (g GPUs, every host's count), of any model, with no host closed:
// each host with g free GPUs takes one pod of all of them, the others none.
// A shortcut (off in legacy mode: TestShortcutsSameAnswer and
// TestFillWholeSameAnswer compare).
func (v *Solver) fillWhole(lo, hi topology.HostID, g uint8) int64 {
	p := topology.Pod{GPUs: uint64(1)<<g - 1, CPUMilli: v.set.CPUMilli, MemoryMiB: v.set.MemoryMiB}
	out, pos := v.out, v.pos
	for i, k := range v.s.HostFreeCounts()[lo:hi] {
		if k == g {
			p.Host = lo + topology.HostID(i)
			out[pos] = p
			pos++
		}
	}
	got := int64(pos - v.pos)
	v.pos = pos
	return got
}

// fillChildren spreads want pods over d's children (skipping child skip) by
// the fewest-children rule, repeating on the children left while some fall
// short.
func (v *Solver) fillChildren(d topology.DomainID, cl topology.Level, want int64, skip int32) int64 {
	cs := v.children(cl, d, skip, v.scratch())
	v.stack[v.depth] = cs
	v.depth++
	got := v.fillFrom(cl, cs, want)
	v.depth--
	return got
}

// fillFrom fills nodes of level cl from candidates cs (consumed) by the
// fewest-nodes rule. A node that places fewer pods than it was given is full
// and drops out; the shortfall goes to the others by the same rule, those
// that took their share included (with their capacity reduced by it), so
// fillFrom places min(want, what the nodes hold).
func (v *Solver) fillFrom(cl topology.Level, cs []cand, want int64) int64 {
	got := int64(0)
	for got < want && len(cs) > 0 {
		chosen := v.choose(cs, want-got) // a prefix of cs
		n := len(chosen)
		for k := range chosen {
			c := &chosen[k]
			placed := v.fill(cl, c.idx, c.take)
			got += placed
			if placed < c.take {
				c.cap = 0
			} else {
				c.cap -= placed
			}
		}
		if got < want {
			v.track() // nodes with room left may be filled again
		}
		j := 0
		for k := range n {
			if cs[k].cap > 0 {
				cs[j] = cs[k]
				j++
			}
		}
		j += copy(cs[j:], cs[n:])
		cs = cs[:j]
	}
	return got
}

// bestChild returns the policy's best child of d (at level cl) that holds all
// need pods, in one pass without buffers.
func (v *Solver) bestChild(d topology.DomainID, cl topology.Level, need int64) (int32, bool) {
	v.known = knownCap{level: cl, idx: -1}
	v.ckeyOK = false
	lo, hi := v.childRange(d, cl)
	if cl == v.hl && v.usesProfile(need) {
		return v.profHost(lo, hi)
	}
	// Domains ordered by the histograms alone (whole-GPU pods, no nominated
	// or released GPUs in play: capacity is histCap, exact or a bound) are
	// compared in one tight pass, or read from the root index.
	if v.sliceS == 1 && v.r.Policy == BestFit && v.extra.Empty() && len(v.rel) == 0 && v.set.GPUs > 0 && v.set.Milli == 0 {
		switch {
		case cl == v.hl:
			if v.exact {
				return v.bestHostExact(lo, hi, need)
			}
		case d == 0 && need >= 1 && need <= wideNeedMax && v.anyModel && hi-lo > wideFanout:
			return v.wideBest(need)
		default:
			return v.bestDomainExact(lo, hi, need)
		}
	}
	if cl == v.hl && v.noHostHolds(need) {
		return -1, false
	}
	// One fractional pod at a wide root: the same choice as the scan below
	// (capacities are upper's bounds, no early stop), from the root index.
	if d == 0 && need == 1 && v.set.Milli > 0 && cl != v.hl && hi-lo > wideFanout && v.anyModel &&
		v.sliceS == 1 && v.r.Policy == BestFit && v.extra.Empty() && len(v.rel) == 0 {
		return v.wideBest(1)
	}
	if v.plainFrac() {
		switch {
		case cl != v.hl:
			return v.bestDomainFrac(lo, hi, need)
		case (v.r.Eligible == nil || v.rx != nil) && !v.r.Exclusive && len(v.ov) == 0:
			return v.bestHostFrac(lo, hi, need)
		}
	}
	return v.bestScan(cl, lo, hi, need)
}

// noHostHolds reports, without looking at hosts, that no host holds need
// pods of the current whole-GPU set: not even the largest host of an
// acceptable model, all free (pods of whole hosts, need > 1).
func (v *Solver) noHostHolds(need int64) bool {
	return !v.legacy && v.set.GPUs > 0 && v.set.Milli == 0 && v.maxGPUs >= 0 && v.perK[v.maxGPUs] < need
}

// knownCap is the capacity bestChild's last choice had (capOf of child idx
// at level), so that fill, which descends into it next, need not count it
// again; or the root's, which rejectFast counted for a request of one set;
// idx -1: unknown (begin). It holds only for the pod set and the output
// position it was counted at: a capacity counted for another set, or before
// pods of this one were placed, is not the current one (a set's fill read
// another set's capacity of a domain, took it for the domain's bound, and
// filled the domain past the set's pods: TestLoadedReleaseSameAnswer at
// BLINK_SEED=946 BLINK_STEPS=8000). A new attempt (reset) keeps it: fill
// counts afresh below the node it starts from, and a node's capacity
// counted before the attempt's first pod (requiredFast's, rejectFast's) is
// the attempt's.
type knownCap struct {
	level topology.Level
	idx   int32
	cap   int64
	si    int
	pos   int
}

// knowCap records capacity cp of node i at level l, counted now.
func (v *Solver) knowCap(l topology.Level, i int32, cp int64) {
	v.known = knownCap{level: l, idx: i, cap: cp, si: v.si, pos: v.pos}
}

// chose records that bestChild chose child c (-1: none) of capacity cp, as
// capOf counts it, and returns c.
func (v *Solver) chose(c int32, cp int64) (int32, bool) {
	v.knowCap(v.known.level, c, cp)
	return c, c >= 0
}

// capAt is capOf(l, i), from bestChild's choice when it was that node, for
// this set and position.
func (v *Solver) capAt(l topology.Level, i int32) int64 {
	if k := &v.known; k.idx == i && k.level == l && k.si == v.si && k.pos == v.pos {
		return k.cap
	}
	return v.capOf(l, i)
}

// bestScan is bestChild's general case: every child's capacity (capOf), the
// policy's order (better), stopping early at a choice none can beat.
func (v *Solver) bestScan(cl topology.Level, lo, hi int32, need int64) (int32, bool) {
	best := cand{idx: -1}
	for c := lo; c < hi; c++ {
		cp := v.capOf(cl, c)
		if cp < need {
			continue
		}
		k := cand{idx: c, cap: cp, free: v.freeOf(cl, c), host: cl == v.hl}
		if best.idx < 0 || v.better(&k, &best) {
			best = k
			if v.unbeatable(cp, k.free, need) || k.host && v.hostUnbeatable(&k, need) {
				break
			}
		}
	}
	return v.chose(best.idx, best.cap)
}

// childRange returns d's children at level cl (domains, or hosts).
func (v *Solver) childRange(d topology.DomainID, cl topology.Level) (int32, int32) {
	if cl == v.hl {
		lo, hi := v.t.Hosts(d)
		return int32(lo), int32(hi)
	}
	lo, hi := v.t.Children(d)
	return int32(lo), int32(hi)
}

// fillFewest places need pods inside domain E across the fewest domains of
// level p (below E's level), largest first, the last by the policy.
func (v *Solver) fillFewest(e int32, p topology.Level, need int64) int64 {
	buf := v.scratch()
	var lo, hi int32
	if p == v.hl {
		l, h := v.t.Hosts(topology.DomainID(e))
		lo, hi = int32(l), int32(h)
	} else {
		l, h := v.t.Descendants(topology.DomainID(e), p)
		lo, hi = int32(l), int32(h)
	}
	for c := lo; c < hi; c++ {
		if cp := v.capOf(p, c); cp > 0 {
			buf = append(buf, cand{idx: c, cap: cp, free: v.freeOf(p, c), host: p == v.hl})
		}
	}
	v.stack[v.depth] = buf
	v.depth++
	got := v.fillFrom(p, buf, need)
	v.depth--
	return got
}

// choose decides how many pods each candidate takes (cand.take) and returns
// the chosen ones in index order; cs is reordered in place.
func (v *Solver) choose(cs []cand, need int64) []cand {
	if best := v.bestFitting(cs, need); best >= 0 {
		cs[0], cs[best] = cs[best], cs[0]
		cs[0].take = need
		return cs[:1]
	}
	if v.legacy || !largestFirst(cs) {
		slices.SortFunc(cs, func(a, b cand) int { // largest first, then lowest index
			if a.cap != b.cap {
				if a.cap > b.cap {
					return -1
				}
				return 1
			}
			return int(a.idx - b.idx)
		})
	}
	n := 0
	for need > 0 && n < len(cs) {
		rest := cs[n:]
		if rest[0].cap < need { // sorted: nothing left holds the rest alone
			cs[n].take = cs[n].cap
			need -= cs[n].cap
			n++
			continue
		}
		if best := v.bestFitting(rest, need); best >= 0 {
			rest[0], rest[best] = rest[best], rest[0]
			rest[0].take = need
			n++
			break
		}
		cs[n].take = cs[n].cap
		need -= cs[n].cap
		n++
	}
	chosen := cs[:n]
	if v.legacy || !byIndex(chosen) {
		slices.SortFunc(chosen, func(a, b cand) int { return int(a.idx - b.idx) })
	}
	return chosen
}

// largestFirst reports whether cs is in choose's order already: largest
// capacity first, then lowest index (a total order, so sorting would not
// move anything). Children come in index order, often of one capacity.
func largestFirst(cs []cand) bool {
	for k := 1; k < len(cs); k++ {
		a, b := &cs[k-1], &cs[k]
		if a.cap < b.cap || a.cap == b.cap && a.idx > b.idx {
			return false
		}
	}
	return true
}

// byIndex reports whether cs is in ascending index order.
func byIndex(cs []cand) bool {
	for k := 1; k < len(cs); k++ {
		if cs[k-1].idx > cs[k].idx {
			return false
		}
	}
	return true
}

// bestFitting returns the index of the best candidate (by policy) with
// capacity ≥ need, or -1.
func (v *Solver) bestFitting(cs []cand, need int64) int {
	best := -1
	for k := range cs {
		if cs[k].cap >= need && (best < 0 || v.better(&cs[k], &cs[best])) {
			best = k
		}
	}
	return best
}
