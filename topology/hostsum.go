package topology

import "math/bits"

func trailing(m uint64) int { return bits.TrailingZeros64(m) }

// hostSum is what a host contributes to the aggregates of its domains. It is
// a pure function of the host's primary data (summarize); every mutation takes
// the summary before, changes the primary data, and commits the difference.
type hostSum struct {
	mask   uint64 // free GPUs
	free   int32  // popcount(mask)
	cap    int32  // healthy GPUs if the host is healthy
	shared int32  // free milli on partly used GPUs, if usable
	part   uint32 // partly used GPUs, if usable, by bucket (8 bits each)
	idle   bool   // usable, no pods, every GPU free
}

func (s *State) summarize(h HostID) hostSum {
	var sum hostSum
	lo := int(s.t.hostGPU[h])
	s.summarizeInto(h, lo, int(s.t.hostGPU[h+1])-lo, &sum)
	return sum
}

// summarizeInto is summarize for host h with GPUs [lo, lo+n), into *sum
// (zeroed by the caller).
func (s *State) summarizeInto(h HostID, lo, n int, sum *hostSum) {
	f := s.hostFlags[h]
	if Health(f&flagHealthMask) != Healthy {
		return
	}
	failed := getBits(s.failed, lo, n)
	sum.cap = int32(n - bits.OnesCount64(failed))
	if f&flagExclusive != 0 {
		return
	}
	avail := hostMask(n) &^ (failed | getBits(s.nominated, lo, n))
	sum.mask = getBits(s.unused, lo, n) & avail
	sum.free = int32(bits.OnesCount64(sum.mask))
	sum.idle = int(sum.free) == n && s.hostPods[h] < 0
	if part := getBits(s.partial, lo, n) & avail; part != 0 {
		for ; part != 0; part &= part - 1 {
			m := s.milli[lo+bits.TrailingZeros64(part)]
			sum.shared += int32(m)
			sum.part += partBit(int32(m))
		}
	}
}

// commit records that host h's primary data changed: it bumps the host's
// generation, recomputes its summary, and writes the difference from the
// derived data it left last time (free mask, free count, capacity, shared
// milli, idleness) to the host and every enclosing domain — or, while a run
// of hosts is flushed together, to that run's sum (s.batch).
func (s *State) commit(h HostID) {
	if s.deferring {
		if s.hostFlags[h]&flagPending == 0 {
			s.hostFlags[h] |= flagPending // not journaled: cleared before Apply returns
			s.pending = append(s.pending, h)
		}
		return
	}
	t := s.t
	lo := int(t.hostGPU[h])
	n := int(t.hostGPU[h+1]) - lo
	s.wu32(&s.hostGen[h], s.hostGen[h]+1)
	var a hostSum
	s.summarizeInto(h, lo, n, &a)
	i := int(h)
	if old := getBits(s.freeW, lo, n); a.mask != old {
		s.setBits(s.freeW, lo, n, a.mask)
	}
	a.mask = 0
	idle := s.idleHostW[i>>6]&(1<<(uint(i)&63)) != 0
	if a.free == int32(s.hostFree[h]) && a.cap == int32(s.hostCap[h]) && a.idle == idle &&
		a.shared == int32(s.hostShared[h]) && a.part == s.hostPart[h] {
		return // the aggregates stay: the common case of a deferred commit
	}
	b := hostSum{
		free:   int32(s.hostFree[h]),
		cap:    int32(s.hostCap[h]),
		shared: int32(s.hostShared[h]),
		part:   s.hostPart[h],
		idle:   idle,
	}
	if a.free != b.free {
		s.w8(&s.hostFree[h], uint8(a.free))
	}
	if a.cap != b.cap {
		s.w8(&s.hostCap[h], uint8(a.cap))
	}
	if a.shared != b.shared {
		s.w16(&s.hostShared[h], uint16(a.shared))
	}
	if a.part != b.part {
		s.wu32(&s.hostPart[h], a.part)
	}
	if a.idle != b.idle {
		s.w64(&s.idleHostW[i>>6], s.idleHostW[i>>6]^1<<(uint(i)&63))
	}
	if s.jr.on {
		s.jr.sums = append(s.jr.sums, sumEntry{h, b, a})
	}
	if s.batch != nil { // a run of hosts flushed together (flush.go)
		s.accumulate(s.batch, h, &b, &a)
		return
	}
	s.propagate(h, &b, &a)
}

