package topology

// Runs of whole idle hosts. A gang of whole-host pods placed in rank order
// lies on idle hosts in ascending order, in runs of consecutive hosts: a
// whole rack's 18 or an SU's 144 on an empty cluster, but only 4.7 on
// average (most of one host) for BenchmarkCycle's first cycle at 90% load.
// So the pods are checked in one pass, a few instructions each (an idle bit
// per pod), the run's boundaries falling out of it; a run is placed as one:
// the pods' records and their hosts' own figures (first pod, free count,
// generation, touch) in one loop, the GPUs' unused and free bits and the
// hosts' idle bits cleared a range at a time (one word for a short run);
// and at the flush the aggregates above each parent domain a run crosses
// move once, by the run's count (every host of a run has the same GPU
// count n and model m, so each goes from bucket n to bucket 0 of the
// histograms), added up level by level over the runs (runAcc), so that a
// domain above many runs moves once. Touches are written in pod order as
// the runs are placed, ahead of the Delta's deferred hosts: the touch log's
// readers bring every touched host up to date, whatever the order within
// an Apply. Only journal-free gangs (checkApart, placeApart) take runs; the
// journaled path (checkPod, putAt, commit) is the oracle they are tested
// against (TestWholeRunOracle).

// hostSpan is a run of pods of a journal-free gang on consecutive whole
// idle hosts [lo, hi), of n GPUs and model m each, from pod index pod on:
// found by checkApart, placed by placeApart, its aggregates committed by
// the flush (s.spans).
type hostSpan struct {
	pod    int32 // its first pod
	lo, hi HostID
	n, m   int32
}

