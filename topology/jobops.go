package topology

import (
	"fmt"
	"math/bits"
)

func (s *State) addJob(id JobID, info *Job, pods []Pod) error {
	if s.jobs[id].live {
		return fmt.Errorf("%w: job %d already present", ErrStale, id)
	}
	if err := s.validateJob(info, pods); err != nil {
		return err
	}
	switch { // validate before any write: the journal-free path
	case s.jr.on:
	case len(pods) > 1: // pods on distinct hosts (podsApart)
		if err := s.checkApart(id, info, pods); err != nil {
			return err
		}
	default:
		if err := s.checkPod(id, info, &pods[0]); err != nil {
			return fmt.Errorf("pod 0: %w", err)
		}
	}
	if n := s.jobs[id].nom; n >= 0 { // the nominee is placed: release its reservation
		s.releaseNomination(n)
	}
	// placePod reads the job's attributes from its record; own is the State's
	// storage from this id's last job.
	j := s.jobW(id)
	own := j.info.Sets[:0]
	j.info = *info
	j.info.Sets = s.ownSets(own, info.Sets)
	j.live = true
	var first, last int32
	if !s.jr.on && len(pods) > 1 {
		first, last = s.placeApart(id, pods)
	} else {
		var err error
		if first, last, err = s.placePods(id, pods, s.jr.on); err != nil {
			return err
		}
	}
	j.first, j.last, j.n = first, last, int32(len(pods)) // journaled with the record (jobW)
	milli, size := s.podSums(info, pods)
	s.setJobView(id, milli, size)
	s.countMovable(id, 1)
	s.countPreSize(id, 1)
	s.countEnd(id, 1)
	s.w32(&s.nJobs, s.nJobs+1)
	return nil
}

// ownSets copies sets into the State's storage: into dst's capacity, with
// journaled writes (a rollback restores the record's old slice header and
// what its backing array held: a job removed and added again in one Delta
// shares the array), or fresh.
func (s *State) ownSets(dst, sets []PodSet) []PodSet {
	if len(sets) == 0 {
		return dst[:0]
	}
	if cap(dst) < len(sets) {
		return append(make([]PodSet, 0, len(sets)), sets...)
	}
	dst = dst[:len(sets)]
	for i := range sets {
		s.wSet(&dst[i], sets[i])
	}
	return dst
}

// podsApart reports whether pods are on distinct hosts, all in range. Such
// pods do not interact (each host's GPUs, CPU, memory and exclusivity see
// one of them), so each can be checked against the State before the first
// write, and a job of them added without the undo journal. O(pods): pods
// on ascending hosts (a gang placed in the tree's order) are apart; others
// have their hosts marked in the host flags, unmarked before it returns.
func (s *State) podsApart(pods []Pod) bool {
	n := HostID(s.t.NumHosts())
	if ascending(pods) {
		return pods[0].Host >= 0 && pods[len(pods)-1].Host < n
	}
	i := 0
	for ; i < len(pods); i++ {
		h := pods[i].Host
		if h < 0 || h >= n || s.hostFlags[h]&flagSeen != 0 {
			break
		}
		s.hostFlags[h] |= flagSeen
	}
	for _, p := range pods[:i] {
		s.hostFlags[p.Host] &^= flagSeen
	}
	return i == len(pods)
}

// ascending reports whether pods (at least one) are on strictly ascending
// hosts.
func ascending(pods []Pod) bool {
	for i := 1; i < len(pods); i++ {
		if pods[i].Host <= pods[i-1].Host {
			return false
		}
	}
	return true
}

// placePods places pods in rank order (validating each first if check) in
// slots taken from the free list, links them in the job's list, and returns
// the first and last pod slots.
func (s *State) placePods(id JobID, pods []Pod, check bool) (first, last int32, err error) {
	info := &s.jobs[id].info
	first, last = -1, -1
	for i := range pods {
		if check {
			if err := s.checkPod(id, info, &pods[i]); err != nil {
				return -1, -1, fmt.Errorf("pod %d: %w", i, err)
			}
		}
		slot := s.podFree
		s.w32(&s.podFree, s.pods[slot].jnext)
		s.putAt(slot, id, info, int32(i), &pods[i], -1)
		if last >= 0 {
			s.podW(last).jnext = slot
		} else {
			first = slot
		}
		last = slot
	}
	s.w32(&s.nPods, s.nPods+int32(len(pods)))
	return first, last, nil
}

func (s *State) validateJob(info *Job, pods []Pod) error {
	if len(pods) == 0 {
		return fmt.Errorf("%w: job has no pods", ErrInvalid)
	}
	hl := s.t.HostLevel()
	if l := max(info.Required, info.Preferred); l > hl {
		return fmt.Errorf("%w: level %d out of range (tree has levels 0…%d)", ErrInvalid, l, hl)
	}
	if l := min(info.Required, info.Preferred); l < NoLevel {
		return fmt.Errorf("%w: level %d out of range (tree has levels 0…%d)", ErrInvalid, l, hl)
	}
	if len(info.Sets) == 0 {
		return nil
	}
	rank := 0
	for si, set := range info.Sets {
		if set.Count < 0 || int(set.Count) > len(pods)-rank {
			return fmt.Errorf("%w: pod sets count more pods than the %d given", ErrInvalid, len(pods))
		}
		if set.SliceLevel < NoLevel || set.SliceLevel > hl || set.SliceSize < 0 {
			return fmt.Errorf("%w: pod set %d: bad slice (size %d, level %d)", ErrInvalid, si, set.SliceSize, set.SliceLevel)
		}
		ps := pods[rank : rank+int(set.Count)] // the set's shape in locals: a gang's pods in a tight loop
		gpus, milli, cpu, mem := int(set.GPUs), set.Milli, set.CPUMilli, set.MemoryMiB
		for i := range ps {
			if p := &ps[i]; bits.OnesCount64(p.GPUs) != gpus || p.Milli != milli || p.CPUMilli != cpu || p.MemoryMiB != mem {
				return fmt.Errorf("%w: pod %d does not have the shape of pod set %d", ErrInvalid, rank+i, si)
			}
		}
		rank += len(ps)
	}
	if rank != len(pods) {
		return fmt.Errorf("%w: pod sets count %d pods, %d given", ErrInvalid, rank, len(pods))
	}
	return nil
}

