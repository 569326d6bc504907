package topology

// The touch log lets a reader that caches per-domain figures (a placement
// Solver's index over the root's children) catch up with a State in time
// proportional to what changed: every change to a host's free GPUs appends the
// host's level-1 domain (a child of the root) to a ring of touchLogSize
// entries. It is not part of the State's value: snapshots omit it, Check
// ignores it, a rolled-back Delta leaves its touches (a reader then recomputes
// figures that did not change, which is harmless).
const touchLogSize = 4096

type touchLog struct {
	seq uint64
	ids [touchLogSize]int32
}

// touch records that the free GPUs of level-1 domain d changed.
func (s *State) touch(d int32) {
	s.touches.ids[s.touches.seq%touchLogSize] = d
	s.touches.seq++
}

// TouchSeq is the number of touches so far: pass it to Touched later.
func (s *State) TouchSeq() uint64 { return s.touches.seq }

// TouchesLost reports whether the touch log no longer covers everything
// since TouchSeq returned since: more changed than it holds, or the State
// was overwritten (UnmarshalBinary). A reader that caches per-host data by
// HostGeneration must then start over too: a snapshot may bring a host back
// to a generation it had with other content. O(1).
func (s *State) TouchesLost(since uint64) bool {
	return s.touches.seq-since > touchLogSize || since > s.touches.seq
}

// Touched appends to dst the level-1 domains (children of the root) whose
// free GPUs, histograms, shared milli or partly used GPUs changed since TouchSeq returned since, possibly with
// repeats. ok is false when more changed than the log holds: the caller must
// then recompute everything.
func (s *State) Touched(since uint64, dst []DomainID) (_ []DomainID, ok bool) {
	if s.TouchesLost(since) {
		return dst, false
	}
	for q := since; q < s.touches.seq; q++ {
		dst = append(dst, DomainID(s.touches.ids[q%touchLogSize]))
	}
	return dst, true
}
