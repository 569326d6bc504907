package topology

import (
	"math/bits"
	"slices"
	"unsafe"

	"github.com/bits-and-blooms/bitset"

	"github.com/blinksched/blink/internal/cpu"
)

// The read API for planners. Every method is O(1) or says otherwise, and none
// allocates.

// FreeMask is the free-mask: bit g is set when GPU g is unused, healthy, not
// nominated, on a healthy host that no job holds exclusively. Read-only.
func (s *State) FreeMask() *bitset.BitSet { return s.free }

// FreeWords are the words of FreeMask, for bit kernels. Read-only.
func (s *State) FreeWords() []uint64 { return s.freeW }

// GPUFree reports whether GPU g is free (see FreeMask).
func (s *State) GPUFree(g GPUID) bool { return testBit(s.freeW, int(g)) }

// GPUMilli is GPU g's free milli-GPU (FullGPU when no pod uses it), whatever
// its health.
func (s *State) GPUMilli(g GPUID) int { return int(s.gpuMilli(int(g))) }

// GPUFailed reports whether GPU g failed.
func (s *State) GPUFailed(g GPUID) bool { return testBit(s.failed, int(g)) }

// GPUNominee returns the job GPU g is nominated for, if any.
// O(nominations · log GPUs per nomination).
func (s *State) GPUNominee(g GPUID) (JobID, bool) {
	if !testBit(s.nominated, int(g)) {
		return -1, false
	}
	return s.noms[s.nominationOf(g)].Job, true
}

// HostFree is the number of free GPUs of host h.
func (s *State) HostFree(h HostID) int { return int(s.hostFree[h]) }

// HostSharedMilli is the free milli on host h's partly used GPUs that
// fractional pods may use (healthy, not nominated, the host usable): what it
// adds to SharedMilli of its domains.
func (s *State) HostSharedMilli(h HostID) int64 { return int64(s.hostShared[h]) }

// HostFreeMask returns host h's free GPUs as a mask (bit i: the host's GPU i).
func (s *State) HostFreeMask(h HostID) uint64 {
	lo := int(s.t.hostGPU[h])
	return getBits(s.freeW, lo, int(s.t.hostGPU[h+1])-lo)
}

// HostUnusedMask returns host h's GPUs no pod uses, whatever their health or
// nominations.
func (s *State) HostUnusedMask(h HostID) uint64 {
	lo := int(s.t.hostGPU[h])
	return getBits(s.unused, lo, int(s.t.hostGPU[h+1])-lo)
}

// HostNominatedMask returns host h's nominated GPUs.
func (s *State) HostNominatedMask(h HostID) uint64 {
	lo := int(s.t.hostGPU[h])
	return getBits(s.nominated, lo, int(s.t.hostGPU[h+1])-lo)
}

// NominatedIn reports whether a GPU of domain d is nominated: a reader that
// checks hosts one by one (HostNominatedMask) may skip the check in a domain
// without any. O(the domain's GPUs / 64).
func (s *State) NominatedIn(d DomainID) bool {
	lo, hi := s.t.GPUs(d)
	return anyInRange(s.nominated, int(lo), int(hi))
}

// anyInRange reports whether a bit of w in [lo, hi) is set.
func anyInRange(w []uint64, lo, hi int) bool {
	if lo >= hi {
		return false
	}
	first, last := lo>>6, (hi-1)>>6
	head := ^uint64(0) << (uint(lo) & 63)
	tail := ^uint64(0) >> (63 - (uint(hi-1) & 63))
	if first == last {
		return w[first]&head&tail != 0
	}
	if w[first]&head != 0 || w[last]&tail != 0 {
		return true
	}
	for _, x := range w[first+1 : last] {
		if x != 0 {
			return true
		}
	}
	return false
}

// HostFailedMask returns host h's failed GPUs.
func (s *State) HostFailedMask(h HostID) uint64 {
	lo := int(s.t.hostGPU[h])
	return getBits(s.failed, lo, int(s.t.hostGPU[h+1])-lo)
}

// HostHealth returns host h's health.
func (s *State) HostHealth(h HostID) Health { return Health(s.hostFlags[h] & flagHealthMask) }

// HostHealthyGPUs is host h's GPUs that have not failed when h is healthy,
// else 0: HostGPUCount(h) means a healthy host with no failed GPU. O(1).
func (s *State) HostHealthyGPUs(h HostID) int { return int(s.hostCap[h]) }

// HostExclusive returns the job holding host h exclusively, if any.
func (s *State) HostExclusive(h HostID) (JobID, bool) {
	if s.hostFlags[h]&flagExclusive == 0 {
		return -1, false
	}
	return s.pods[s.hostPods[h]].job, true
}

// HostIdle reports whether host h is healthy, holds no pods, and every GPU is
// free.
func (s *State) HostIdle(h HostID) bool { return testBit(s.idleHostW, int(h)) }

// IdleHostWords are the words of the idle-host bitset (bit h: HostIdle(h)).
func (s *State) IdleHostWords() []uint64 { return s.idleHostW }

// HostCPU is host h's free CPU in milli-cores.
func (s *State) HostCPU(h HostID) int32 { return s.hostCPU[h] }

