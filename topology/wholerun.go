package topology

// Runs of whole idle hosts. A gang of whole-host pods placed in rank order
// mostly lies on consecutive hosts, all idle: a rack's 18, an SU's 144. Such
// a run of pods is checked, placed and committed as one: the checks read a
// range of idle bits, the GPUs' unused, free and idle bits are cleared a
// range at a time, and the aggregates above each parent domain the run
// crosses move once, by the run's count (every host of a run has the same
// GPU count n and model m, so each goes from bucket n to bucket 0 of the
// histograms). What stays per pod is what is per pod: its record, its slot
// and its host's first pod, generation and touch. Only journal-free gangs
// (checkApart, placeApart) take runs; placeApart's general path
// (takesWhole, putWhole) is the oracle they are tested against
// (TestWholeRunOracle).

// hostSpan is a run of pods of a journal-free gang on consecutive whole
// idle hosts [lo, hi): from pod index pod on, as checkApart found it
// (wholeSpans), or, once placed, waiting for the flush (wholeRuns).
type hostSpan struct {
	pod    int32
	lo, hi HostID
}

// wholeSpan returns how many pods from the start of pods form a run: on
// consecutive hosts from pods[0].Host, each of no CPU, memory or milli,
// taking every GPU of a host whose GPU count and model are the first
// host's, all idle (idleClean: nothing is pending in a journal-free gang's
// check, since it is the Delta's only operation). 0 if pods[0] is not such
// a pod; n is the hosts' GPU count.
func (s *State) wholeSpan(pods []Pod) (k int, n int) {
	t := s.t
	lo := pods[0].Host
	if uint(lo) >= uint(len(s.hostPods)) {
		return 0, 0
	}
	g := t.hostGPU[lo]
	n = int(t.hostGPU[lo+1] - g)
	mask, m := hostMask(n), t.hostModel[lo]
	pods = pods[:min(len(pods), len(s.hostPods)-int(lo))]
	h := lo
	for i := range pods {
		p := &pods[i]
		if p.Host != h || p.GPUs != mask || p.Milli|p.CPUMilli|p.MemoryMiB != 0 {
			break
		}
		if next := t.hostGPU[h+1]; next-g != int32(n) || (s.nm > 1 && t.hostModel[h] != m) {
			break
		}
		g += int32(n)
		h++
	}
	return int(idlePrefix(s.idleHostW, int(lo), int(h)) - int(lo)), n
}

// idlePrefix returns the first host in [lo, hi) whose bit in w is clear, or
// hi if all are set.
func idlePrefix(w []uint64, lo, hi int) int {
	for lo < hi {
		off := uint(lo) & 63
		c := min(hi-lo, 64-int(off))
		if gap := ^(w[lo>>6] >> off) & hostMask(c); gap != 0 {
			return lo + trailing(gap)
		}
		lo += c
	}
	return hi
}

// checkSpans is checkApart's work: the runs of pods go to s.spans (for
// placeApart), the other pods through checkPod.
func (s *State) checkSpans(id JobID, info *Job, pods []Pod) (int, error) {
	s.spans = s.spans[:0]
	fast := len(s.pending) == 0 && len(s.wholeRuns) == 0 // nothing deferred yet: idle bits are current
	for i := 0; i < len(pods); {
		if fast {
			if k, _ := s.wholeSpan(pods[i:]); k > 0 {
				h := pods[i].Host
				s.spans = append(s.spans, hostSpan{int32(i), h, h + HostID(k)})
				i += k
				continue
			}
		}
		if err := s.checkPod(id, info, &pods[i]); err != nil {
			return i, err
		}
		i++
	}
	return 0, nil
}

// placeSpan places pods on the whole idle hosts of span sp, as putWhole
// would one by one, in the slots of the free list from slot on, keeping
// their links (placeApart); it returns the slot after them and the last.
// The run's commit waits for the flush (wholeRuns), or happens at once when
// nothing is deferred.
func (s *State) placeSpan(id JobID, info *Job, pods []Pod, sp hostSpan, slot int32) (next, last int32) {
	t := s.t
	h := sp.lo
	for i := int(sp.pod); h < sp.hi; i++ {
		r := &s.pods[slot]
		last, slot = slot, r.jnext
		r.Pod, r.job, r.rank, r.next = pods[i], id, int32(i), -1
		s.hostPods[h] = last
		h++
	}
	clearRange(s.unused, int(t.hostGPU[sp.lo]), int(t.hostGPU[sp.hi]))
	if info.Exclusive || info.Preemptible {
		s.markSpan(info, sp)
	}
	if s.deferring {
		s.wholeRuns = append(s.wholeRuns, sp)
	} else {
		s.takeSpans(sp.lo, sp.hi)
	}
	return slot, last
}

