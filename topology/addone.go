package topology

import (
	"fmt"
	"math/bits"
)

// Apply's fast path for its commonest Delta: one operation that adds a job
// of one pod (an engine binds thousands of jobs of 1, 2 or 4 GPUs or a
// fraction of one a cycle). Such a Delta never needs the journal (its one
// pod is checked before the first write) nor deferred commits (one host),
// and its job's counters (the compact view, the movable and preemptible
// histograms, the count of jobs with an end) follow from its one pod: addOne
// runs reserve's and addJob's steps for it without their loops over
// operations, pods and pod sets, reading the job's attributes and its pod
// once. A pod that plainly fits (whole GPUs free in the free-mask, or a
// share of a usable GPU with that much free) passes checkPod at once
// (freeFor), and is placed by putFree or putFrac, which write what putAt's
// commits would, walking up the tree once. TestAddOneOracle compares it
// with the general path.

// addOne applies op, an AddJob of one pod, as the one operation of a Delta
// whose guards held: like Apply, it changes nothing if it fails.
func (s *State) addOne(op *Op) error {
	free, err := s.checkOne(op)
	if err != nil {
		return fmt.Errorf("op 0 (%s): %w", op.Kind, err)
	}
	// reserve's growth, after the checks (a rejected op grows nothing), if
	// the tables lack room (growFor's tests, without its call when not)
	if int(op.Job) >= len(s.jobs) || len(s.jobPrio) < len(s.jobs) || int(s.nPods) == len(s.pods) {
		s.growFor(op.Job, 1)
	}
	s.putOne(op.Job, &op.Info, &op.Pods[0], free)
	return nil
}

// checkOne validates op, an AddJob of one pod, against the State as it is
// now, with reserve's, addJob's and checkPod's checks in their order. free
// reports freeFor's verdict.
func (s *State) checkOne(op *Op) (free bool, err error) {
	id, info, p := op.Job, &op.Info, &op.Pods[0]
	if id < 0 || id > MaxJobID {
		return false, fmt.Errorf("%w: job id %d out of range 0…%d", ErrInvalid, id, MaxJobID)
	}
	if int(id) < len(s.jobs) && s.jobs[id].live {
		return false, fmt.Errorf("%w: job %d already present", ErrStale, id)
	}
	if !validOne(info, p, uint8(s.t.HostLevel()-NoLevel)) {
		if err := s.validateJob(info, op.Pods); err != nil {
			return false, err
		}
	}
	if s.freeFor(info, p) {
		return true, nil
	}
	if err := s.checkPod(id, info, p); err != nil {
		return false, fmt.Errorf("pod 0: %w", err)
	}
	return false, nil
}

// validOne reports that validateJob accepts a job with info of one pod p
// at once: its levels are in range and it has one pod set, of one pod of
// p's shape, with a valid slice (an engine's job). False leaves the verdict,
// and its error, to validateJob. A level l is in NoLevel…HostLevel when
// uint8(l-NoLevel) ≤ hl, hl = uint8(HostLevel-NoLevel). Small enough to be
// inlined.
func validOne(info *Job, p *Pod, hl uint8) bool {
	return len(info.Sets) == 1 && uint8(info.Required-NoLevel) <= hl && uint8(info.Preferred-NoLevel) <= hl &&
		sameShape(&info.Sets[0], p, hl)
}

// sameShape: set is of one pod of p's shape, with a valid slice.
func sameShape(set *PodSet, p *Pod, hl uint8) bool {
	return set.Count == 1 && uint8(set.SliceLevel-NoLevel) <= hl && set.SliceSize >= 0 &&
		int32(bits.OnesCount64(p.GPUs)) == set.GPUs && p.Milli == set.Milli && p.CPUMilli == set.CPUMilli &&
		p.MemoryMiB == set.MemoryMiB
}

