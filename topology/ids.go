package topology

import "math"

// Level indexes the levels of a Tree, root-first. Level 0 is the implicit root
// (the whole cluster, one domain); levels 1…L are the named domain levels given
// to the builder; Tree.HostLevel() = L+1 is the implicit host level.
type Level int8

// NoLevel marks an absent level constraint.
const NoLevel Level = -1

// DomainID numbers the domains of a Tree: the root is 0, and the domains of
// each level occupy a contiguous range (Tree.LevelDomains) in depth-first order
// of first appearance in the builder's input.
type DomainID int32

// HostID numbers hosts in the same depth-first order, so the hosts of any
// domain form the interval Tree.Hosts(d).
type HostID int32

// GPUID numbers GPUs cluster-wide; the GPUs of host h are the interval
// Tree.HostGPUs(h), and a host's GPU i is GPUID(lo+i).
type GPUID int32

// JobID is the caller's dense identifier of a job in a State. The State sizes
// its job table to the largest id seen, so ids should be small and reused.
type JobID int32

// MaxJobID bounds JobID values accepted by a State.
const MaxJobID JobID = 1<<24 - 1

// MaxJobPods bounds the pods of one job, all its sets together, in a
// placement request (placement.Request.Validate refuses more): a plan lists
// every pod of its job, so a count beyond any cluster's — pods that ask for
// no GPU, CPU or memory have no other bound — is refused rather than
// allocated.
const MaxJobPods = 1 << 24

// MaxHostGPUs is the largest number of GPUs a host may have: a host's GPUs fit
// one uint64 mask.
const MaxHostGPUs = 64

// Unlimited is the CPU (milli-cores) or memory (MiB) capacity of a host that
// declares no limit.
const Unlimited = math.MaxInt32

// FullGPU is the milli-GPU share of one whole GPU.
const FullGPU = 1000

// NoEnd is the expected end of a job that gave none.
const NoEnd int64 = math.MaxInt64

// Health of a GPU or host. Draining hosts keep their pods but take no new ones;
// failed hosts and GPUs take nothing and count as no capacity.
type Health uint8

const (
	Healthy Health = iota
	Draining
	Failed
)

func (h Health) String() string {
	switch h {
	case Healthy:
		return "healthy"
	case Draining:
		return "draining"
	case Failed:
		return "failed"
	}
	return "health(?)"
}
