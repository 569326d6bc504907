package placement

import "github.com/blinksched/blink/topology"

// Filling a domain whole once upper bounds are in play (released hosts, or
// pods an earlier set took): fill, asked for at least a domain's bound,
// gives every host below it all it holds, in index order, whatever the
// choices on the way. A domain's bound is the sum of its children's
// (upper: aggregates over host ranges), so asked for at least that sum,
// bestChild finds a child that holds it all only when no other child has
// room, and choose takes each child with room for its whole bound (or the
// last for all that is left, at least its bound) and sorts them by index;
// each child is then asked for at least its own bound, down to the racks,
// where fillHosts takes every host whole. A child that falls short is full
// and the others took their bounds, so no round follows, and every pod
// lands where the general path puts it. fillEvery does that directly,
// without the candidates.

// everyApplies reports whether fill may fill domain i of level l whole
// (fillEvery): a plain set with bounds in play (the caller checks), no
// slices, want at least the domain's bound, and the domain's children are
// domains (racks go to fillHosts).
func (v *Solver) everyApplies(l topology.Level, i int32, want int64) bool {
	if v.legacy || v.sliceS != 1 {
		return false
	}
	if lo, hi := v.t.Children(topology.DomainID(i)); lo == hi {
		return false
	}
	return want >= v.capAt(l, i)
}

// fillEvery fills domain d of level l whole: each child with room (capOf,
// here upper: the State's histCap plus the released hosts' gains, a plain
// set taking no nominated GPUs) is filled for its bound, in index order; a
// rack no pod of this attempt went to, as fillHosts would (fillFreshAt),
// from the counts its bound was made of. The released hosts below a child
// are counted once (relSearch at its end is the next child's start).
// Falling short of want, it tracks the set as fill's rounds would (track:
// the overlay then holds what was placed; tracking once more than the
// general path does changes no pod).
func (v *Solver) fillEvery(l topology.Level, d topology.DomainID, want int64) int64 {
	rel := len(v.rel) > 0
	if rel {
		v.relCaps()
	}
	lo, hi := v.t.Children(d)
	h0, _ := v.t.Hosts(d)
	a := v.relSearch(h0)
	got := int64(0)
	for c := lo; c < hi; c++ {
		_, h1 := v.t.Hosts(c)
		b := v.relSearch(h1)
		state := v.histCap(c)
		cp := state
		if rel {
			cp += v.relSum[b] - v.relSum[a]
		}
		if cp > 0 {
			n, ok := int64(0), false
			if clo, chi := v.t.Children(c); rel && clo == chi && v.rackStamp[c] != v.epoch { // a fresh rack
				n, ok = v.fillFreshAt(c, cp, state, a, b)
			}
			if !ok {
				v.knowCap(l+1, int32(c), cp) // capAt need not count it again
				n = v.fill(l+1, int32(c), cp)
			}
			got += n
		}
		a = b
	}
	if got < want {
		v.track()
	}
	return got
}
