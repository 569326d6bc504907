package placement

import (
	"github.com/blinksched/blink/topology"
)

// rejectFast rules out gangs the root aggregates already refuse, in
// O(levels + sets·models), most general reason first: a pod larger than any
// acceptable host, fewer free GPUs of acceptable models than the gang's
// whole GPUs, or more pods of a shape than the cluster's upper bound.
func (v *Solver) rejectFast() bool {
	if v.maxGPUs = v.largestHost(); v.maxGPUs < 0 {
		v.reason = Reason{Code: NoModel}
		return false
	}
	need, have := int64(0), int64(0)
	for si := range v.r.Sets {
		set := &v.r.Sets[si]
		if int(set.GPUs) > v.maxGPUs {
			v.reason = Reason{Code: HostTooSmall, Set: si, Have: int64(v.maxGPUs), Need: int64(set.GPUs)}
			return false
		}
		if (set.CPUMilli > 0 || set.MemoryMiB > 0) &&
			v.tooSmall(si, hostKind{gpus: int(set.GPUs), cpu: set.CPUMilli, mem: set.MemoryMiB}) {
			return false
		}
		if set.Milli == 0 {
			need += int64(set.Pods) * int64(set.GPUs)
		}
	}
	if v.r.Required == v.hl && (len(v.r.Sets) > 1 || v.r.Sets[0].Pods > 1) { // the pods share one host
		n := v.gangHostGPUs()
		if n > int64(v.maxGPUs) {
			v.reason = Reason{Code: GangHostTooSmall, Have: int64(v.maxGPUs), Need: n}
			return false
		}
		if g := v.totals(); (g.cpu > 0 || g.mem > 0) && !v.noGang &&
			v.tooSmall(-1, hostKind{gpus: int(n), cpu: clamp32(g.cpu), mem: clamp32(g.mem)}) {
			return false
		}
	}
	for m, ok := range v.modelOK {
		if ok {
			have += int64(v.s.FreeOfModel(0, m))
			if v.rx != nil {
				have -= v.rx.freeOf(0, m)
			}
		}
	}
	gain, _ := v.relGain(0, topology.HostID(v.t.NumHosts()))
	if have += v.extra.GPUs(0, topology.HostID(v.t.NumHosts())) + gain; need > have {
		v.reason = Reason{Code: NotEnoughGPUs, Have: have, Need: need}
		return false
	}
	for si := range v.r.Sets {
		v.setCurrent(si)
		ub := v.upper(0)
		if ub < int64(v.set.Pods) {
			v.reason = Reason{Code: NotEnoughHosts, Set: si, Have: ub, Need: int64(v.set.Pods)}
			return false
		}
		if len(v.r.Sets) == 1 && v.sliceS == 1 { // capOf(0, 0): fill starts there
			v.knowCap(0, 0, ub)
		}
	}
	return true
}

// largestHost is the GPU count of the largest host of an acceptable model
// (-1 if none), whatever its GPUs' state (Prepare found each model's).
func (v *Solver) largestHost() int {
	if v.anyModel { // every model: Prepare found the largest of all
		return v.maxAny
	}
	best := -1
	for m, ok := range v.modelOK {
		if ok {
			best = max(best, v.modelMax(m))
		}
	}
	return best
}

// modelMax is the largest host of model m (Prepare scans the tree once).
func (v *Solver) modelMax(m int) int { return v.maxByModel[m] }

// solve chooses the required domain and lays the gang out in it.
func (v *Solver) solve() (topology.DomainID, bool) {
	r := v.r
	sl := v.t.DomainLevel(v.scope)
	if r.Required <= sl {
		v.reset()
		if v.placeAll(sl, int32(v.scope)) {
			d := v.scope // the plan names the required domain holding it, or the root
			for v.t.DomainLevel(d) > max(r.Required, 0) {
				d = v.t.Parent(d)
			}
			return d, true
		}
		si, got := v.si, v.got
		if len(r.Sets) == 1 {
			v.failReason(si, got)
		} else {
			v.gangReason(si)
		}
		return 0, false
	}
	return v.solveRequired(sl)
}

