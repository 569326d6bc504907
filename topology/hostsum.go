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
	idle   bool   // usable, no pods, every GPU free
}

// usable: healthy and not held exclusively — the host can take new work of
// any job.
func (s *State) usable(h HostID) bool {
	return s.hostFlags[h] == uint8(Healthy)
}

func (s *State) summarize(h HostID) hostSum {
	t := s.t
	lo := int(t.hostGPU[h])
	n := int(t.hostGPU[h+1]) - lo
	var sum hostSum
	f := s.hostFlags[h]
	if Health(f&flagHealthMask) != Healthy {
		return sum
	}
	failed := getBits(s.failed, lo, n)
	sum.cap = int32(n - bits.OnesCount64(failed))
	if f&flagExclusive != 0 {
		return sum
	}
	avail := hostMask(n) &^ (failed | getBits(s.nominated, lo, n))
	sum.mask = getBits(s.unused, lo, n) & avail
	sum.free = int32(bits.OnesCount64(sum.mask))
	sum.idle = int(sum.free) == n && s.hostPods[h] < 0
	for part := getBits(s.partial, lo, n) & avail; part != 0; part &= part - 1 {
		sum.shared += int32(s.milli[lo+bits.TrailingZeros64(part)])
	}
	return sum
}

// cached is host h's summary as the derived data hold it now.
func (s *State) cached(h HostID) hostSum {
	lo := int(s.t.hostGPU[h])
	i := int(h)
	return hostSum{
		mask:   getBits(s.freeW, lo, int(s.t.hostGPU[h+1])-lo),
		free:   int32(s.hostFree[h]),
		cap:    int32(s.hostCap[h]),
		shared: int32(s.hostShared[h]),
		idle:   s.idleHostW[i>>6]&(1<<(uint(i)&63)) != 0,
	}
}

// commit records that host h's primary data changed: it bumps the host's
// generation, recomputes its summary, and writes the difference from the
// cached one to the host's derived data and every enclosing domain.
func (s *State) commit(h HostID) {
	a := s.summarize(h)
	b := s.cached(h)
	s.wu32(&s.hostGen[h], s.hostGen[h]+1)
	if a == b {
		return
	}
	t := s.t
	lo := int(t.hostGPU[h])
	if a.mask != b.mask {
		s.setBits(s.freeW, lo, int(t.hostGPU[h+1])-lo, a.mask)
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
	if a.idle != b.idle {
		i := int(h)
		s.w64(&s.idleHostW[i>>6], s.idleHostW[i>>6]^1<<(uint(i)&63))
	}
	s.propagate(h, b, a)
}

func (s *State) propagate(h HostID, b, a hostSum) {
	t := s.t
	m := int32(t.hostModel[h])
	nm, nb := int32(s.nm), int32(s.nb)
	dFree, dCap, dShared := a.free-b.free, a.cap-b.cap, int64(a.shared-b.shared)
	dIdle := b2i(a.idle) - b2i(b.idle)
	for d := t.hostParent[h]; d >= 0; d = t.domParent[d] {
		if dFree != 0 {
			if t.domParent[d] == 0 {
				s.touch(d)
			}
			s.w32(&s.domFree[d], s.domFree[d]+dFree)
			if nm > 1 {
				s.w32(&s.domModel[d*nm+m], s.domModel[d*nm+m]+dFree)
			}
			base := (d*nm + m) * nb
			s.w32(&s.domHist[base+b.free], s.domHist[base+b.free]-1)
			s.w32(&s.domHist[base+a.free], s.domHist[base+a.free]+1)
		}
		if dCap != 0 {
			s.w32(&s.domCap[d], s.domCap[d]+dCap)
		}
		if dShared != 0 {
			s.wi64(&s.domShared[d], s.domShared[d]+dShared)
		}
		if dIdle != 0 {
			s.addIdle(d, dIdle)
		}
	}
}

// addIdle changes domain d's idle-host count and flips its entirely-idle bit
// when that changes.
func (s *State) addIdle(d, delta int32) {
	t := s.t
	hosts := t.domHostEnd[d] - t.domHostLo[d]
	was := s.domIdle[d] == hosts
	s.w32(&s.domIdle[d], s.domIdle[d]+delta)
	if was != (s.domIdle[d] == hosts) {
		l := t.domLevel[d]
		i := d - t.levelStart[l]
		w := s.idleW[l]
		s.w64(&w[i>>6], w[i>>6]^1<<(uint(i)&63))
	}
}

// addPre adds delta GPUs held by a preemptible job of priority prio on host h
// to the preemptible aggregates of h's domains.
func (s *State) addPre(h HostID, prio int32, delta int32) {
	b := int32(prioBucket(prio))
	t := s.t
	for d := t.hostParent[h]; d >= 0; d = t.domParent[d] {
		p := &s.domPre[d*prioBuckets+b]
		s.w32(p, *p+delta)
	}
}

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}
