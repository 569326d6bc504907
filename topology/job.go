package topology

import "math/bits"

// Job describes a job's scheduling attributes as the State records them.
type Job struct {
	Priority    int32
	Preemptible bool // may be evicted by strictly higher priority
	Movable     bool // may be migrated by defragmentation
	// Exclusive: the hosts of the job's pods hold no other job's pods, and their
	// unused GPUs are unavailable to others while the job runs.
	Exclusive bool
	// HasEnd and End: the job's expected end, in the caller's abstract time.
	// A job that ends by a nomination's ready time may backfill its GPUs.
	HasEnd bool
	End    int64
	// Required and Preferred are the job's own topology constraints (NoLevel or
	// the root for none); the State stores them for planners, it does not
	// enforce them.
	Required, Preferred Level
	// Sets, if given, are the job's pod sets in rank order: the pods of set 0
	// come first. Their counts must sum to the pod count and each pod must have
	// its set's shape. With no sets, pods may have any shape.
	Sets []PodSet
}

// PodSet is a group of identical pods of a job.
type PodSet struct {
	Count int32
	// GPUs per pod on one host; a fractional pod has GPUs = 1 and Milli 1…999.
	GPUs, Milli         int32
	CPUMilli, MemoryMiB int32
	// SliceSize consecutive pods share one domain of SliceLevel (0: no slices).
	SliceSize  int32
	SliceLevel Level
}

// Pod is one pod's place: a host, a mask of that host's GPUs, and resources.
type Pod struct {
	Host HostID
	// GPUs: bit i set means the host's GPU i. A whole-GPU pod takes each GPU
	// entirely; a fractional pod names exactly one GPU.
	GPUs uint64
	// Milli is 0 for whole GPUs, or the 1…999 milli-GPU share of its one GPU.
	Milli               int32
	CPUMilli, MemoryMiB int32
}

// NumGPUs is the number of GPUs in the pod's mask.
func (p Pod) NumGPUs() int { return bits.OnesCount64(p.GPUs) }

// MilliGPU is the pod's GPU use in milli-GPU.
func (p Pod) MilliGPU() int64 {
	if p.Milli > 0 {
		return int64(p.Milli)
	}
	return int64(bits.OnesCount64(p.GPUs)) * FullGPU
}

// Nomination reserves GPUs for a job (the preemptor) while the jobs holding
// them terminate. Nominated GPUs leave the free aggregates; when their holders
// leave they stay reserved. Only the nominee, a strictly higher priority, or a
// job whose expected end is at or before Ready may take them.
type Nomination struct {
	Job      JobID
	Priority int32
	Ready    int64   // when the nominee expects to start (abstract time)
	Expiry   int64   // ExpireNominations(now ≥ Expiry) drops it
	GPUs     []GPUID // strictly ascending
}

type jobRec struct {
	info  Job
	live  bool
	first int32 // first pod (rank 0), -1 none
	last  int32
	n     int32 // pods
	nom   int32 // nomination slot, -1 none (also for ids with no live job)
}

type podRec struct {
	Pod
	job   JobID
	rank  int32
	next  int32 // next pod on the same host, ordered by (job, rank); the last's is the first (pods.go)
	jnext int32 // next pod of the same job; next free slot when free
}

type nomRec struct {
	Nomination
	live bool
}

// prioBuckets groups priorities for the per-domain preemptible aggregates:
// negative priorities in bucket 0, p ≥ 0 in bucket 1+bits.Len32(p). Bucket
// order follows priority order, so a query "priority < P" is exact over the
// buckets below bucket(P) and an upper bound with bucket(P) added.
const prioBuckets = 34

func prioBucket(p int32) int {
	if p < 0 {
		return 0
	}
	return 1 + bits.Len32(uint32(p))
}