// solveRequired is solve for a level required below the scope's: the
// shortcuts that name the domain or host it goes to, else the candidates
// of that level in the policy's order.
func (v *Solver) solveRequired(sl topology.Level) (topology.DomainID, bool) {
	r := v.r
	v.setCurrent(v.primary())
	need := int64(v.set.Pods)
	if c, ok := v.requiredFast(need); ok {
		v.reset()
		if v.placeAll(r.Required, c) { // exact capacities: it fits
			return topology.DomainID(c), true
		}
	}
	if c, ok := v.requiredFrac(need); ok {
		v.reset()
		if v.placeAll(r.Required, c) { // else the bound overstated it: the others, in order
			return topology.DomainID(c), true
		}
		v.setCurrent(v.primary())
	}
	if v.byFree() { // BestFit, required on one host: pass by pass (gangByFree)
		if d, ok := v.gangByFree(sl, need); ok {
			return d, true
		}
		v.reset()
		v.setCurrent(v.primary())
		cs, free := v.requiredCands(sl, need, false) // no host holds it: the figures of the reasons
		v.noFitReason(sl, cs, free, 0)
		return 0, false
	}
	cs, free := v.requiredCands(sl, need, true)
	if v.gangStopped { // the scan stopped at a host none can come before (the last): if it does not hold the gang, all of them
		if d, ok, _ := v.tryRequired(cs[len(cs)-1:]); ok {
			return d, true
		}
		v.reset() // the attempt's overlays are not the State's
		v.setCurrent(v.primary())
		cs, free = v.requiredCands(sl, need, false)
	}
	d, ok, most := v.tryRequired(cs)
	if ok {
		return d, true
	}
	v.noFitReason(sl, cs, free, most)
	return 0, false
}

// noFitReason says why no candidate cs of the required level held the gang
// (free: the free GPUs a host needs, for a gang required on one; most: for
// one pod set, the most pods a candidate took).
func (v *Solver) noFitReason(sl topology.Level, cs []cand, free int, most int64) {
	r, need := v.r, int64(v.set.Pods)
	switch {
	case (len(cs) > 0 || v.gangOut) && len(r.Sets) > 1:
		v.reason = v.gangSetsReason(sl)
	case v.gangCut:
		v.reason = Reason{Code: GangHost, Have: int64(v.mostFree()), Need: int64(free)}
	case len(cs) > 0:
		v.reason = Reason{Code: RequiredLevel, Level: r.Required, Set: v.si, Have: most, Need: need}
	default:
		v.reason = Reason{Code: RequiredLevel, Level: r.Required, Set: v.si, Have: v.seen, Need: need}
	}
}

// gangSetsReason explains a gang of several pod sets whose primary set has
// domains of the required level that may hold it, but none that holds the
// gang: the first other set no such domain may hold alone (RequiredLevel;
// Have: the most pods of it a domain seen may hold), else GangSets.
func (v *Solver) gangSetsReason(sl topology.Level) Reason {
	why, p := Reason{Code: GangSets}, v.primary()
	v.anyOne = true // a set that has one candidate may fit alone
	for si := range v.r.Sets {
		if si == p {
			continue
		}
		v.setCurrent(si)
		need := int64(v.set.Pods)
		v.seen, v.seenBelow, v.stop = 0, 0, false
		v.cands = v.candidates(sl, int32(v.scope), v.r.Required, need, v.cands[:0])
		if len(v.cands) == 0 {
			why = Reason{Code: RequiredLevel, Level: v.r.Required, Set: si, Have: v.seen, Need: need}
			break
		}
	}
	v.anyOne = false
	return why
}

// requiredCands lists solve's candidates at the required level: the nodes
// whose capacity for the primary set is need or more and, for a gang of
// several pod sets, that may hold it all (see gang_host.go; free is the
// free GPUs a host needs for a gang required on one, 0 if not counted; stop:
// such a scan may stop at a host none can come before).
func (v *Solver) requiredCands(sl topology.Level, need int64, stop bool) (cs []cand, free int) {
	r := v.r
	v.seen, v.seenBelow, v.stop = 0, 0, false
	v.gangAll = len(r.Sets) > 1 && !v.noGang
	if v.gangAll {
		v.gang = v.totals()
	}
	host := v.gangAll && r.Required == v.hl
	v.gangOut, v.gangCut, v.gangStop, v.gangStopped = false, false, stop && host, false
	if host {
		free, v.gangCap = v.gangWholeFree(), v.gangCapFloor()
	}
	if stop && r.Required == v.hl && r.Policy == Spread && !v.noGang {
		v.spreadTops()
	}
	v.reqCands = v.reqCands[:0]
	if free > 0 && v.mostFree() < free {
		v.gangCut = true
	} else {
		v.gangFree = free
		v.reqCands = v.candidates(sl, int32(v.scope), r.Required, need, v.reqCands)
	}
	v.gangAll, v.gangFree, v.gangCap, v.gangStop = false, 0, 0, false
	v.spreadTop, v.spreadFree = 0, 0
	return v.reqCands, free
}