// propagate adds the difference between summaries b and a of host h to the
// aggregates of every domain above it. Its writes are not journaled one by
// one: commit journals the pair, and a rollback propagates it backwards
// (the aggregates are sums over hosts, so that restores them exactly).
func (s *State) propagate(h HostID, b, a *hostSum) {
	t := s.t
	dFree, dCap, dShared := a.free-b.free, a.cap-b.cap, int64(a.shared-b.shared)
	dIdle := b2i(a.idle) - b2i(b.idle)
	if dShared != 0 || a.part != b.part {
		s.propagateShared(h, dFree != 0, dShared, b.part, a.part)
	}
	if dFree != 0 {
		s.propagateFree(h, b.free, a.free)
	}
	parent := t.domParent
	if dCap != 0 { // one pass per changed aggregate: most commits change one or two
		for d := t.hostParent[h]; d >= 0; d = parent[d] {
			s.domCap[d] += dCap
		}
	}
	if dIdle != 0 {
		s.propagateIdle(h, dIdle)
	}
}

// propagateIdle adds delta (±1) to the idle-host count of every domain above
// host h, flipping a domain's entirely-idle bit when the count reaches or
// leaves its number of hosts.
func (s *State) propagateIdle(h HostID, delta int32) {
	t := s.t
	parent, count, idle := t.domParent, t.domHosts, s.domIdle
	for d := t.hostParent[h]; d >= 0; d = parent[d] {
		hosts, n := count[d], idle[d]+delta
		if idle[d] == hosts || n == hosts {
			s.flipIdle(d)
		}
		idle[d] = n
	}
}

// flipIdle flips domain d's bit in its level's idle-domain bitset.
func (s *State) flipIdle(d int32) {
	t := s.t
	i := t.domIdx[d]
	s.idleW[t.domLevel[d]][i>>6] ^= 1 << (uint(i) & 63)
}

// propagateFree is propagate's part for free GPUs (host h had bFree, has
// aFree): the free counts, per model and histogram of every domain above h,
// and the host's touch, recorded as a raise when its free GPUs grew
// (FreeRaised).
func (s *State) propagateFree(h HostID, bFree, aFree int32) {
	t := s.t
	m, nm, nb := int32(t.hostModel[h]), int32(s.nm), int32(s.nb)
	s.touch(h)
	if aFree > bFree {
		s.raise()
	}
	if nm > 1 {
		s.propagateModel(h, m, aFree-bFree)
	}
	parent, free, hist := t.domParent, s.domFree, s.domHist
	dFree, row, ib, ia := aFree-bFree, nm*nb, m*nb+bFree, m*nb+aFree // a domain's histograms, the host's buckets in them
	for d := t.hostParent[h]; d >= 0; d = parent[d] {
		free[d] += dFree
		hist[d*row+ib]--
		hist[d*row+ia]++
	}
}

// propagateFreePre is propagateFree and addPre (unjournaled) in one walk
// up from host h: its free GPUs went from bFree to aFree, and a
// preemptible job of priority bucket pb took k of them (putFree).
func (s *State) propagateFreePre(h HostID, bFree, aFree int32, pb int, k int32) {
	t := s.t
	m, nm, nb := int32(t.hostModel[h]), int32(s.nm), int32(s.nb)
	s.touch(h)
	if nm > 1 {
		s.propagateModel(h, m, aFree-bFree)
	}
	parent, free, hist, pre := t.domParent, s.domFree, s.domHist, s.domPre
	dFree, row, ib, ia := aFree-bFree, nm*nb, m*nb+bFree, m*nb+aFree
	for d := t.hostParent[h]; d >= 0; d = parent[d] {
		free[d] += dFree
		hist[d*row+ib]--
		hist[d*row+ia]++
		pre[int(d)*prioBuckets+pb] += k
	}
}