// HostMemory is host h's free memory in MiB.
func (s *State) HostMemory(h HostID) int32 { return s.hostMem[h] }

// HostGeneration counts the changes of host h; a Guard compares it.
func (s *State) HostGeneration(h HostID) uint32 { return s.hostGen[h] }

// Free is the number of free GPUs in domain d.
func (s *State) Free(d DomainID) int { return int(s.domFree[d]) }

// FreeOfModel is the number of free GPUs of model m in domain d.
func (s *State) FreeOfModel(d DomainID, m int) int {
	if s.nm == 1 {
		return int(s.domFree[d])
	}
	return int(s.domModel[int(d)*s.nm+m])
}

// HealthyGPUs is the number of healthy GPUs on healthy hosts of domain d.
func (s *State) HealthyGPUs(d DomainID) int { return int(s.domCap[d]) }

// IdleHosts is the number of idle hosts in domain d.
func (s *State) IdleHosts(d DomainID) int { return int(s.domIdle[d]) }

// DomainIdle reports whether every host of d is idle.
func (s *State) DomainIdle(d DomainID) bool {
	return s.domIdle[d] == s.t.domHostEnd[d]-s.t.domHostLo[d]
}

// IdleDomains is the bitset of entirely idle domains of level l: bit i stands
// for domain LevelDomains(l).lo + i. Read-only.
func (s *State) IdleDomains(l Level) *bitset.BitSet { return s.idle[l] }

// SharedMilli is the free milli-GPU on partly used GPUs of domain d (usable
// hosts, healthy GPUs, not nominated): capacity only fractional pods can use.
func (s *State) SharedMilli(d DomainID) int64 { return s.domShared[d] }

// Histogram returns, for GPU model m, the number of hosts of domain d by free
// GPU count: element k counts hosts with exactly k free GPUs. Read-only view.
func (s *State) Histogram(d DomainID, m int) []int32 {
	base := (int(d)*s.nm + m) * s.nb
	return s.domHist[base : base+s.nb]
}

// PodCapacity is how many pods of g whole GPUs (g ≥ 1) fit in domain d's free
// GPUs, one host at a time: Σ_k hist[k]·⌊k/g⌋ over every model. O(models · g').
func (s *State) PodCapacity(d DomainID, g int) int {
	n := 0
	for m := range s.nm {
		n += s.PodCapacityOfModel(d, m, g)
	}
	return n
}

// PodCapacityOfModel is PodCapacity restricted to hosts of model m.
func (s *State) PodCapacityOfModel(d DomainID, m, g int) int {
	if g <= 0 || g >= s.nb {
		return 0
	}
	h := s.Histogram(d, m)
	n := 0
	for k := g; k < len(h); k++ {
		n += int(h[k]) * (k / g)
	}
	return n
}

// ExclusiveGPUs returns the GPUs of the hosts in domain d held exclusively
// (by a job with Job.Exclusive). O(1).
func (s *State) ExclusiveGPUs(d DomainID) int64 { return int64(s.domExcl[d]) }

// PreemptibleBelow bounds the GPUs in domain d held by preemptible jobs of
// priority strictly below prio: lo counts only priorities certainly below,
// hi ≥ the true value (priorities are grouped by powers of two). A host held
// exclusively counts all its GPUs for its owner.
func (s *State) PreemptibleBelow(d DomainID, prio int32) (lo, hi int) {
	b := prioBucket(prio)
	row := s.domPre[int(d)*prioBuckets : int(d)*prioBuckets+prioBuckets]
	for _, n := range row[:min(b, bits.Len64(s.preUsed))] { // buckets never used hold nothing
		lo += int(n)
	}
	return lo, lo + int(row[b])
}

// NumJobs is the number of jobs present.
func (s *State) NumJobs() int { return int(s.nJobs) }

// NumPods is the number of pods present.
func (s *State) NumPods() int { return int(s.nPods) }

// JobIDBound is one more than the largest job id the State has seen.
func (s *State) JobIDBound() JobID { return JobID(len(s.jobs)) }

// HasJob reports whether job id is present.
func (s *State) HasJob(id JobID) bool {
	return id >= 0 && int(id) < len(s.jobs) && s.jobs[id].live
}

// JobInfo returns job id's attributes. The Sets slice is the State's own:
// read-only, valid until the next Apply.
func (s *State) JobInfo(id JobID) (Job, bool) {
	if !s.HasJob(id) {
		return Job{}, false
	}
	return s.jobs[id].info, true
}

// JobPodCount is the number of pods of job id (0 if absent).
func (s *State) JobPodCount(id JobID) int {
	if !s.HasJob(id) {
		return 0
	}
	return int(s.jobs[id].n)
}

// AppendJobPods appends job id's pods in rank order to dst.
func (s *State) AppendJobPods(dst []Pod, id JobID) []Pod {
	if id < 0 || int(id) >= s.viewLen() {
		return dst
	}
	k, n, pods := len(dst), int(s.jobPods[id]), s.pods // n is 0 when absent
	if n == 0 {
		return dst
	}
	dst = slices.Grow(dst, n)[:k+n]
	for p := s.jobs[id].first; p >= 0; p = pods[p].jnext {
		dst[k] = pods[p].Pod
		k++
	}
	return dst
}

