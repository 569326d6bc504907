package topology

import (
	"fmt"
	"math/bits"
)

// putAt writes pod p of job id at rank into slot (whose job-list successor is
// jnext): takes its resources on its host and links it there.
func (s *State) putAt(slot int32, id JobID, info *Job, rank int32, p *Pod, jnext int32) {
	t := s.t
	h := p.Host
	lo, n := int(t.hostGPU[h]), t.HostGPUCount(h)
	if !s.jr.on && s.takesWhole(h, n, p) {
		s.putWhole(slot, id, info, rank, p, jnext, lo, n)
		return
	}
	g, before := lo+bits.TrailingZeros64(p.GPUs), int32(0) // a fractional pod's GPU, its free milli
	if p.Milli == 0 {
		s.clearMask(s.unused, lo, n, p.GPUs)
	} else {
		before = int32(s.gpuMilli(g))
		s.takeMilli(lo, n, p.GPUs, before-p.Milli)
	}
	if p.CPUMilli|p.MemoryMiB != 0 {
		s.takeCPUMem(h, -p.CPUMilli, -p.MemoryMiB)
	}
	switch {
	case info.Exclusive && s.hostFlags[h]&flagExclusive == 0:
		s.w8(&s.hostFlags[h], s.hostFlags[h]|flagExclusive)
		s.addExcl(h, 1)
		if info.Preemptible {
			s.addPre(h, info.Priority, int32(n))
		}
	case !info.Exclusive && info.Preemptible:
		s.addPre(h, info.Priority, int32(bits.OnesCount64(p.GPUs)))
	}
	next := s.linkOnHost(h, slot, id, rank)
	r := s.podW(slot)
	r.Pod, r.job, r.rank, r.next, r.jnext = *p, id, rank, next, jnext
	switch {
	case !s.plainHost(h):
		s.commit(h)
	case p.Milli == 0:
		s.commitTaken(h, lo, n, p.GPUs)
	default:
		s.commitMilli(h, lo, n, g, before, before-p.Milli)
	}
}

// takeCPUMem adds cpu milli-CPU and mem MiB to host h's free CPU and memory
// (callers skip pods without CPU or memory requests: nothing to write).
func (s *State) takeCPUMem(h HostID, cpu, mem int32) {
	if cpu != 0 {
		s.w32(&s.hostCPU[h], s.hostCPU[h]+cpu)
	}
	if mem != 0 {
		s.w32(&s.hostMem[h], s.hostMem[h]+mem)
	}
}

// takeMilli sets the free milli of the host's one GPU in mask m to v.
func (s *State) takeMilli(lo, n int, m uint64, v int32) {
	g := lo + bits.TrailingZeros64(m)
	part := v > 0 && v < FullGPU
	if !s.jr.on { // unjournaled: g's own bits, not the host's
		if part {
			s.milli[g] = uint16(v)
		}
		i, bit := g>>6, uint64(1)<<(uint(g)&63)
		s.unused[i] = s.unused[i]&^bit | b2u(v == FullGPU)*bit
		s.partial[i] = s.partial[i]&^bit | b2u(part)*bit
		return
	}
	if part {
		s.w16(&s.milli[g], uint16(v))
	}
	unused, partial := getBits(s.unused, lo, n)&^m, getBits(s.partial, lo, n)&^m
	switch {
	case v == FullGPU:
		unused |= m
	case v > 0:
		partial |= m
	}
	s.setBits(s.unused, lo, n, unused)
	s.setBits(s.partial, lo, n, partial)
}

// A host's pods form a ring ordered by (job, rank): s.hostPods[h] is the
// last, whose next is the first (a lone pod is its own next). A pod of a
// job above every other on the host, the commonest insertion (an engine's
// new jobs have new, higher ids), then goes after the last at once, with
// one pod record read (the one PrefetchHost asks for) instead of a walk
// through the host's pods, each a dependent cache miss.

// hostRing returns the first and the last pod of host h's pods, -1 when it
// has none: iterate with for p, last := s.hostRing(h); p >= 0; p =
// s.hostAfter(p, last).
func (s *State) hostRing(h HostID) (first, last int32) {
	if last = s.hostPods[h]; last < 0 {
		return -1, -1
	}
	return s.pods[last].next, last
}

