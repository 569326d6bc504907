package preempt

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// greedy: from V = forced ∪ rest, drop rest's candidates that are not
// needed, fewest GPUs in the scope first (then most milli); offer the
// irreducible set left, with a lower bound. V is the forced set, or (all)
// the forced set is empty and V is rest (then the model's V-empty figures
// stand for the forced set's).
func (p *Planner) greedy(m *model, dom topology.DomainID, host topology.HostID, pstar int32, nf int, milliE int64, rest []int32, all bool) {
	// The bound first, while V is the forced set.
	gain, lbCount := p.podBound(m, rest, all)
	gpuCount, floor := p.gpuBound(m, rest, gain, all)
	lbCount = max(lbCount, gpuCount)
	lbMilli := max(milliE+p.cheapest(m, rest, lbCount), floor)

	p.orderRest(m, rest)
	kept, milli := p.drop(m, dom, host, rest)
	cost := Cost{Priority: pstar, Victims: nf + kept, Milli: milliE + milli}
	bound := Cost{Priority: pstar, Victims: nf + lbCount, Milli: lbMilli}
	if cost.Less(bound) {
		bound = cost
	}
	p.offer(m, dom, host, cost, bound)
}

// podBound is the greedy's bound in pods of the primary set: the least
// number of rest's candidates that could cover the missing pods, given what
// each could add at most (its hosts' gain with all of rest gone), which it
// returns too (per candidate of rest, in p.keys). It leaves V = forced ∪
// rest.
func (p *Planner) podBound(m *model, rest []int32, all bool) ([]int64, int) {
	nh := len(m.hosts)
	ps := p.primary
	gain := resize(p.keys, len(rest))
	p.keys = gain
	var need int64
	var base []int64
	if all {
		need = max(0, p.sets[ps].pods-m.total0)
		base = m.caps0
	} else {
		need = m.deficit()
		base = p.caps2(m, ps)
		for _, c := range rest {
			m.set(int(c), true)
		}
	}
	for i, c := range rest {
		g := int64(0)
		cd := &m.cands[c]
		for _, k := range m.slots[cd.lo:cd.hi] {
			g += m.caps[ps*nh+int(k)] - base[k]
		}
		gain[i] = g
	}
	return gain, p.coverCount(gain, need)
}

// gpuBound is the greedy's bound in whole GPUs, where the primary set asks
// for whole GPUs (else 0, 0): the least number of rest's candidates that
// could free the whole GPUs missing with the forced set gone, given what
// each frees at most (its GPUs in the scope, all of a host it holds
// exclusively; written to gain), and milliFloor's bound where it applies.
// V = forced ∪ rest before and after.
func (p *Planner) gpuBound(m *model, rest []int32, gain []int64, all bool) (int, int64) {
	set := &p.sets[p.primary]
	if set.gpus <= 0 || set.milli != 0 {
		return 0, 0
	}
	floor := int64(0)
	var missing int64
	if all {
		missing = set.pods*set.gpus - m.gpus0
		floor = p.milliFloor(m, missing) // V is rest: every candidate that may go
	} else {
		for _, c := range rest {
			m.set(int(c), false)
		}
		missing = set.pods*set.gpus - m.freeGPUs()
	}
	held := resize(p.sortBuf, len(m.cands)) // per candidate: the exclusive hosts' GPUs
	clear(held)
	for k := range m.hosts {
		if o := m.hosts[k].owner; o >= 0 {
			held[o] += int64(bits.OnesCount64(m.hosts[k].share))
		}
	}
	for i, c := range rest {
		gain[i] = m.cands[c].gpus + held[c]
	}
	p.sortBuf = held
	count := p.coverCount(gain, missing)
	if !all {
		for _, c := range rest {
			m.set(int(c), true)
		}
	}
	return count, floor
}

// orderRest sorts rest in the greedy's drop order (sortRest).
func (p *Planner) orderRest(m *model, rest []int32) {
	keys := p.rkeys[:0]
	for _, c := range rest {
		cd := &m.cands[c]
		keys = append(keys, restKey{gpus: cd.gpus, milli: cd.milli, id: cd.id, c: c})
	}
	p.rkeys = keys
	p.sortRest(keys, rest)
}

// restKey orders the greedy's drops.
type restKey struct {
	gpus, milli int64
	id          topology.JobID
	c           int32
}

// sortRest writes to rest the candidates of keys in the greedy's order:
// gpus ascending, then milli descending, then id. By radix on one packed
// key when the three fit 64 bits and they are many, else by comparison.
func (p *Planner) sortRest(keys []restKey, rest []int32) {
	maxG, maxM, maxID := int64(0), int64(0), int64(0)
	neg := false
	for i := range keys {
		k := &keys[i]
		maxG, maxM, maxID = max(maxG, k.gpus), max(maxM, k.milli), max(maxID, int64(k.id))
		neg = neg || k.gpus < 0 || k.milli < 0 || k.id < 0
	}
	bg, bm, bi := bits.Len64(uint64(maxG)), bits.Len64(uint64(maxM)), bits.Len64(uint64(maxID))
	if len(keys) < 256 || neg || bg+bm+bi > 64 {
		slices.SortFunc(keys, func(a, b restKey) int {
			switch {
			case a.gpus != b.gpus:
				return cmp3(a.gpus, b.gpus)
			case a.milli != b.milli:
				return cmp3(b.milli, a.milli)
			}
			return cmp3(int64(a.id), int64(b.id))
		})
		for i := range keys {
			rest[i] = keys[i].c
		}
		return
	}
	rk := resize(p.radixA, len(keys))
	for i := range keys {
		k := &keys[i]
		rk[i] = radixKey{k: uint64(k.gpus)<<uint(bm+bi) | uint64(maxM-k.milli)<<uint(bi) | uint64(k.id), c: k.c}
	}
	sorted, other := radixSort(rk, p.radixB, bg+bm+bi)
	for i := range sorted {
		rest[i] = sorted[i].c
	}
	p.radixA, p.radixB = sorted, other
}