// checkSpans is checkApart's work: the runs of pods on consecutive whole
// idle hosts go to s.spans (for placeApart), the other pods through
// checkPod. It returns the index of the pod that failed.
func (s *State) checkSpans(id JobID, info *Job, pods []Pod) (int, error) {
	s.spans = s.spans[:0]
	fast := len(s.pending) == 0 // nothing deferred yet: idle bits are current
	for i := 0; i < len(pods); {
		if fast {
			if j := s.appendSpans(pods, i); j > i {
				i = j
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

// appendSpans appends to s.spans the runs of pods from pods[i] on that take
// every GPU of an idle host as whole GPUs, with no CPU or memory (what
// takesWhole says, without its pending check: nothing is pending in a
// journal-free gang's check, since it is the Delta's only operation), split
// where the hosts stop being consecutive or change GPU count or model. It
// returns the index of the first pod that is not such a pod. One pass, a
// few instructions a pod: a gang on a loaded cluster lies on short runs
// (BenchmarkCycle's first cycle: 4.7 hosts on average, most of one).
func (s *State) appendSpans(pods []Pod, i int) int {
	t, idle := s.t, s.idleHostW
	nh := HostID(len(s.hostPods))
	start, next := i, HostID(-1)            // the open span's first pod; the host that extends it
	if n := t.uniGPUs; n > 0 && s.nm == 1 { // every host has n GPUs, of one model
		mask := hostMask(n)
		for ; i < len(pods); i++ {
			p := &pods[i]
			h := p.Host
			if uint(h) >= uint(nh) || p.GPUs != mask || p.Milli|p.CPUMilli|p.MemoryMiB != 0 ||
				idle[h>>6]&(1<<(uint(h)&63)) == 0 {
				break
			}
			if h != next {
				s.closeSpan(pods, start, i, next)
				start = i
			}
			next = h + 1
		}
		s.closeSpan(pods, start, i, next)
		return i
	}
	gpu, model := t.hostGPU, t.hostModel
	for ; i < len(pods); i++ {
		p := &pods[i]
		h := p.Host
		if uint(h) >= uint(nh) || p.GPUs != hostMask(int(gpu[h+1]-gpu[h])) || p.Milli|p.CPUMilli|p.MemoryMiB != 0 ||
			idle[h>>6]&(1<<(uint(h)&63)) == 0 {
			break
		}
		if h != next || gpu[h+1]-gpu[h] != gpu[h]-gpu[h-1] || model[h] != model[h-1] {
			s.closeSpan(pods, start, i, next)
			start = i
		}
		next = h + 1
	}
	s.closeSpan(pods, start, i, next)
	return i
}

// closeSpan appends the span of pods [start, i), on hosts up to hi, if not
// empty.
func (s *State) closeSpan(pods []Pod, start, i int, hi HostID) {
	if i == start {
		return
	}
	t, lo := s.t, pods[start].Host
	s.spans = append(s.spans, hostSpan{int32(start), lo, hi, t.hostGPU[lo+1] - t.hostGPU[lo], int32(t.hostModel[lo])})
}

// placeSpan places pods on the whole idle hosts of span sp, as putWhole
// would one by one, in the slots of the free list from slot on, keeping
// their links (placeApart), and writes the hosts' own figures and touches
// as wholeTaken and propagateFree would; it returns the slot after them and
// the last. The aggregates wait for the flush (flushSpans, which reads
// s.spans), or are written at once when nothing is deferred.
func (s *State) placeSpan(id JobID, info *Job, pods []Pod, sp *hostSpan, slot int32) (next, last int32) {
	tl := s.touches
	k := int(sp.hi - sp.lo)
	ps := pods[sp.pod : int(sp.pod)+k]
	gen, free, first := s.hostGen[sp.lo:sp.hi], s.hostFree[sp.lo:sp.hi], s.hostPods[sp.lo:sp.hi]
	for j := range ps { // the host slices are ps's length: no bounds checks
		r := &s.pods[slot]
		last, slot = slot, r.jnext
		r.Pod, r.job, r.rank, r.next = ps[j], id, sp.pod+int32(j), last // a ring of one
		first[j] = last
		gen[j]++
		free[j] = 0
	}
	if sp.n > 0 { // a host without GPUs: only its idleness changes
		q := tl.seq
		for h := sp.lo; h < sp.hi; h++ {
			tl.ids[q%TouchLogSize] = h
			q++
		}
		tl.seq = q
	}
	s.clearSpan(sp)
	if info.Exclusive || info.Preemptible {
		s.markSpan(info, sp)
	}
	return slot, last
}

// clearSpan clears the unused and free bits of span sp's GPUs and its
// hosts' idle bits: inline where a range lies in one word (a short span's),
// else by clearRange.
func (s *State) clearSpan(sp *hostSpan) {
	if lo, hi := int(s.t.hostGPU[sp.lo]), int(s.t.hostGPU[sp.hi]); hi > lo {
		if off := uint(lo) & 63; int(off)+hi-lo < 64 { // the shifts are below 64: no checks
			m := (uint64(1)<<(uint(hi-lo)&63) - 1) << (off & 63)
			s.unused[lo>>6] &^= m
			s.freeW[lo>>6] &^= m
		} else {
			clearRange(s.unused, lo, hi)
			clearRange(s.freeW, lo, hi)
		}
	}
	lo, hi := int(sp.lo), int(sp.hi)
	if off := uint(lo) & 63; int(off)+hi-lo < 64 {
		s.idleHostW[lo>>6] &^= (1<<(uint(hi-lo)&63) - 1) << (off & 63)
	} else {
		clearRange(s.idleHostW, lo, hi)
	}
}

// markSpan is putWhole's exclusive and preemptible bookkeeping for the hosts
// of span sp (idle hosts: none is held exclusively): each host's flag, and
// the GPUs added to the aggregates of the domains above, a parent domain's
// share of the span at a time (what addExcl and addPre add host by host,
// unjournaled).
func (s *State) markSpan(info *Job, sp *hostSpan) {
	t := s.t
	if info.Exclusive {
		for h := sp.lo; h < sp.hi; h++ {
			s.hostFlags[h] |= flagExclusive
		}
	}
	b := int32(prioBucket(info.Priority))
	for lo := sp.lo; lo < sp.hi; {
		p := t.hostParent[lo]
		hi := min(sp.hi, HostID(t.domHostEnd[p]))
		g := sp.n * int32(hi-lo)
		for d := p; d >= 0; d = t.domParent[d] {
			if info.Exclusive {
				s.domExcl[d] += g
			}
			if info.Preemptible {
				s.domPre[d*prioBuckets+b] += g
			}
		}
		lo = hi
	}
}

// flushSpans commits the aggregates of the spans placeApart placed
// (s.spans): the domains above them, added up level by level (runAcc), so
// that a domain above many of them moves once.
func (s *State) flushSpans() {
	t := s.t
	acc := &s.runAcc
	acc.reset(t.HostLevel())
	leaf := len(acc.dom) - 1 // the hosts' parents' level
	for i := range s.spans {
		sp := &s.spans[i]
		for lo := sp.lo; lo < sp.hi; {
			p := t.hostParent[lo]
			hi := min(sp.hi, HostID(t.domHostEnd[p]))
			if p == acc.dom[leaf] && sp.n == acc.n && sp.m == acc.m { // the last span's parent
				acc.total += int32(hi - lo)
			} else {
				s.addRun(acc, p, sp.n, sp.m, int32(hi-lo))
			}
			lo = hi
		}
	}
	s.spillRuns(acc)
	s.spans = s.spans[:0]
}

// runAcc adds up whole hosts taken under the domains above the runs
// flushed so far: at each level, the domain above the last run and the
// count of hosts (of n GPUs and model m) added when it became the last
// run's; the hosts under it since are total less that base.
type runAcc struct {
	dom, base []int32 // [level]
	total     int32
	n, m      int32
}

func (acc *runAcc) reset(levels Level) {
	if len(acc.dom) != int(levels) {
		acc.dom, acc.base = make([]int32, levels), make([]int32, levels)
	}
	for l := range acc.dom {
		acc.dom[l] = -1
	}
	acc.total, acc.n, acc.m = 0, -1, -1
}

// addRun adds k whole hosts of n GPUs and model m under domain p to acc:
// the domains above p that acc holds already count them; those it does not
// hold replace theirs, whose counts go to the aggregates (spill).
func (s *State) addRun(acc *runAcc, p, n, m, k int32) {
	if n != acc.n || m != acc.m {
		s.spillRuns(acc)
		acc.n, acc.m = n, m
	}
	t := s.t
	for d := p; d >= 0; d = t.domParent[d] {
		l := t.domLevel[d]
		if acc.dom[l] == d { // so are the domains above it
			break
		}
		if old := acc.dom[l]; old >= 0 {
			s.spill(old, acc.n, acc.m, acc.total-acc.base[l])
		}
		acc.dom[l], acc.base[l] = d, acc.total
	}
	acc.total += k
}

// spillRuns writes every level's count in acc to its domain and empties acc.
func (s *State) spillRuns(acc *runAcc) {
	for l, d := range acc.dom {
		if d >= 0 {
			s.spill(d, acc.n, acc.m, acc.total-acc.base[l])
		}
		acc.dom[l] = -1
	}
	acc.total = 0
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