// freeFor reports that checkPod accepts pod p of a job with info at once,
// every check of checkPod on the host's state done here: the job is not
// exclusive (which would claim the host's other GPUs too), the host has the
// pod's CPU and memory, and either the pod takes whole GPUs, all free in the
// free-mask (unused, not failed, not nominated, on a healthy host no job
// holds exclusively), or a share of one GPU, neither failed nor nominated,
// with that much free milli, on such a host. The free-mask is current: no
// commit is deferred between Applies. False leaves the verdict, and its
// error, to checkPod.
func (s *State) freeFor(info *Job, p *Pod) bool {
	t, h := s.t, p.Host
	if uint(h) >= uint(t.NumHosts()) || p.GPUs == 0 || info.Exclusive || p.CPUMilli < 0 || p.MemoryMiB < 0 ||
		p.CPUMilli > s.hostCPU[h] || p.MemoryMiB > s.hostMem[h] {
		return false
	}
	lo := int(t.hostGPU[h])
	n := int(t.hostGPU[h+1]) - lo
	if p.Milli == 0 {
		return p.GPUs&^getBits(s.freeW, lo, n) == 0
	}
	if p.Milli < 0 || p.Milli >= FullGPU || p.GPUs&(p.GPUs-1) != 0 || p.GPUs&^hostMask(n) != 0 ||
		s.hostFlags[h] != uint8(Healthy) {
		return false
	}
	g := lo + bits.TrailingZeros64(p.GPUs)
	return !testBit(s.failed, g) && !testBit(s.nominated, g) && int32(s.gpuMilli(g)) >= p.Milli
}

// putOne is addJob after the checks, for job id of one pod p, journal-free
// (the journal is off between Applies, commits are not deferred).
func (s *State) putOne(id JobID, info *Job, p *Pod, free bool) {
	j := &s.jobs[id]
	if n := j.nom; n >= 0 { // the nominee is placed: release its reservation
		s.releaseNomination(n)
	}
	own := j.info.Sets[:0] // the State's storage from this id's last job
	j.info = *info
	if len(info.Sets) == 1 && cap(own) > 0 { // ownSets, journal-free, for one set
		own = own[:1]
		own[0] = info.Sets[0]
		j.info.Sets = own
	} else {
		j.info.Sets = s.ownSets(own, info.Sets)
	}
	j.live = true
	slot := s.podFree
	s.podFree = s.pods[slot].jnext
	switch {
	case free && p.Milli > 0:
		s.putFrac(slot, id, &j.info, p)
	case free && !s.takesWhole(p.Host, s.t.HostGPUCount(p.Host), p):
		s.putFree(slot, id, &j.info, p)
	default:
		s.putAt(slot, id, &j.info, 0, p, -1)
	}
	j.first, j.last, j.n = slot, slot, 1
	s.nPods++
	s.countOne(id, info, p)
	s.nJobs++
}

// putFree is putAt, journal-free, for pod p of job id, of whole GPUs free
// in the free-mask (freeFor), the only pod of a job that is not exclusive:
// its host is plain (healthy, held by no job, its commit not deferred), and
// the host's free GPUs lose exactly the pod's (commitTaken without
// comparing masks).
func (s *State) putFree(slot int32, id JobID, info *Job, p *Pod) {
	t, h := s.t, p.Host
	lo := int(t.hostGPU[h])
	n := int(t.hostGPU[h+1]) - lo
	k := int32(bits.OnesCount64(p.GPUs))
	andNotBits(s.unused, lo, n, p.GPUs)
	if p.CPUMilli|p.MemoryMiB != 0 {
		s.takeCPUMem(h, -p.CPUMilli, -p.MemoryMiB)
	}
	next := s.linkOnHost(h, slot, id, 0)
	r := &s.pods[slot]
	r.Pod, r.job, r.rank, r.next, r.jnext = *p, id, 0, next, -1
	s.hostGen[h]++
	andNotBits(s.freeW, lo, n, p.GPUs)
	b := int32(s.hostFree[h])
	s.hostFree[h] = uint8(b - k)
	if info.Preemptible { // addPre's walk and propagateFree's in one
		s.propagateFreePre(h, b, b-k, prioBucket(info.Priority), k)
	} else {
		s.propagateFree(h, b, b-k)
	}
	if w, bit := &s.idleHostW[h>>6], uint64(1)<<(uint(h)&63); *w&bit != 0 { // it holds a pod now
		*w &^= bit
		s.propagateIdle(h, -1)
	}
}

