package placement

import "github.com/blinksched/blink/topology"

// wideLog is the State's touch log decoded once into level-1 domains
// (State.Touched) for all of a Solver's root indexes (one per pod shape,
// wideMin). It keeps the root's children that had entries as a list in the
// order of their last entries, each with the count of syncs when it had
// it, so that an index reads each child changed since it last synced once,
// however often it was touched since and however many entries went by:
// the entries themselves are not kept. Its entries are Touched's:
// consecutive touches of hosts in one level-1 domain, within one sync, are
// one entry.
type wideLog struct {
	s    *topology.State
	gen  uint64 // bumped whenever decoding starts afresh (another State, or touches lost)
	seq  uint64 // touches decoded so far
	n    uint64 // syncs that decoded entries so far
	lo   topology.DomainID
	at   []uint64 // per child of the root (less lo): n when it last had an entry, 0 if never
	prev []int32  // per child: the child of the entry before its last, -1 for the first
	next []int32  // per child: the child of the entry after its last, -1 for the last
	last int32    // the child of the last entry, -1 if none
	doms []topology.DomainID
}

// sync decodes the touches since the last call. When the log lost touches
// (or s is another State), decoding starts afresh at the present, and every
// index synced before then starts over (fresh).
func (l *wideLog) sync(s *topology.State) {
	var ok bool
	if l.s == s {
		l.doms, ok = s.Touched(l.seq, l.doms[:0])
	}
	l.s, l.seq = s, s.TouchSeq()
	if !ok {
		l.gen++
		l.reset(s)
		return
	}
	if len(l.doms) == 0 {
		return
	}
	l.n++ // one count for all: no index syncs between them
	for _, d := range l.doms {
		if c := int32(d - l.lo); l.at[c] != l.n { // the log may repeat a child: move it once
			l.moveLast(c)
		}
	}
}

// reset empties the list, sized for s's root.
func (l *wideLog) reset(s *topology.State) {
	lo, hi := s.Tree().Children(0)
	n := int(hi - lo)
	l.lo, l.last = lo, -1
	if len(l.at) != n {
		l.at, l.prev, l.next = make([]uint64, n), make([]int32, n), make([]int32, n)
	}
	clear(l.at)
}

// moveLast makes child c the last of the list, as of sync n.
func (l *wideLog) moveLast(c int32) {
	if l.at[c] != 0 { // on the list: unlink it
		if c == l.last {
			l.at[c] = l.n
			return
		}
		p, q := l.prev[c], l.next[c]
		if p >= 0 {
			l.next[p] = q
		}
		l.prev[q] = p
	}
	l.at[c], l.prev[c], l.next[c] = l.n, l.last, -1
	if l.last >= 0 {
		l.next[l.last] = c
	}
	l.last = c
}

// fresh reports whether an index last synced at generation gen must start
// over: the decoding started afresh since.
func (l *wideLog) fresh(gen uint64) bool { return gen != l.gen }
