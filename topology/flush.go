package topology

// Deferred commits flushed together. Once every operation of a Delta has
// succeeded, the hosts whose commits waited (see deferCommits) commit in
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

// flushPending commits the hosts whose commit was deferred, unjournaled. A
// run of one host propagates directly (a repair's one or two hosts); the
// second host of a run starts adding up.
func (s *State) flushPending() {
	s.deferring = false
	if len(s.pending) == 0 {
		return
	}
	t := s.t
	acc := &s.acc
	var run flushRun
	for _, h := range s.pending {
		s.hostFlags[h] &^= flagPending
		lo := int(t.hostGPU[h])
		s.wu32(&s.hostGen[h], s.hostGen[h]+1)
		var b, a hostSum
		if !s.commitHost(h, lo, int(t.hostGPU[h+1])-lo, &b, &a) {
			continue
		}
		if p := t.hostParent[h]; run.n == 0 || p != run.parent {
			s.endRun(&run, acc)
			run = flushRun{parent: p, h: h, b: b, a: a}
		} else if run.n == 1 {
			acc.reset(s.nm, s.nb)
			s.accumulate(acc, run.h, &run.b, &run.a)
		}
		if run.n > 0 {
			s.accumulate(acc, h, &b, &a)
		}
		run.n++
	}
	s.endRun(&run, acc)
	s.pending = s.pending[:0]
}

// flushRun is the run of hosts under one parent flushPending is in: its
// first host's summaries, and how many hosts it has.
type flushRun struct {
	parent int32
	h      HostID
	b, a   hostSum
	n      int
}

// endRun propagates a run: its one host directly, or what acc added up.
func (s *State) endRun(run *flushRun, acc *aggDelta) {
	switch {
	case run.n == 1:
		s.propagate(run.h, &run.b, &run.a)
	case run.n > 1:
		s.propagateRun(run.parent, acc)
	}
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
