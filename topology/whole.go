package topology

import "fmt"

// Whole idle hosts. A gang of whole-host pods (a training job's 4- or 8-GPU
// workers) mostly lands on idle hosts: healthy, no pods, every GPU free. For
// such a host the checks of a pod that takes all of its GPUs reduce to the
// host's idle bit, and the host's summary after the pod is known without
// reading its GPU bits again (free 0, not idle, capacity unchanged): the
// pod goes through commitWhole instead of summarize. Only journal-free
// Deltas take this path (one AddJob, its pods on distinct hosts: apply.go),
// so a host it marks changes no further before its deferred commit. The
// idle bit is derived data, current only while the host's commit is not
// deferred (flagPending): a host touched before takes the general path.

// idleClean reports whether host h is idle and its derived data current.
func (s *State) idleClean(h HostID) bool {
	return s.idleHostW[h>>6]&(1<<(uint(h)&63)) != 0 && s.hostFlags[h]&flagPending == 0
}

// takesWhole reports whether pod p, on host h of n GPUs, takes every GPU of
// a clean idle host (idleClean) as whole GPUs.
func (s *State) takesWhole(h HostID, n int, p *Pod) bool {
	return p.Milli == 0 && p.GPUs == hostMask(n) && s.idleClean(h)
}

// putWhole is putAt for pod p that takes every GPU of a clean idle host
// (takesWhole) in a journal-free Delta: the host has no GPU in use and no
// pod to link the new one among, so its GPUs' bits are cleared and the pod
// is the host's ring of one. Unjournaled writes.
func (s *State) putWhole(slot int32, id JobID, info *Job, rank int32, p *Pod, jnext int32, lo, n int) {
	h := p.Host
	andNotBits(s.unused, lo, n, hostMask(n))
	if p.CPUMilli|p.MemoryMiB != 0 {
		s.takeCPUMem(h, -p.CPUMilli, -p.MemoryMiB)
	}
	if info.Exclusive { // an idle host is not held exclusively
		s.hostFlags[h] |= flagExclusive
		s.addExcl(h, 1)
	}
	if info.Preemptible {
		s.addPre(h, info.Priority, int32(n))
	}
	s.hostPods[h] = slot
	r := &s.pods[slot]
	r.Pod, r.job, r.rank, r.next, r.jnext = *p, id, rank, slot, jnext // a ring of one
	s.commitWhole(h)
}

// checkApart validates pods of job id, on distinct hosts (podsApart),
// against the State as it is now. Runs of pods of no CPU or memory that take
// every GPU of consecutive clean idle hosts — healthy, no pod, every GPU
// free — pass all of checkPod's checks: a gang's whole-host pods are checked
// a run at a time (checkSpans, wholerun.go), and the runs kept for
// placeApart.
func (s *State) checkApart(id JobID, info *Job, pods []Pod) error {
	if i, err := s.checkSpans(id, info, pods); err != nil {
		return fmt.Errorf("pod %d: %w", i, err)
	}
	return nil
}

// placeApart is placePods for the validated pods of a journal-free gang
// (checkApart), unjournaled: the runs checkApart found go through
// placeSpan, the other pods through putAt. The pods take the first
// len(pods) slots of the free list, which are linked by jnext already: the
// job's list is that prefix, cut after its last slot.
func (s *State) placeApart(id JobID, pods []Pod) (first, last int32) {
	info := &s.jobs[id].info
	first = s.podFree
	slot, i := first, 0
	for k := range s.spans {
		sp := &s.spans[k]
		for ; i < int(sp.pod); i++ {
			slot, last = s.pods[slot].jnext, slot
			s.putAt(last, id, info, int32(i), &pods[i], slot)
		}
		slot, last = s.placeSpan(id, info, pods, sp, slot)
		i += int(sp.hi - sp.lo)
	}
	for ; i < len(pods); i++ {
		slot, last = s.pods[slot].jnext, slot
		s.putAt(last, id, info, int32(i), &pods[i], slot)
	}
	s.podFree = slot
	s.pods[last].jnext = -1
	s.nPods += int32(len(pods))
	if !s.deferring {
		s.flushSpans()
	}
	return first, last
}

// commitWhole is commit for host h after a pod took all of its GPUs while it
// was idle and clean (takesWhole): the host's own figures (wholeTaken), and
// propagate's parts for its free GPUs and idleness, at once even in a
// deferring Delta (the journal-free gang of placeApart, where nothing reads
// the aggregates before the flush).
func (s *State) commitWhole(h HostID) {
	if f := s.wholeTaken(h); f != 0 {
		s.propagateFree(h, f, 0)
	}
	s.propagateIdle(h, -1)
}

// wholeTaken writes host h's own figures after a pod took every GPU of it
// while it was idle and clean — a new generation, none free, not idle — and
// returns the free GPUs it had. Not journaled: whole hosts are taken only in
// journal-free Deltas.
func (s *State) wholeTaken(h HostID) int32 {
	lo := int(s.t.hostGPU[h])
	n := int(s.t.hostGPU[h+1]) - lo
	s.hostGen[h]++
	andNotBits(s.freeW, lo, n, hostMask(n))
	f := int32(s.hostFree[h])
	s.hostFree[h] = 0
	s.idleHostW[h>>6] &^= 1 << (uint(h) & 63)
	return f
}