// tryRequired lays the gang out in the first of the required level's
// candidates cs, in the policy's order, that holds it. most is, for one
// pod set, the most pods a domain takes (a candidate's count, else a bound).
func (v *Solver) tryRequired(cs []cand) (topology.DomainID, bool, int64) {
	v.sortCands(cs)
	most := v.seenBelow
	for _, c := range cs {
		v.reset()
		if v.placeAll(v.r.Required, c.idx) {
			if v.r.Required == v.hl {
				return v.t.HostParent(topology.HostID(c.idx)), true, most
			}
			return topology.DomainID(c.idx), true, most
		}
		most = max(most, v.got)
	}
	return 0, false, most
}

// requiredFrac picks, for a gang whose primary set (the current one) is
// plain fractional (plainFrac) required in a domain above the hosts, the
// first domain solve's candidates would try: the best of the scope's
// domains at that level by the primary set's bounds — for several sets,
// among those that may hold them all (domHoldsGang) — in one pass over the
// per-domain arrays (bestDomainFrac). ok false: not such a gang, or no
// domain may hold it (the general path then says why).
func (v *Solver) requiredFrac(need int64) (int32, bool) {
	r := v.r
	if r.Required >= v.hl || !v.plainFrac() || len(r.Sets) > 1 && v.noGang {
		return -1, false
	}
	lo, hi := v.t.Descendants(v.scope, r.Required)
	v.gangAll = len(r.Sets) > 1
	if v.gangAll {
		v.gang = v.totals()
	}
	c, ok := v.bestDomainFrac(int32(lo), int32(hi), need)
	v.gangAll = false
	return c, ok
}

// requiredFast picks, for a gang of one plain set of whole GPUs with exact
// capacities (BestFit, no slices, no nominated or released GPUs in play; a
// Restriction's sums subtracted), the domain of the required level it goes
// to: the best of the scope's domains at that level in one pass over their
// contiguous range (bestDomainExact), which is the general path's first
// candidate. ok false: not such a gang, or no domain holds it (the general
// path then says why).
func (v *Solver) requiredFast(need int64) (int32, bool) {
	r, set := v.r, v.set
	if len(r.Sets) != 1 || r.Required >= v.hl || !v.exact || v.sliceS != 1 || r.Policy != BestFit ||
		!v.extra.Empty() || len(v.rel) != 0 || set.GPUs == 0 || set.Milli != 0 || v.legacy {
		return -1, false
	}
	lo, hi := v.t.Descendants(v.scope, r.Required)
	v.known = knownCap{level: r.Required, idx: -1}
	return v.bestDomainExact(int32(lo), int32(hi), need)
}

// primary is the pod set that orders candidate domains: the most GPUs.
func (v *Solver) primary() int {
	best, bestGPUs := 0, int64(-1)
	for i := range v.r.Sets {
		s := &v.r.Sets[i]
		if g := int64(s.Pods) * int64(max(s.GPUs, 1)); g > bestGPUs {
			best, bestGPUs = i, g
		}
	}
	return best
}

// failReason explains why pod set si placed only got of its pods.
func (v *Solver) failReason(si int, got int64) {
	v.setCurrent(si)
	need := int64(v.set.Pods)
	if v.exact && v.sliceS > 1 {
		v.sliceS = 1
		if v.capOf(v.t.DomainLevel(v.scope), int32(v.scope)) >= need {
			v.reason = Reason{Code: SliceLevel, Level: v.set.SliceLevel, Set: si, Have: got, Need: need}
			return
		}
	}
	v.reason = Reason{Code: NotEnoughHosts, Set: si, Have: got, Need: need}
}

// placeAll lays every pod set out inside node (l, i); false if one fails
// (v.si and v.got then say which, and how many of its pods it placed). Sets
// are placed scarcest first (see setOrder); if that fails, in input order;
// small gangs that still fail get an exhaustive search (exhaustive.go).
func (v *Solver) placeAll(l topology.Level, i int32) bool {
	if v.placeInOrder(l, i, v.order) || len(v.r.Sets) == 1 {
		return v.got == int64(v.set.Pods)
	}
	si, got := v.si, v.got
	v.reset()
	if v.placeInOrder(l, i, v.inputOrder()) {
		return true
	}
	v.reset()
	if v.exhaustive(l, i) {
		return true
	}
	v.si, v.got = si, got
	return false
}