// hostAfter returns the pod after p on its host, whose last pod is last,
// or -1 after the last.
func (s *State) hostAfter(p, last int32) int32 {
	if p == last {
		return -1
	}
	return s.pods[p].next
}

// hostHead returns host h's first pod, or -1.
func (s *State) hostHead(h HostID) int32 {
	first, _ := s.hostRing(h)
	return first
}

// linkOnHost inserts slot into host h's ring, ordered by (job, rank), by
// writing its predecessor's link (and the ring's last when it comes after
// every pod there); it returns the slot's successor (itself on an empty
// host).
func (s *State) linkOnHost(h HostID, slot int32, id JobID, rank int32) int32 {
	last := s.hostPods[h]
	if last < 0 {
		s.w32(&s.hostPods[h], slot)
		return slot
	}
	if r := &s.pods[last]; r.job < id || r.job == id && r.rank < rank { // after every pod
		first := r.next
		s.podW(last).next = slot
		s.w32(&s.hostPods[h], slot)
		return first
	}
	prev, q := last, s.pods[last].next // some pod comes after slot: the walk stops there
	for s.pods[q].job < id || s.pods[q].job == id && s.pods[q].rank < rank {
		prev, q = q, s.pods[q].next
	}
	s.podW(prev).next = slot
	return q
}

// unlinkFromHost removes slot from its host's ring.
func (s *State) unlinkFromHost(h HostID, slot int32) {
	last := s.hostPods[h]
	prev, q := last, s.pods[last].next
	for q != slot {
		prev, q = q, s.pods[q].next
	}
	if prev == slot { // the host's only pod
		s.w32(&s.hostPods[h], -1)
		return
	}
	s.podW(prev).next = s.pods[slot].next
	if slot == last {
		s.w32(&s.hostPods[h], prev)
	}
}

// releasePod frees pod slot of a live job and returns the slot to the free
// list.
func (s *State) releasePod(slot int32) {
	s.unplace(slot)
	*s.podW(slot) = podRec{job: -1, next: -1, jnext: s.podFree}
	s.w32(&s.podFree, slot)
	s.w32(&s.nPods, s.nPods-1)
}

// unplace gives pod slot's resources back to its host and unlinks it from
// the host; the slot keeps its record and its place in the job's list.
func (s *State) unplace(slot int32) {
	t := s.t
	p := &s.pods[slot].Pod // read before any write to the slot's record
	h, gpus, milli := p.Host, p.GPUs, p.Milli
	info := &s.jobs[s.pods[slot].job].info
	lo, n := int(t.hostGPU[h]), t.HostGPUCount(h)
	g, before := lo+bits.TrailingZeros64(gpus), int32(0) // a fractional pod's GPU, its free milli
	if milli == 0 {
		s.setMask(s.unused, lo, n, gpus)
	} else {
		before = int32(s.gpuMilli(g))
		s.takeMilli(lo, n, gpus, before+milli)
	}
	if p.CPUMilli|p.MemoryMiB != 0 {
		s.takeCPUMem(h, p.CPUMilli, p.MemoryMiB)
	}
	s.unlinkFromHost(h, slot)
	switch {
	case s.hostFlags[h]&flagExclusive != 0:
		if s.hostPods[h] < 0 {
			s.w8(&s.hostFlags[h], s.hostFlags[h]&^flagExclusive)
			s.addExcl(h, -1)
			if info.Preemptible {
				s.addPre(h, info.Priority, -int32(n))
			}
		}
	default:
		if info.Preemptible {
			s.addPre(h, info.Priority, -int32(bits.OnesCount64(gpus)))
		}
		if s.plainHost(h) { // the summary changes by the pod's GPUs alone
			if milli == 0 {
				s.commitGiven(h, lo, n, gpus)
			} else {
				s.commitMilli(h, lo, n, g, before, before+milli)
			}
			return
		}
	}
	s.commit(h)
}

// releasePods frees every pod of job id (its record keeps its attributes).
func (s *State) releasePods(id JobID) {
	for p := s.jobs[id].first; p >= 0; {
		next := s.pods[p].jnext
		s.releasePod(p)
		p = next
	}
}

// present reports whether job id is live (ids beyond the table are absent).
func (s *State) present(id JobID) bool { return int(id) < len(s.jobs) && s.jobs[id].live }