// propagateFrac is putFrac's walk up from host h: propagateMilli's (shared
// milli by dShared, a partly used GPU leaving bucket kb and joining bucket
// ka, -1 for none), propagateFree's when the pod's GPU left the free mask
// (bFree ≥ 0, the host's free GPUs before) and addPre's of one GPU of
// priority bucket pb (≥ 0: the job is preemptible), in one. It touches h.
func (s *State) propagateFrac(h HostID, bFree int32, dShared int64, kb, ka, pb int) {
	t := s.t
	m, nm, nb := int32(t.hostModel[h]), int32(s.nm), int32(s.nb)
	s.touch(h)
	if bFree >= 0 && nm > 1 {
		s.propagateModel(h, m, -1)
	}
	parent, free, hist, shared, part, pre := t.domParent, s.domFree, s.domHist, s.domShared, s.domPart, s.domPre
	row, ib := nm*nb, m*nb+bFree
	for d := t.hostParent[h]; d >= 0; d = parent[d] {
		if bFree >= 0 {
			free[d]--
			hist[d*row+ib]--
			hist[d*row+ib-1]++
		}
		shared[d] += dShared
		if kb >= 0 {
			part[int(d)*PartialBuckets+kb]--
		}
		if ka >= 0 {
			part[int(d)*PartialBuckets+ka]++
		}
		if pb >= 0 {
			pre[int(d)*prioBuckets+pb]++
		}
	}
}

// propagateModel adds dFree to the free GPUs of model m of every domain
// above host h (a tree of several models).
func (s *State) propagateModel(h HostID, m, dFree int32) {
	nm := int32(s.nm)
	for d := s.t.hostParent[h]; d >= 0; d = s.t.domParent[d] {
		s.domModel[d*nm+m] += dFree
	}
}

// propagateShared is propagate's part for shared milli and partly used GPUs
// (fractional pods only): their aggregates, and the host's touch when the
// free GPUs did not change (propagateFree touches it then).
func (s *State) propagateShared(h HostID, touched bool, dShared int64, bPart, aPart uint32) {
	if !touched {
		s.touch(h)
	}
	var dPart [PartialBuckets]int32 // the bucket counts' differences, unpacked once
	addPart(dPart[:], bPart, aPart)
	parent, shared, part := s.t.domParent, s.domShared, s.domPart
	for d := s.t.hostParent[h]; d >= 0; d = parent[d] {
		shared[d] += dShared
		p := part[int(d)*PartialBuckets : int(d)*PartialBuckets+PartialBuckets]
		for k, v := range dPart {
			p[k] += v
		}
	}
}

// propagateMilli is propagateShared for one GPU's change (commitMilli):
// the partly-used GPUs leave bucket kb and join bucket ka (-1: none).
func (s *State) propagateMilli(h HostID, touched bool, dShared int64, kb, ka int) {
	if !touched {
		s.touch(h)
	}
	parent, shared, part := s.t.domParent, s.domShared, s.domPart
	for d := s.t.hostParent[h]; d >= 0; d = parent[d] {
		shared[d] += dShared
		if kb >= 0 {
			part[int(d)*PartialBuckets+kb]--
		}
		if ka >= 0 {
			part[int(d)*PartialBuckets+ka]++
		}
	}
}

// addPre adds delta GPUs held by a preemptible job of priority prio on host h
// to the preemptible aggregates of h's domains (journaled as one entry).
func (s *State) addPre(h HostID, prio int32, delta int32) {
	if s.jr.on {
		s.jr.pres = append(s.jr.pres, preEntry{h, prio, delta})
	}
	b := int32(prioBucket(prio))
	parent, pre := s.t.domParent, s.domPre
	for d := s.t.hostParent[h]; d >= 0; d = parent[d] {
		pre[d*prioBuckets+b] += delta
	}
}

// addExcl adds (sign +1) or removes (-1) host h's GPUs to or from the
// exclusively held GPUs of its domains, journaled as a host sign to negate.
func (s *State) addExcl(h HostID, sign int32) {
	if s.jr.on {
		s.jr.excl = append(s.jr.excl, exclEntry{h, sign})
	}
	n := sign * int32(s.t.HostGPUCount(h))
	for d := s.t.hostParent[h]; d >= 0; d = s.t.domParent[d] {
		s.domExcl[d] += n
	}
}

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// Commits that know what changed. A pod placed or removed on a plain host
// (plainHost), or a nomination made or dropped there, changes the host's
// summary in a way known without summarizing it again: its free mask loses
// or gains the pod's or nomination's GPUs, a fractional pod's GPU moves
// its shared milli and bucket counts, capacity stays. commitTaken,
// commitGiven, commitMilli and commitNominated write what commit would,
// for the hosts of journal-free Deltas that commit at once (a deferred
// commit summarizes the host once at the flush, whatever happened to it).

// plainHost reports whether host h is healthy, not held exclusively, and
// its commit is not deferred (so its derived data is current), in a Delta
// that commits at once (not deferring, so not journaled either).
func (s *State) plainHost(h HostID) bool {
	return !s.deferring && s.hostFlags[h] == uint8(Healthy)
}