func (v *Solver) placeInOrder(l topology.Level, i int32, order []int) bool {
	for k, si := range order {
		v.setCurrent(si)
		v.last = k == len(order)-1
		v.pos, v.start = v.offs[si], v.offs[si]
		if v.got = v.placeSet(l, i); v.got < int64(v.set.Pods) {
			return false
		}
	}
	return true
}

// setOrder orders the pod sets scarcest first: more whole GPUs per pod, then
// larger fractions, then more CPU and memory (CPU-only pods last, since they
// fit where GPU pods cannot); ties keep input order. Ranks still follow input
// order: each set writes its own span of the plan.
func (v *Solver) setOrder() {
	n := len(v.r.Sets)
	v.order, v.offs = v.order[:0], v.offs[:0]
	off := 0
	for i := range n {
		v.order = append(v.order, i)
		v.offs = append(v.offs, off)
		off += int(v.r.Sets[i].Pods)
	}
	key := func(i int) [4]int64 {
		s := &v.r.Sets[i]
		return [4]int64{int64(s.GPUs) * topology.FullGPU * int64(1-min(s.Milli, 1)), int64(s.Milli), int64(s.CPUMilli), int64(s.MemoryMiB)}
	}
	for a := 1; a < n; a++ { // insertion sort: stable, no allocation
		for b := a; b > 0 && scarcer(key(v.order[b]), key(v.order[b-1])); b-- {
			v.order[b], v.order[b-1] = v.order[b-1], v.order[b]
		}
	}
}

func scarcer(a, b [4]int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return false
}

// inputOrder returns 0…len(Sets)-1 in a reused buffer.
func (v *Solver) inputOrder() []int {
	v.order2 = v.order2[:0]
	for i := range v.r.Sets {
		v.order2 = append(v.order2, i)
	}
	return v.order2
}

// gangReason explains a gang of several pod sets that failed in the scope,
// pod set si first: the first set, si then the others in input order, that
// does not fit the scope on its own (failReason), else GangSets.
func (v *Solver) gangReason(si int) {
	for k := -1; k < len(v.r.Sets); k++ {
		sj := si
		if k >= 0 {
			if sj = k; sj == si {
				continue
			}
		}
		if got := v.placeAlone(sj); got < int64(v.r.Sets[sj].Pods) {
			v.failReason(sj, got)
			return
		}
	}
	v.reason = Reason{Code: GangSets}
}

// placeAlone is how many pods of set si the scope takes on its own.
func (v *Solver) placeAlone(si int) int64 {
	v.reset()
	v.setCurrent(si)
	v.pos, v.start, v.last = 0, 0, true
	return v.placeSet(v.t.DomainLevel(v.scope), int32(v.scope))
}

// placeSet places the current set inside node (l, i), honouring the
// preferred level, and returns how many pods it placed.
func (v *Solver) placeSet(l topology.Level, i int32) int64 {
	need := int64(v.set.Pods)
	p := v.r.Preferred
	if v.sliceS > 1 && p > v.sliceL {
		p = v.sliceL // spread over whole slice domains: spreading below them would split slices
	}
	if p <= l || p <= 0 {
		if v.capAt(l, i) < need {
			return 0
		}
		return v.fill(l, i, need)
	}
	// The smallest enclosing domain that fits, spilling up one level at a
	// time. Where upper bounds overstated the candidates of a level, the pods
	// they could not hold go to the next candidates, then spill on up.
	got := int64(0)
	for L := p; L >= l && got < need; L-- {
		rest := need - got
		v.stop = false
		cs := v.candidates(l, i, L, rest, v.cands[:0])
		v.cands = cs
		if len(cs) == 0 {
			continue
		}
		v.sortCands(cs)
		if L == p {
			got += v.fill(L, cs[0].idx, rest)
		} else {
			got += v.fillFewest(cs[0].idx, p, rest)
		}
		if got < need { // later candidates, and the next level's, may hold nodes that took pods already
			v.track()
			got += v.fillFrom(L, cs[1:], need-got)
		}
	}
	return got
}
