package topology

import "fmt"

// Whole idle hosts. A gang of whole-host pods (a training job's 4- or 8-GPU
// workers) mostly lands on idle hosts: healthy, no pods, every GPU free. For
// such a host the checks of a pod that takes all of its GPUs reduce to the
// host's idle bit, and the host's summary after the pod is known without
// reading its GPU bits again (free 0, not idle, capacity unchanged): the
// pod goes through takeWhole instead of summarize. Only journal-free
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
// heads the host's list. Unjournaled writes.
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
	r.Pod, r.job, r.rank, r.next, r.jnext = *p, id, rank, -1, jnext
	s.commitWhole(h)
}

// checkApart validates pods of job id, on distinct hosts (podsApart),
// against the State as it is now. A pod of no CPU or memory that takes
// every GPU of a clean idle host (takesWhole) — healthy, no pod, every GPU
// free — passes all of checkPod's checks: a gang's whole-host pods are
// checked here without a call each.
func (s *State) checkApart(id JobID, info *Job, pods []Pod) error {
	t := s.t
	for i := range pods {
		p := &pods[i]
		if h := p.Host; p.CPUMilli|p.MemoryMiB == 0 && uint(h) < uint(len(s.hostPods)) &&
			s.takesWhole(h, t.HostGPUCount(h), p) {
			continue
		}
		if err := s.checkPod(id, info, p); err != nil {
			return fmt.Errorf("pod %d: %w", i, err)
		}
	}
	return nil
}

// placeApart is placePods for the validated pods of a journal-free gang
// (checkApart), unjournaled: whole-host pods on clean idle hosts go
// straight to putWhole.
func (s *State) placeApart(id JobID, pods []Pod) (first, last int32) {
	info, t := &s.jobs[id].info, s.t
	first, last = -1, -1
	for i := range pods {
		p := &pods[i]
		slot := s.podFree
		s.podFree = s.pods[slot].jnext
		if h := p.Host; s.takesWhole(h, t.HostGPUCount(h), p) {
			s.putWhole(slot, id, info, int32(i), p, -1, int(t.hostGPU[h]), t.HostGPUCount(h))
		} else {
			s.putAt(slot, id, info, int32(i), p, -1)
		}
		if last >= 0 {
			s.pods[last].jnext = slot
		} else {
			first = slot
		}
		last = slot
	}
	s.nPods += int32(len(pods))
	return first, last
}

// commitWhole is commit for host h after a pod took all of its GPUs while it
// was idle and clean (takesWhole): deferred like commit, to a list of its
// own, which the flush commits by takeWhole (flush.go).
func (s *State) commitWhole(h HostID) {
	if !s.deferring {
		s.takeWhole(h)
		return
	}
	s.hostFlags[h] |= flagPending // not journaled: cleared before Apply returns
	s.pendingWhole = append(s.pendingWhole, h)
}

// takeWhole commits host h, idle and clean before a pod took all of its
// GPUs: the summary goes from n free GPUs and idle to none free, capacity,
// shared milli and partly used GPUs unchanged (an idle host has no partly
// used GPU), which commit would find by summarizing it again; propagate's
// parts for the free GPUs and idleness carry it to the aggregates.
func (s *State) takeWhole(h HostID) {
	if f := s.wholeTaken(h); f != 0 {
		s.propagateFree(h, f, 0)
	}
	s.propagateIdle(h, -1)
}

// takeWholeRun is takeWhole for deferred hosts all under domain p, their
// differences added up and propagated once (flushRun's way). Each host's
// own figures are written as wholeTaken writes them: a new generation and
// none free one by one, the free mask's and idle bits a range of
// consecutive hosts at a time (clearWholeBits).
func (s *State) takeWholeRun(p int32, hosts []HostID) {
	acc := &s.acc
	acc.reset(s.nm, s.nb)
	t, nb := s.t, s.nb
	flags, gen, hostFree := s.hostFlags, s.hostGen, s.hostFree
	free, model, hist := int32(0), acc.model, acc.hist
	for _, h := range hosts {
		flags[h] &^= flagPending
		gen[h]++
		f := int32(hostFree[h])
		hostFree[h] = 0
		if f == 0 {
			continue // a host without GPUs: only its idleness changed
		}
		s.touch(h)
		m := int(t.hostModel[h])
		free -= f
		model[m] -= f
		hist[m*nb+int(f)]--
		hist[m*nb]++
	}
	s.clearWholeBits(hosts)
	acc.free, acc.moved, acc.idle, acc.any = free, free != 0, -int32(len(hosts)), true
	s.propagateRun(p, acc)
}

// clearWholeBits clears the free-mask bits of the GPUs of hosts taken whole
// and their idle bits, a range of consecutive hosts (a rack's, say) at once.
func (s *State) clearWholeBits(hosts []HostID) {
	gpu := s.t.hostGPU
	for i := 0; i < len(hosts); {
		j := i + 1
		for j < len(hosts) && hosts[j] == hosts[j-1]+1 {
			j++
		}
		lo, hi := hosts[i], hosts[j-1]+1
		clearRange(s.freeW, int(gpu[lo]), int(gpu[hi]))
		clearRange(s.idleHostW, int(lo), int(hi))
		i = j
	}
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