// putFrac is putAt, journal-free, for pod p of job id, a share of one GPU
// that freeFor found usable (neither failed nor nominated, with that much
// free milli, on a healthy host no job holds exclusively), the only pod of
// a job that is not exclusive: its host is plain, so commitMilli's writes
// follow from the GPU's free milli before and after, and the walks up the
// tree of commitMilli, commitMask and addPre are one (propagateFrac). Its
// pod record and link repeat putFree's lines on purpose: a function of them
// is not inlined, and its call cost the first cycle 0.13M instructions.
func (s *State) putFrac(slot int32, id JobID, info *Job, p *Pod) {
	t, h := s.t, p.Host
	lo := int(t.hostGPU[h])
	n := int(t.hostGPU[h+1]) - lo
	g := lo + bits.TrailingZeros64(p.GPUs)
	before := int32(s.gpuMilli(g)) // FullGPU (unused) or partly used: freeFor
	after := before - p.Milli
	s.takeMilli(lo, n, p.GPUs, after)
	if p.CPUMilli|p.MemoryMiB != 0 {
		s.takeCPUMem(h, -p.CPUMilli, -p.MemoryMiB)
	}
	next := s.linkOnHost(h, slot, id, 0)
	r := &s.pods[slot]
	r.Pod, r.job, r.rank, r.next, r.jnext = *p, id, 0, next, -1
	s.hostGen[h]++
	shared, part, bFree, kb, ka, pb := int32(s.hostShared[h]), s.hostPart[h], int32(-1), -1, -1, -1
	if before < FullGPU {
		shared, part, kb = shared-before, part-partBit(before), int(before/PartialBucketMilli)
	} else { // unused and available: it leaves the free mask
		andNotBits(s.freeW, lo, n, p.GPUs)
		bFree = int32(s.hostFree[h])
		s.hostFree[h] = uint8(bFree - 1)
	}
	if after > 0 {
		shared, part, ka = shared+after, part+partBit(after), int(after/PartialBucketMilli)
	}
	dShared := int64(shared - int32(s.hostShared[h]))
	s.hostShared[h], s.hostPart[h] = uint16(shared), part
	if info.Preemptible {
		pb = prioBucket(info.Priority)
	}
	s.propagateFrac(h, bFree, dShared, kb, ka, pb)
	if w, bit := &s.idleHostW[h>>6], uint64(1)<<(uint(h)&63); *w&bit != 0 { // it holds a pod now
		*w &^= bit
		s.propagateIdle(h, -1)
	}
}

// countOne adds job id, of one pod p, to the compact view and the
// histograms (what setJobView, countMovable, countPreSize and countEnd do
// from the job's record): its size is the pod's GPU count, or the largest
// host's for an exclusive job; the GPUs it touches, the pod's.
func (s *State) countOne(id JobID, info *Job, p *Pod) {
	n := int64(bits.OnesCount64(p.GPUs))
	size := n
	if info.Exclusive {
		size = int64(s.t.maxGPUs)
	}
	s.jobPrio[id], s.jobPods[id], s.jobMilli[id] = info.Priority, 1, uint64(podMilli(n, p.Milli))
	s.jobSizes[id], s.jobHost0[id] = int32(size), p.Host
	s.setPreBit(id, info.Preemptible)
	if movable(info) {
		s.movHist[movBucket(n)]++
	}
	if info.Preemptible { // addPreSize, journal-free
		pb, b := prioBucket(info.Priority), movBucket(size)
		i := pb*movBuckets + b
		s.preN[i]++
		if b >= 64 {
			s.preSum[i] += uint64(size)
		}
		s.countPreIndex(id, info.Priority, size, pb, 1)
	}
	if info.HasEnd {
		s.endJobs++
	}
}