func slicesSortInt64(v []int64) { slices.Sort(v) }

// caps2 copies the current capacities of set si per host of m.
func (p *Planner) caps2(m *model, si int) []int64 {
	nh := len(m.hosts)
	p.m2caps = append(p.m2caps[:0], m.caps[si*nh:(si+1)*nh]...)
	return p.m2caps
}

// coverCount is the least number of gains (largest first) summing to need.
func (p *Planner) coverCount(gain []int64, need int64) int {
	if need <= 0 {
		return 1
	}
	g := append(p.sortBuf[:0], gain...)
	p.sortBuf = g
	p.sortInt64s(g)
	sum := int64(0)
	for i := len(g) - 1; i >= 0; i-- {
		sum += g[i]
		if sum >= need {
			return len(g) - i
		}
	}
	return len(g)
}

// cheapest sums the k smallest milli among rest.
func (p *Planner) cheapest(m *model, rest []int32, k int) int64 {
	g := p.sortBuf[:0]
	for _, c := range rest {
		g = append(g, m.cands[c].milli)
	}
	p.sortBuf = g
	p.sortInt64s(g)
	sum := int64(0)
	for i := range min(k, len(g)) {
		sum += g[i]
	}
	return sum
}

// drop takes out of V the candidates of rest, in order, whose removal keeps
// the request fitting, and returns how many stay and their milli. Where the
// model is exact it decides alone (dropModel). Where it is only a necessary
// condition, drop asks the model first and placement once: if the request
// fits with what is left, that set is irreducible (without any one of them
// the model, hence placement, says no), and where feasibility grows with V
// it is the set that drops decided by placement would leave (each drop the
// model made left a superset of the final set, which fits). Else it starts
// again from V and asks placement too, in runs (dropRuns).
func (p *Planner) drop(m *model, dom topology.DomainID, host topology.HostID, rest []int32) (int, int64) {
	if m.exact {
		return p.dropModel(m, rest)
	}
	if p.noRuns {
		return p.dropRuns(m, dom, host, rest)
	}
	kept, milli := p.dropModel(m, rest)
	if p.test(m, dom, host) {
		return kept, milli
	}
	m.setRun(rest, true)
	return p.dropRuns(m, dom, host, rest)
}

// dropModel drops by the model alone, one candidate at a time in effect;
// but a drop that the capacity left proves harmless is made without
// recomputing hosts (their capacities stay stale until the next exact
// step): taking c out loses at most, per set, the capacity of its hosts not
// already stale. On a full cluster most drops are of that kind.
func (p *Planner) dropModel(m *model, rest []int32) (int, int64) {
	nh, ns := len(m.hosts), len(m.total)
	low := append(p.low[:0], m.total...) // lower bounds on the totals with the marks applied
	lost := resize(p.lost, ns)
	p.low, p.lost = low, lost
	kept, milli := 0, int64(0)
	for _, c := range rest {
		cd := &m.cands[c]
		clear(lost)
		for _, k := range m.slots[cd.lo:cd.hi] {
			if !m.dirtyAt[k] {
				for si := range lost {
					lost[si] += m.caps[si*nh+int(k)]
				}
			}
		}
		if p.stillCovers(low, lost) {
			m.mark(int(c), false)
			continue
		}
		m.flush()
		m.set(int(c), false)
		if !m.fits() {
			m.set(int(c), true)
			kept++
			milli += cd.milli
		}
		copy(low, m.total)
	}
	m.flush()
	return kept, milli
}

// stillCovers reports whether every set's pods fit within low less lost,
// and if so takes lost off low.
func (p *Planner) stillCovers(low, lost []int64) bool {
	for si := range low {
		if low[si]-lost[si] < p.sets[si].pods {
			return false
		}
	}
	for si := range low {
		low[si] -= lost[si]
	}
	return true
}

// dropRuns drops by the model and placement, deciding runs of candidates
// at once: a run that can go together goes (and the next is twice as
// long), one that cannot is halved, and a candidate that cannot go alone
// stays (the next run is one long). Where feasibility grows with V, this
// keeps exactly what dropping them one at a time keeps — a candidate stays
// only when V without it, as it is then, does not fit — in
// O(kept·log len(rest)) placement tests instead of len(rest): on a full
// cluster of a million GPUs, where a gang of several sets may go anywhere,
// rest holds some 150,000 jobs and each test reads all their pods.
func (p *Planner) dropRuns(m *model, dom topology.DomainID, host topology.HostID, rest []int32) (int, int64) {
	kept, milli := 0, int64(0)
	step := 1
	for i := 0; i < len(rest); {
		run := rest[i:min(i+step, len(rest))]
		m.setRun(run, false)
		if m.fits() && p.feasible(m, dom, host) {
			i += len(run)
			if !p.noRuns {
				step *= 2
			}
			continue
		}
		m.setRun(run, true)
		if len(run) > 1 {
			step = len(run) / 2
			continue
		}
		kept++
		milli += m.cands[run[0]].milli
		i++
		step = 1
	}
	return kept, milli
}
