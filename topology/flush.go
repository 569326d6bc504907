package topology

// Deferred commits flushed together. Once every operation of a Delta has
// succeeded, the hosts whose commits waited (apply.go) commit in
// the order first touched, and the differences of a run of hosts under one
// parent domain are added up and propagated to the aggregates above once: a
// gang of whole racks updates each rack, SU and block once per rack, not
// once per host. The aggregates are sums over hosts (and the idle bits
// follow the idle counts), so the result is the same as host by host.

// aggDelta is the difference a run of hosts makes to their ancestors'
// aggregates.
type aggDelta struct {
	free, cap, idle int32
	shared          int64
	model           []int32 // [m] free GPUs of model m
	hist            []int32 // [m*nb+k] hosts of model m with k free GPUs
	part            [PartialBuckets]int32
	any             bool
	moved           bool // some host's free count changed (the histograms, even if free adds up to 0)
}

// batchRun is the shortest run of hosts under one parent whose differences
// are added up before they propagate: below it, adding up costs more than it
// saves (a repair's two hosts go straight through).
const batchRun = 4

// flushPending commits the hosts whose commit was deferred, unjournaled:
// those commit deferred, then the aggregates of the spans of whole idle
// hosts placeApart placed (wholerun.go).
func (s *State) flushPending() {
	s.deferring = false
	s.flushList(s.pending)
	s.pending = s.pending[:0]
	if len(s.spans) > 0 {
		s.flushSpans()
	}
}

// flushList commits pending, in runs of hosts under one parent.
func (s *State) flushList(pending []HostID) {
	t := s.t
	for i := 0; i < len(pending); {
		p := t.hostParent[pending[i]]
		j := i + 1
		for j < len(pending) && t.hostParent[pending[j]] == p {
			j++
		}
		if j-i < batchRun {
			for _, h := range pending[i:j] {
				s.hostFlags[h] &^= flagPending
				s.commit(h)
			}
		} else {
			s.flushRun(p, pending[i:j])
		}
		i = j
	}
}

// flushRun commits hosts, all under domain p: each host's own figures, then
// their differences added up, to p and the domains above it.
func (s *State) flushRun(p int32, hosts []HostID) {
	acc := &s.acc
	acc.reset(s.nm, s.nb)
	s.batch = acc // commit adds each host's difference to it
	for _, h := range hosts {
		s.hostFlags[h] &^= flagPending
		s.commit(h)
	}
	s.batch = nil
	s.propagateRun(p, acc)
}

func (acc *aggDelta) reset(nm, nb int) {
	acc.free, acc.cap, acc.idle, acc.shared, acc.any, acc.moved = 0, 0, 0, 0, false, false
	acc.part = [PartialBuckets]int32{}
	if len(acc.model) != nm || len(acc.hist) != nm*nb {
		acc.model, acc.hist = make([]int32, nm), make([]int32, nm*nb)
	}
	clear(acc.model)
	clear(acc.hist)
}

// accumulate adds host h's difference (summary b before, a after) to acc,
// and records the host's touch as propagate would.
func (s *State) accumulate(acc *aggDelta, h HostID, b, a *hostSum) {
	acc.any = true
	if a.free != b.free || a.shared != b.shared || a.part != b.part {
		s.touch(h)
	}
	if a.free > b.free {
		s.raise()
	}
	if a.free != b.free {
		m := int(s.t.hostModel[h])
		acc.moved = true
		acc.free += a.free - b.free
		acc.model[m] += a.free - b.free
		acc.hist[m*s.nb+int(b.free)]--
		acc.hist[m*s.nb+int(a.free)]++
	}
	acc.cap += a.cap - b.cap
	acc.shared += int64(a.shared - b.shared)
	if a.part != b.part {
		addPart(acc.part[:], b.part, a.part)
	}
	acc.idle += b2i(a.idle) - b2i(b.idle)
}

// propagateRun adds acc to the aggregates of domain d and every domain
// above it (nothing if d < 0 or acc is empty).
func (s *State) propagateRun(d int32, acc *aggDelta) {
	if d < 0 || !acc.any {
		return
	}
	t := s.t
	nm, nb := s.nm, s.nb
	for ; d >= 0; d = t.domParent[d] {
		if acc.moved {
			s.domFree[d] += acc.free
			if nm > 1 {
				for m, v := range acc.model {
					s.domModel[int(d)*nm+m] += v
				}
			}
			base := int(d) * nm * nb
			for i, v := range acc.hist {
				s.domHist[base+i] += v
			}
		}
		s.domCap[d] += acc.cap
		s.domShared[d] += acc.shared
		if acc.part != ([PartialBuckets]int32{}) {
			for k, v := range acc.part {
				s.domPart[int(d)*PartialBuckets+k] += v
			}
		}
		if acc.idle != 0 {
			hosts, old := t.domHostEnd[d]-t.domHostLo[d], s.domIdle[d]
			if n := old + acc.idle; (old == hosts) != (n == hosts) {
				s.flipIdle(d)
			}
			s.domIdle[d] += acc.idle
		}
	}
}