// checkPod validates pod p of job id against the State as it is now.
func (s *State) checkPod(id JobID, info *Job, p *Pod) error {
	t := s.t
	h := p.Host
	if h < 0 || int(h) >= t.NumHosts() {
		return fmt.Errorf("%w: host %d out of range", ErrInvalid, h)
	}
	lo, n := int(t.hostGPU[h]), t.HostGPUCount(h)
	if !s.jr.on && p.CPUMilli|p.MemoryMiB == 0 && s.takesWhole(h, n, p) {
		return nil // healthy, no pods, every GPU free: nothing below can fail
	}
	switch {
	case p.GPUs&^hostMask(n) != 0:
		return fmt.Errorf("%w: GPU %d out of range on host %s with %d GPUs",
			ErrInvalid, 63-bits.LeadingZeros64(p.GPUs), t.HostName(h), n)
	case p.Milli < 0 || p.Milli >= FullGPU:
		return fmt.Errorf("%w: milli %d, want 0 (whole GPUs) or 1…999", ErrInvalid, p.Milli)
	case p.Milli > 0 && bits.OnesCount64(p.GPUs) != 1:
		return fmt.Errorf("%w: a fractional pod names exactly one GPU, got %d", ErrInvalid, bits.OnesCount64(p.GPUs))
	case p.CPUMilli < 0 || p.MemoryMiB < 0:
		return fmt.Errorf("%w: negative CPU or memory", ErrInvalid)
	}
	f := s.hostFlags[h]
	switch {
	case Health(f&flagHealthMask) != Healthy:
		return fmt.Errorf("%w: host %s is %s", ErrStale, t.HostName(h), Health(f&flagHealthMask))
	case f&flagExclusive != 0 && s.pods[s.hostPods[h]].job != id:
		return fmt.Errorf("%w: host %s is held exclusively by job %d", ErrStale, t.HostName(h), s.pods[s.hostPods[h]].job)
	case info.Exclusive && f&flagExclusive == 0 && s.hostPods[h] >= 0:
		return fmt.Errorf("%w: exclusive job, host %s holds job %d", ErrStale, t.HostName(h), s.pods[s.hostHead(h)].job)
	case p.CPUMilli > s.hostCPU[h]:
		return fmt.Errorf("%w: host %s has %d milli-CPU free, pod needs %d", ErrStale, t.HostName(h), s.hostCPU[h], p.CPUMilli)
	case p.MemoryMiB > s.hostMem[h]:
		return fmt.Errorf("%w: host %s has %d MiB free, pod needs %d", ErrStale, t.HostName(h), s.hostMem[h], p.MemoryMiB)
	}
	if bad := getBits(s.failed, lo, n) & p.GPUs; bad != 0 {
		return fmt.Errorf("%w: GPU %d of host %s failed", ErrStale, bits.TrailingZeros64(bad), t.HostName(h))
	}
	if p.Milli == 0 {
		if busy := p.GPUs &^ getBits(s.unused, lo, n); busy != 0 {
			return fmt.Errorf("%w: GPU %d of host %s is in use", ErrStale, bits.TrailingZeros64(busy), t.HostName(h))
		}
	} else if g := lo + bits.TrailingZeros64(p.GPUs); int32(s.gpuMilli(g)) < p.Milli {
		return fmt.Errorf("%w: GPU %d of host %s has %d milli free, pod needs %d",
			ErrStale, g-lo, t.HostName(h), s.gpuMilli(g), p.Milli)
	}
	claim := p.GPUs
	if info.Exclusive {
		claim = hostMask(n) // an exclusive host closes all of its GPUs to others
	}
	if nom := getBits(s.nominated, lo, n) & claim; nom != 0 {
		return s.checkNominated(id, info, h, lo, nom)
	}
	return nil
}

// checkNominated rejects taking the nominated GPUs nom of host h (whose
// first GPU is lo) if one is nominated for a job that id may not displace.
func (s *State) checkNominated(id JobID, info *Job, h HostID, lo int, nom uint64) error {
	for m := nom; m != 0; m &= m - 1 {
		g := GPUID(lo + bits.TrailingZeros64(m))
		nom := &s.noms[s.nominationOf(g)]
		if !mayTake(id, info, &nom.Nomination) {
			return fmt.Errorf("%w: GPU %d of host %s is nominated for job %d (priority %d)",
				ErrStale, int(g)-lo, s.t.HostName(h), nom.Job, nom.Priority)
		}
	}
	return nil
}

// mayTake: the nominee itself, a strictly higher priority, or a job expected
// to end by the nominee's ready time may use a nominated GPU.
func mayTake(id JobID, info *Job, n *Nomination) bool {
	return n.Job == id || info.Priority > n.Priority || (info.HasEnd && info.End <= n.Ready)
}
