package topology

// derive computes the derived data from the primary data alone, from scratch:
// NewState, UnmarshalBinary and Rebase start from it, and Check compares it
// with what Apply kept incrementally. O(GPUs + hosts·levels + pods).
func (s *State) derive() agg {
	t := s.t
	a := newAgg(t, s.nm, s.nb)
	nm, nb := int32(s.nm), int32(s.nb)
	for hi := range t.NumHosts() {
		h := HostID(hi)
		sum := s.summarize(h)
		lo := int(t.hostGPU[h])
		for m := sum.mask; m != 0; m &= m - 1 {
			i := lo + trailing(m)
			a.freeW[i>>6] |= 1 << (uint(i) & 63)
		}
		a.hostFree[h] = uint8(sum.free)
		a.hostCap[h] = uint8(sum.cap)
		a.hostShared[h] = uint16(sum.shared)
		a.hostPart[h] = sum.part
		if sum.idle {
			a.idleHostW[hi>>6] |= 1 << (uint(hi) & 63)
		}
		m := int32(t.hostModel[h])
		for d := t.hostParent[h]; d >= 0; d = t.domParent[d] {
			a.domFree[d] += sum.free
			if nm > 1 {
				a.domModel[d*nm+m] += sum.free
			}
			a.domHist[(d*nm+m)*nb+sum.free]++
			a.domCap[d] += sum.cap
			a.domShared[d] += int64(sum.shared)
			addPart(a.domPart[int(d)*PartialBuckets:], 0, sum.part)
			a.domIdle[d] += b2i(sum.idle)
		}
		s.derivePre(&a, h)
	}
	for d := range a.domIdle {
		if a.domIdle[d] == t.domHostEnd[d]-t.domHostLo[d] {
			l := t.domLevel[d]
			i := int32(d) - t.levelStart[l]
			a.idleW[l][i>>6] |= 1 << (uint(i) & 63)
		}
	}
	return a
}

// derivePre adds host h's preemptible holdings: all its GPUs to the owner's
// bucket when a preemptible job holds it exclusively, else each preemptible
// pod's GPUs; and its GPUs to the exclusively held ones if it is.
func (s *State) derivePre(a *agg, h HostID) {
	t := s.t
	add := func(prio, n int32) {
		b := int32(prioBucket(prio))
		for d := t.hostParent[h]; d >= 0; d = t.domParent[d] {
			a.domPre[d*prioBuckets+b] += n
		}
	}
	if s.hostFlags[h]&flagExclusive != 0 {
		for d := t.hostParent[h]; d >= 0; d = t.domParent[d] {
			a.domExcl[d] += int32(t.HostGPUCount(h))
		}
		if j := &s.jobs[s.pods[s.hostPods[h]].job]; j.info.Preemptible {
			add(j.info.Priority, int32(t.HostGPUCount(h)))
		}
		return
	}
	for p, last := s.hostRing(h); p >= 0; p = s.hostAfter(p, last) {
		if j := &s.jobs[s.pods[p].job]; j.info.Preemptible {
			add(j.info.Priority, int32(s.pods[p].NumGPUs()))
		}
	}
}