// AppendJobsPods appends the pods of jobs ids to dst, job after job, each in
// rank order (an absent id has none), and sets starts[i] (len(starts) ≥
// len(ids)) to where job ids[i]'s pods begin in dst. It reads every job's
// first pod slot first and then every pod, so that the reads of scattered
// records overlap: for thousands of jobs, markedly faster than
// AppendJobPods job by job.
func (s *State) AppendJobsPods(dst []Pod, ids []JobID, starts []int32) []Pod {
	starts = starts[:len(ids)]
	n := s.jobPods[:s.viewLen()]
	for i, id := range ids { // the first pod of each, -1 for none
		starts[i] = -1
		if id >= 0 && int(id) < len(n) && n[id] > 0 {
			starts[i] = s.jobs[id].first
		}
	}
	pods := s.pods
	for i, p := range starts {
		starts[i] = int32(len(dst))
		for p >= 0 {
			r := &pods[p]
			dst = append(dst, r.Pod)
			p = r.jnext
		}
	}
	return dst
}

// JobMilliGPU is the milli-GPU held by job id's pods.
func (s *State) JobMilliGPU(id JobID) int64 {
	var n int64
	if s.HasJob(id) {
		for p := s.jobs[id].first; p >= 0; p = s.pods[p].jnext {
			n += s.pods[p].MilliGPU()
		}
	}
	return n
}

// HostPod is a pod as seen from its host.
type HostPod struct {
	Job  JobID
	Rank int32
	Pod
}

// AppendHostPods appends host h's pods ordered by (job, rank) to dst.
func (s *State) AppendHostPods(dst []HostPod, h HostID) []HostPod {
	last := s.hostPods[h]
	if last < 0 {
		return dst
	}
	for p := s.pods[last].next; ; p = s.pods[p].next { // the ring from its first pod: a hot reader's loop
		r := &s.pods[p]
		dst = append(dst, HostPod{Job: r.job, Rank: r.rank, Pod: r.Pod})
		if p == last {
			return dst
		}
	}
}

// AppendHostJobs appends the distinct jobs with pods on host h, ascending, to
// dst.
func (s *State) AppendHostJobs(dst []JobID, h HostID) []JobID {
	last := s.hostPods[h]
	if last < 0 {
		return dst
	}
	prev := JobID(-1)
	for p := s.pods[last].next; ; p = s.pods[p].next { // as AppendHostPods
		if j := s.pods[p].job; j != prev {
			dst = append(dst, j)
			prev = j
		}
		if p == last {
			return dst
		}
	}
}

// GPUHolders appends the jobs using GPU g (several when fractional pods share
// it) to dst, ascending.
func (s *State) GPUHolders(dst []JobID, g GPUID) []JobID {
	h := s.t.GPUHost(g)
	bit := uint64(1) << uint(int(g)-int(s.t.hostGPU[h]))
	prev := JobID(-1)
	for p, last := s.hostRing(h); p >= 0; p = s.hostAfter(p, last) {
		if r := &s.pods[p]; r.GPUs&bit != 0 && r.job != prev {
			dst = append(dst, r.job)
			prev = r.job
		}
	}
	return dst
}

// NumNominations is the number of live nominations.
func (s *State) NumNominations() int {
	n := 0
	for i := range s.noms {
		if s.noms[i].live {
			n++
		}
	}
	return n
}

// NominationOf returns job id's nomination; its GPUs slice is the State's own
// (read-only, valid until the next Apply).
func (s *State) NominationOf(id JobID) (Nomination, bool) {
	if id < 0 || int(id) >= len(s.jobs) || s.jobs[id].nom < 0 {
		return Nomination{}, false
	}
	return s.noms[s.jobs[id].nom].Nomination, true
}

// AppendNominees appends the jobs holding nominations, ascending, to dst.
// O(nomination slots · log), not O(jobs).
func (s *State) AppendNominees(dst []JobID) []JobID {
	n := len(dst)
	for i := range s.noms {
		if s.noms[i].live {
			dst = append(dst, s.noms[i].Job)
		}
	}
	slices.Sort(dst[n:])
	return dst
}

// PrefetchJob hints that job id's record will be read soon: the caches are
// asked for it, nothing is read or changed. Any id is accepted.
func (s *State) PrefetchJob(id JobID) {
	if id < 0 || int(id) >= len(s.jobs) {
		return
	}
	cpu.PrefetchRange(unsafe.Pointer(&s.jobs[id]), unsafe.Sizeof(jobRec{}))
}

// PrefetchHost hints that a pod will soon be placed on host h: the caches
// are asked for the last pod on the host (the head of its ring, pods.go),
// which linking the new pod reads.
// Any h is accepted.
func (s *State) PrefetchHost(h HostID) {
	if h < 0 || int(h) >= len(s.hostPods) {
		return
	}
	if q := s.hostPods[h]; q >= 0 {
		cpu.Prefetch(unsafe.Pointer(&s.pods[q]))
	}
}
