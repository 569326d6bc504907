package placement

import "github.com/blinksched/blink/topology"

// wideLog is the State's touch log decoded once into level-1 domains
// (State.Touched) for all of a Solver's root indexes (one per pod shape,
// wideMin): the root's children in the order of their latest change,
// latest first, each with the number of that change's entry (Touched's
// entries: consecutive touches of hosts in one level-1 domain, within one
// sync, are one entry). An index last synced at entry count n brings up to
// date the children from the front while their latest entry is after n:
// each child once, however many entries went by (interleaved pod shapes
// each see the others' runs of touches; reading every entry again per
// index cost BenchmarkCycle's first cycle 0.5M instructions).
type wideLog struct {
	s    *topology.State
	gen  uint64              // bumped whenever decoding starts afresh (another State, or touches lost)
	seq  uint64              // touches decoded so far
	n    uint64              // entries decoded so far
	lo   topology.DomainID   // the root's first child
	last []uint64            // per child of the root: its latest entry's number from 1 (0: none this generation)
	next []int32             // per child: the one with the next latest entry (-1: none)
	prev []int32             // and the one with the one before
	head int32               // the child with the latest entry (-1: none)
	doms []topology.DomainID // scratch
}

// sync decodes the touches since the last call. When the log lost touches
// (or s is another State), decoding starts afresh at the present, and every
// index synced before then starts over (its generation is another).
func (l *wideLog) sync(s *topology.State) {
	var ok bool
	if l.s == s {
		l.doms, ok = s.Touched(l.seq, l.doms[:0])
	}
	l.s, l.seq = s, s.TouchSeq()
	if !ok {
		l.gen++
		l.reset(s.Tree())
		return
	}
	for _, d := range l.doms {
		i := int32(d - l.lo)
		l.front(i)
		l.n++
		l.last[i] = l.n
	}
}

// reset empties the order, sized for tree t's root children.
func (l *wideLog) reset(t *topology.Tree) {
	lo, hi := t.Children(0)
	n := int(hi - lo)
	l.lo, l.head = lo, -1
	if len(l.last) != n {
		l.last, l.next, l.prev = make([]uint64, n), make([]int32, n), make([]int32, n)
	}
	clear(l.last)
}

// front moves child i to the front of the order.
func (l *wideLog) front(i int32) {
	if l.head == i {
		return
	}
	if l.last[i] != 0 { // in the order, not first: take it out
		p, nx := l.prev[i], l.next[i]
		l.next[p] = nx
		if nx >= 0 {
			l.prev[nx] = p
		}
	}
	l.prev[i], l.next[i] = -1, l.head
	if l.head >= 0 {
		l.prev[l.head] = i
	}
	l.head = i
}