// commitTaken is commit for plain host h of GPUs [lo, lo+n) after a pod of
// whole GPUs took gpus and was linked there: the free mask loses gpus, and
// the host, holding a pod, is not idle.
func (s *State) commitTaken(h HostID, lo, n int, gpus uint64) {
	s.hostGen[h]++
	old := getBits(s.freeW, lo, n)
	s.commitMask(h, lo, n, old, old&^gpus, false)
}

// commitGiven is commit for plain host h of GPUs [lo, lo+n) after a pod of
// whole GPUs gave back gpus and was unlinked: the free mask gains those of
// them that are neither failed nor nominated.
func (s *State) commitGiven(h HostID, lo, n int, gpus uint64) {
	s.hostGen[h]++
	old := getBits(s.freeW, lo, n)
	mask := old | gpus&^(getBits(s.failed, lo, n)|getBits(s.nominated, lo, n))
	s.commitMask(h, lo, n, old, mask, mask == hostMask(n) && s.hostPods[h] < 0)
}

// commitMilli is commit for plain host h of GPUs [lo, lo+n) after a
// fractional pod took or gave back milli-GPUs of its GPU g, whose free milli
// went from before to after (as gpuMilli: FullGPU unused, 0 in use, else
// partly used), and was linked or unlinked: only g's share of the summary
// changes, and only if g is available (neither failed nor nominated).
func (s *State) commitMilli(h HostID, lo, n, g int, before, after int32) {
	s.hostGen[h]++
	old := getBits(s.freeW, lo, n)
	mask, part, shared := old, s.hostPart[h], int32(s.hostShared[h])
	kb, ka := -1, -1 // the partly-used buckets g leaves and joins
	if bit := uint64(1) << uint(g-lo); (getBits(s.failed, lo, n)|getBits(s.nominated, lo, n))&bit == 0 {
		mask = mask&^bit | b2u(after == FullGPU)*bit
		if before > 0 && before < FullGPU {
			shared, part, kb = shared-before, part-partBit(before), int(before/PartialBucketMilli)
		}
		if after > 0 && after < FullGPU {
			shared, part, ka = shared+after, part+partBit(after), int(after/PartialBucketMilli)
		}
	}
	if b := int32(s.hostShared[h]); shared != b || part != s.hostPart[h] {
		s.hostShared[h], s.hostPart[h] = uint16(shared), part
		s.propagateMilli(h, mask != old, int64(shared-b), kb, ka)
	}
	s.commitMask(h, lo, n, old, mask, mask == hostMask(n) && s.hostPods[h] < 0)
}

// commitNominated is commit for plain host h of GPUs [lo, lo+n) after its
// GPUs m, none of them partly used, were nominated (on) or no longer: their
// free bits go, or come back for those unused and neither failed nor
// nominated; shared milli and partly used GPUs stay.
func (s *State) commitNominated(h HostID, lo, n int, m uint64, on bool) {
	s.hostGen[h]++
	old := getBits(s.freeW, lo, n)
	mask := old &^ m
	if !on {
		mask = old | m&getBits(s.unused, lo, n)&^(getBits(s.failed, lo, n)|getBits(s.nominated, lo, n))
	}
	s.commitMask(h, lo, n, old, mask, mask == hostMask(n) && s.hostPods[h] < 0)
}

// partBit is a partly used GPU of free milli m in a host's bucket counts
// (hostSum.part).
func partBit(m int32) uint32 { return 1 << (8 * uint(m/PartialBucketMilli)) }

// commitMask writes plain host h's new free mask (old before) and idleness,
// and their differences to the aggregates, as commit does. Unjournaled:
// plain hosts are those of journal-free Deltas.
func (s *State) commitMask(h HostID, lo, n int, old, mask uint64, idle bool) {
	if mask != old {
		putBits(s.freeW, lo, n, mask)
		b, a := int32(s.hostFree[h]), int32(bits.OnesCount64(mask))
		s.hostFree[h] = uint8(a)
		s.propagateFree(h, b, a)
	}
	w, bit := &s.idleHostW[h>>6], uint64(1)<<(uint(h)&63)
	if was := *w&bit != 0; idle != was {
		*w ^= bit
		s.propagateIdle(h, b2i(idle)-b2i(was))
	}
}
