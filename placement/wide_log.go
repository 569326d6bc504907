package placement

import "github.com/blinksched/blink/topology"

// wideLog is the State's touch log decoded once into level-1 domains
// (State.Touched) for all of a Solver's root indexes (one per pod shape,
// wideMin), so that each index reads a domain per run of touches instead of
// decoding the log itself. Its entries are Touched's: consecutive touches of
// hosts in one level-1 domain, within one sync, are one entry.
type wideLog struct {
	s    *topology.State
	gen  uint64                                    // bumped whenever decoding starts afresh (another State, or touches lost)
	seq  uint64                                    // touches decoded so far
	n    uint64                                    // entries written so far
	dom  *[topology.TouchLogSize]topology.DomainID // ring of entries: entry i at i mod its length
	doms []topology.DomainID                       // scratch
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
		return
	}
	if l.dom == nil {
		l.dom = new([topology.TouchLogSize]topology.DomainID)
	}
	for _, d := range l.doms {
		l.dom[l.n%topology.TouchLogSize] = d
		l.n++
	}
}

// fresh reports whether an index last synced at generation gen and entry
// count n must start over: the decoding started afresh since, or more
// entries went by than the ring holds (other indexes kept the decoding
// going while this one was not asked), so the oldest it needs are gone.
func (l *wideLog) fresh(gen, n uint64) bool {
	return gen != l.gen || l.n-n > topology.TouchLogSize
}