// markSpan is putWhole's exclusive and preemptible bookkeeping for the hosts
// of span sp (idle hosts: none is held exclusively).
func (s *State) markSpan(info *Job, sp hostSpan) {
	for h := sp.lo; h < sp.hi; h++ {
		if info.Exclusive {
			s.hostFlags[h] |= flagExclusive
			s.addExcl(h, 1)
		}
		if info.Preemptible {
			s.addPre(h, info.Priority, int32(s.t.HostGPUCount(h)))
		}
	}
}

// takeSpans commits the whole idle hosts [lo, hi) taken by a run at once
// (nothing deferred): flushRuns for one run.
func (s *State) takeSpans(lo, hi HostID) {
	s.wholeRuns = append(s.wholeRuns, hostSpan{-1, lo, hi})
	s.flushRuns()
}

// flushRuns commits the runs of whole idle hosts placeApart and commitWhole
// deferred (wholeRuns), in order: each host's own figures a parent domain's
// share of a run at a time (takeHosts), and the aggregates above added up
// level by level (runAcc), so that a domain above many runs moves once.
func (s *State) flushRuns() {
	t := s.t
	acc := &s.runAcc
	acc.reset(t.HostLevel())
	for _, sp := range s.wholeRuns {
		for lo := sp.lo; lo < sp.hi; {
			p := t.hostParent[lo]
			hi := min(sp.hi, HostID(t.domHostEnd[p]))
			n, m := s.takeHosts(lo, hi)
			s.addRun(acc, p, n, m, int32(hi-lo))
			lo = hi
		}
	}
	s.spillRuns(acc)
	s.wholeRuns = s.wholeRuns[:0]
}

// takeHosts writes the own figures of whole idle hosts [lo, hi), taken
// whole, all of the first's GPU count n and model m, which it returns: a
// new generation and, if they have GPUs, a touch each, their free counts
// zeroed, their free and idle bits cleared.
func (s *State) takeHosts(lo, hi HostID) (n, m int32) {
	t := s.t
	n, m = t.hostGPU[lo+1]-t.hostGPU[lo], int32(t.hostModel[lo])
	gen := s.hostGen[lo:hi]
	for i := range gen {
		gen[i]++
	}
	if n > 0 { // a host without GPUs: only its idleness changes
		tl := s.touches
		for h, q := lo, tl.seq; h < hi; h, q = h+1, q+1 {
			tl.ids[q%TouchLogSize] = h
		}
		tl.seq += uint64(hi - lo)
		clear(s.hostFree[lo:hi])
		clearRange(s.freeW, int(t.hostGPU[lo]), int(t.hostGPU[hi]))
	}
	clearRange(s.idleHostW, int(lo), int(hi))
	return n, m
}

// runAcc adds up whole hosts taken under the domains above the runs
// flushed so far: at each level, the domain above the last run and how
// many hosts (of n GPUs and model m) went under it since it became the
// last run's.
type runAcc struct {
	dom, k []int32 // [level]
	n, m   int32
}

func (acc *runAcc) reset(levels Level) {
	if len(acc.dom) != int(levels) {
		acc.dom, acc.k = make([]int32, levels), make([]int32, levels)
	}
	for l := range acc.dom {
		acc.dom[l], acc.k[l] = -1, 0
	}
	acc.n, acc.m = -1, -1
}

// addRun adds k whole hosts of n GPUs and model m under domain p to acc:
// the domains above p that acc holds already add them up; those it does
// not replace theirs, which go to the aggregates (spill).
func (s *State) addRun(acc *runAcc, p, n, m, k int32) {
	if n != acc.n || m != acc.m {
		s.spillRuns(acc)
		acc.n, acc.m = n, m
	}
	t := s.t
	for d := p; d >= 0; d = t.domParent[d] {
		l := t.domLevel[d]
		if acc.dom[l] == d { // so are the domains above it
			for ; ; l-- {
				acc.k[l] += k
				if l == 0 {
					return
				}
			}
		}
		if acc.k[l] != 0 {
			s.spill(acc.dom[l], acc.n, acc.m, acc.k[l])
		}
		acc.dom[l], acc.k[l] = d, k
	}
}

// spillRuns writes every level's sum in acc to its domain and empties acc.
func (s *State) spillRuns(acc *runAcc) {
	for l, d := range acc.dom {
		if acc.k[l] != 0 {
			s.spill(d, acc.n, acc.m, acc.k[l])
		}
		acc.dom[l], acc.k[l] = -1, 0
	}
}

// spill writes to domain d's aggregates that k of its whole idle hosts, of
// n GPUs and model m, were taken: it loses their free GPUs and idle hosts,
// and they move from bucket n to bucket 0 of its histograms.
func (s *State) spill(d, n, m, k int32) {
	nm, nb := int32(s.nm), int32(s.nb)
	s.domFree[d] -= n * k
	if nm > 1 {
		s.domModel[d*nm+m] -= n * k
	}
	base := d*nm*nb + m*nb
	s.domHist[base+n] -= k
	s.domHist[base] += k
	if s.domIdle[d] == s.t.domHosts[d] { // it was entirely idle; with k fewer, it is not
		s.flipIdle(d)
	}
	s.domIdle[d] -= k
}
