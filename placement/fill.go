package placement

import (
	"slices"

	"github.com/blinksched/blink/topology"
)

// candidates appends to buf the nodes of level L inside node (l0, i0) whose
// capacity for the current set is at least need, pruning subtrees whose
// aggregate upper bound is below need. v.seen tracks the largest capacity
// met (for reasons).
func (v *Solver) candidates(l0 topology.Level, i0 int32, L topology.Level, need int64, buf []cand) []cand {
	if l0 == L {
		return v.consider(L, i0, need, buf)
	}
	d := topology.DomainID(i0)
	if v.upper(d) < need {
		return buf
	}
	if L == v.hl && l0 == topology.Level(v.t.Levels()-1) {
		lo, hi := v.t.Hosts(d)
		for h := lo; h < hi; h++ {
			buf = v.consider(L, int32(h), need, buf)
		}
		return buf
	}
	lo, hi := v.t.Children(d)
	if lo == hi { // d is at the last domain level; L must be the host level
		lo2, hi2 := v.t.Hosts(d)
		for h := lo2; h < hi2; h++ {
			buf = v.consider(L, int32(h), need, buf)
		}
		return buf
	}
	for c := lo; c < hi; c++ {
		buf = v.candidates(l0+1, int32(c), L, need, buf)
	}
	return buf
}

func (v *Solver) consider(L topology.Level, i int32, need int64, buf []cand) []cand {
	c := v.capOf(L, i)
	v.seen = max(v.seen, c)
	if c < need {
		return buf
	}
	return append(buf, cand{idx: i, cap: c, free: v.freeOf(L, i)})
}

// better orders candidates by the policy: BestFit smallest capacity, then
// fewest free GPUs; Spread largest capacity, then most free GPUs; FirstFit
// neither; always then lowest index.
func (v *Solver) better(a, b *cand) bool {
	switch v.r.Policy {
	case BestFit:
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

// children appends the children of domain d with positive capacity.
func (v *Solver) children(l topology.Level, d topology.DomainID, buf []cand) []cand {
	cl := l + 1
	lo, hi := v.t.Children(d)
	if lo == hi {
		hlo, hhi := v.t.Hosts(d)
		lo, hi = topology.DomainID(hlo), topology.DomainID(hhi)
		cl = v.hl
	}
	for c := lo; c < hi; c++ {
		if cp := v.capOf(cl, int32(c)); cp > 0 {
			buf = append(buf, cand{idx: int32(c), cap: cp, free: v.freeOf(cl, int32(c))})
		}
	}
	return buf
}

// fill places need pods of the current set inside node (l, i), whose
// capacity is known to suffice: the child that fits them all by the policy;
// if none does, the fewest children (largest first) with the last one chosen
// by the policy among those that fit the rest. Children are then filled in
// index order, so consecutive ranks land on neighbouring hosts.
func (v *Solver) fill(l topology.Level, i int32, need int64) {
	if l == v.hl {
		v.assign(topology.HostID(i), need)
		return
	}
	cl := l + 1
	if lo, hi := v.t.Children(topology.DomainID(i)); lo == hi {
		cl = v.hl
	}
	cs := v.children(l, topology.DomainID(i), v.scratch())
	v.stack[v.depth] = cs
	v.depth++
	for _, c := range v.choose(cs, need) {
		v.fill(cl, c.idx, c.take)
	}
	v.depth--
}

// fillFewest places need pods inside domain E at level L across the fewest
// domains of level p (p below L), largest first, the last by the policy.
func (v *Solver) fillFewest(L topology.Level, e int32, p topology.Level, need int64) {
	buf := v.scratch()
	if p == v.hl {
		lo, hi := v.t.Hosts(topology.DomainID(e))
		for h := lo; h < hi; h++ {
			buf = v.consider(p, int32(h), 1, buf)
		}
	} else {
		lo, hi := v.t.Descendants(topology.DomainID(e), p)
		for d := lo; d < hi; d++ {
			buf = v.consider(p, int32(d), 1, buf)
		}
	}
	v.stack[v.depth] = buf
	v.depth++
	for _, c := range v.choose(buf, need) {
		v.fill(p, c.idx, c.take)
	}
	v.depth--
}

// choose decides how many pods each candidate takes (cand.take) and returns
// the chosen ones in index order; cs is reordered in place.
func (v *Solver) choose(cs []cand, need int64) []cand {
	if best := v.bestFitting(cs, need); best >= 0 {
		cs[0], cs[best] = cs[best], cs[0]
		cs[0].take = need
		return cs[:1]
	}
	slices.SortFunc(cs, func(a, b cand) int { // largest first, then lowest index
		if a.cap != b.cap {
			if a.cap > b.cap {
				return -1
			}
			return 1
		}
		return int(a.idx - b.idx)
	})
	n := 0
	for need > 0 && n < len(cs) {
		rest := cs[n:]
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
	slices.SortFunc(chosen, func(a, b cand) int { return int(a.idx - b.idx) })
	return chosen
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
