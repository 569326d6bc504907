package defrag

import (
	"slices"

	"github.com/blinksched/blink/topology"
)

// freeIndex keeps, for each named level below the first and each child of
// the root (a group), the most free GPUs of one domain of that level in the
// group. MakeRoom visits groups best first and stops when no domain left can
// beat the targets it holds, instead of scanning every domain of the level.
// The index follows the State's touch log (State.Touched): it is rebuilt,
// in O(domains), only for a State it has not seen or when the log
// overflowed, and otherwise updated for the groups touched since.
type freeIndex struct {
	t       *topology.Tree
	s       *topology.State
	seq     uint64
	valid   bool
	max     [][]int32 // [level][group]
	touched []topology.DomainID
	seen    []bool
	order   []group // groups by bound, scratch
}

type group struct {
	d     topology.DomainID
	bound int64 // most free GPUs of one domain (host) of the target level in it
}

func (x *freeIndex) update(s *topology.State) {
	t := s.Tree()
	if x.t != t {
		x.t, x.valid = t, false
		hl := t.HostLevel()
		lo, hi := t.LevelDomains(1)
		x.max = make([][]int32, hl)
		for l := topology.Level(2); l < hl; l++ {
			x.max[l] = make([]int32, hi-lo)
		}
		x.seen = make([]bool, hi-lo)
	}
	if t.HostLevel() <= 2 {
		return // nothing below the groups to index
	}
	lo, hi := t.LevelDomains(1)
	if x.valid && x.s == s {
		var ok bool
		x.touched, ok = s.Touched(x.seq, x.touched[:0])
		if ok {
			for _, d := range x.touched {
				if !x.seen[d-lo] {
					x.seen[d-lo] = true
					x.group(s, d)
				}
			}
			for _, d := range x.touched {
				x.seen[d-lo] = false
			}
			x.seq = s.TouchSeq()
			return
		}
	}
	for d := lo; d < hi; d++ {
		x.group(s, d)
	}
	x.s, x.valid, x.seq = s, true, s.TouchSeq()
}

func (x *freeIndex) group(s *topology.State, d topology.DomainID) {
	t := x.t
	first, _ := t.LevelDomains(1)
	free := s.DomainFreeData()
	for l := topology.Level(2); l < t.HostLevel(); l++ {
		lo, hi := t.Descendants(d, l)
		best := int32(0)
		for _, f := range free[lo:hi] {
			best = max(best, f)
		}
		x.max[l][d-first] = best
	}
}

// groups orders the children of the root by the most free GPUs one domain
// (or host) of level l in them has, best first.
func (x *freeIndex) groups(s *topology.State, l topology.Level) []group {
	t := x.t
	lo, hi := t.LevelDomains(1)
	x.order = x.order[:0]
	for d := lo; d < hi; d++ {
		var b int64
		switch {
		case l == 1:
			b = int64(s.Free(d))
		case l == t.HostLevel():
			for m := range t.NumModels() {
				h := s.Histogram(d, m)
				for k := len(h) - 1; k > 0; k-- {
					if h[k] > 0 {
						b = max(b, int64(k))
						break
					}
				}
			}
		default:
			b = int64(x.max[l][d-lo])
		}
		x.order = append(x.order, group{d, b})
	}
	slices.SortFunc(x.order, func(a, b group) int {
		if a.bound != b.bound {
			return cmpInt(b.bound, a.bound)
		}
		return int(a.d - b.d)
	})
	return x.order
}