func (s *State) removeJob(id JobID) error {
	if !s.present(id) {
		return fmt.Errorf("%w: job %d not present", ErrStale, id)
	}
	s.countMovable(id, -1)
	s.countPreSize(id, -1)
	s.countEnd(id, -1)
	s.releasePods(id)
	j := s.jobW(id)
	j.live, j.first, j.last, j.n = false, -1, -1, 0
	s.clearJobView(id)
	s.w32(&s.nJobs, s.nJobs-1)
	return nil
}

func (s *State) moveJob(id JobID, pods []Pod) error {
	if !s.present(id) {
		return fmt.Errorf("%w: job %d not present", ErrStale, id)
	}
	rec := s.jobs[id]
	if int(rec.n) != len(pods) {
		return fmt.Errorf("%w: job %d has %d pods, move gives %d", ErrInvalid, id, rec.n, len(pods))
	}
	i := 0
	for p := rec.first; p >= 0; p = s.pods[p].jnext {
		old, nw := &s.pods[p].Pod, &pods[i]
		if old.NumGPUs() != nw.NumGPUs() || old.Milli != nw.Milli || old.CPUMilli != nw.CPUMilli || old.MemoryMiB != nw.MemoryMiB {
			return fmt.Errorf("%w: pod %d changes shape", ErrInvalid, i)
		}
		i++
	}
	s.releasePods(id)
	j := s.jobW(id)
	j.first, j.last = -1, -1
	first, last, err := s.placePods(id, pods, true)
	if err != nil {
		return err
	}
	j = s.jobW(id)
	j.first, j.last = first, last
	s.w32((*int32)(&s.jobHost0[id]), int32(s.pods[first].Host))
	return nil
}

// replacePods re-places the pods of job id at the given ranks (strictly
// ascending) with pods (pod i keeping the shape of the pod at ranks[i]); the
// job's other pods stay as they are — on a draining host too.
func (s *State) replacePods(id JobID, ranks []int32, pods []Pod) error {
	if !s.present(id) {
		return fmt.Errorf("%w: job %d not present", ErrStale, id)
	}
	if len(ranks) != len(pods) || len(ranks) == 0 {
		return fmt.Errorf("%w: %d ranks and %d pods", ErrInvalid, len(ranks), len(pods))
	}
	slots := s.replaceSlots[:0]
	p := s.jobs[id].first
	for k, r := range ranks {
		if p = s.podAtRank(p, r); p < 0 {
			break
		}
		old, nw := &s.pods[p].Pod, &pods[k]
		if old.NumGPUs() != nw.NumGPUs() || old.Milli != nw.Milli || old.CPUMilli != nw.CPUMilli || old.MemoryMiB != nw.MemoryMiB {
			return fmt.Errorf("%w: pod %d changes shape", ErrInvalid, r)
		}
		slots = append(slots, p)
		p = s.pods[p].jnext
	}
	s.replaceSlots = slots
	if len(slots) != len(ranks) {
		return fmt.Errorf("%w: ranks must be strictly ascending and below the job's %d pods", ErrInvalid, s.jobs[id].n)
	}
	for _, slot := range slots { // release first: a replacement may reuse a GPU another one frees
		s.unplace(slot)
	}
	info := &s.jobs[id].info
	for i, slot := range slots {
		if err := s.checkPod(id, info, &pods[i]); err != nil {
			return fmt.Errorf("pod %d: %w", ranks[i], err)
		}
		s.putAt(slot, id, info, s.pods[slot].rank, &pods[i], s.pods[slot].jnext)
		if s.pods[slot].rank == 0 { // the first pod: its host in the job view
			s.w32((*int32)(&s.jobHost0[id]), int32(pods[i].Host))
		}
	}
	return nil
}

// podAtRank returns the slot of the pod of rank r in a job's pod list from
// slot p on (the list is in rank order), or -1.
func (s *State) podAtRank(p, r int32) int32 {
	pods := s.pods
	for p >= 0 && pods[p].rank < r {
		p = pods[p].jnext
	}
	if p >= 0 && pods[p].rank == r {
		return p
	}
	return -1
}

// gpuMilli is GPU g's free milli: FullGPU when unused, the stored value when
// partly used, else 0. milli[g] is meaningful only while g is partly used, so
// whole-GPU pods never write it.
func (s *State) gpuMilli(g int) uint16 {
	switch {
	case testBit(s.unused, g):
		return FullGPU
	case testBit(s.partial, g):
		return s.milli[g]
	}
	return 0
}
