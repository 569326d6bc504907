package topology

import "fmt"

// OpKind names an operation of a Delta.
type OpKind uint8

const (
	// OpAddJob adds job Job with Info and its Pods (rank order). If the job
	// holds a nomination, the nomination is released first.
	OpAddJob OpKind = iota + 1
	// OpRemoveJob removes job Job and frees its pods.
	OpRemoveJob
	// OpMoveJob releases every pod of Job, then takes Pods (same count, pod i
	// keeping pod i's shape; overlap with the old pods is allowed).
	OpMoveJob
	// OpNominate reserves Nomination.GPUs for Nomination.Job.
	OpNominate
	// OpCancelNomination drops the nomination of Job.
	OpCancelNomination
	// OpExpireNominations drops every nomination with Expiry ≤ Now.
	OpExpireNominations
	// OpSetGPUHealth sets GPU to Health (Healthy or Failed).
	OpSetGPUHealth
	// OpSetHostHealth sets Host to Health.
	OpSetHostHealth
	// OpSetDomainHealth sets every host of Domain to Health.
	OpSetDomainHealth
	// OpReplacePods re-places the pods of Job at Ranks (strictly ascending)
	// with Pods, pod i keeping the shape of the pod at Ranks[i]; the job's
	// other pods stay (a repair of faulted pods: O(the job's pods) to find
	// them, O(levels) per pod replaced).
	OpReplacePods
)

var opNames = [...]string{"invalid op", "add job", "remove job", "move job", "nominate",
	"cancel nomination", "expire nominations", "set GPU health", "set host health", "set domain health",
	"replace pods"}

func (k OpKind) String() string {
	if int(k) < len(opNames) {
		return opNames[k]
	}
	return fmt.Sprintf("op(%d)", k)
}

// Op is one operation of a Delta; Kind says which fields it reads.
type Op struct {
	Kind       OpKind
	Job        JobID
	Info       Job
	Pods       []Pod
	Ranks      []int32
	Nomination Nomination
	GPU        GPUID
	Host       HostID
	Domain     DomainID
	Health     Health
	Now        int64
}

// Guard is a precondition: Host's generation still equals Gen (the value
// State.HostGeneration gave when the plan was made).
type Guard struct {
	Host HostID
	Gen  uint32
}

// Delta is an ordered list of operations applied atomically by State.Apply.
// Guards are checked first.
type Delta struct {
	Guards []Guard
	Ops    []Op
}

// AddJob returns the operation adding job id with its pods in rank order.
func AddJob(id JobID, info Job, pods ...Pod) Op {
	return Op{Kind: OpAddJob, Job: id, Info: info, Pods: pods}
}

// RemoveJob returns the operation removing job id.
func RemoveJob(id JobID) Op { return Op{Kind: OpRemoveJob, Job: id} }

// MoveJob returns the operation re-placing every pod of job id.
func MoveJob(id JobID, pods ...Pod) Op { return Op{Kind: OpMoveJob, Job: id, Pods: pods} }

// Nominate returns the operation reserving GPUs for n.Job.
func Nominate(n Nomination) Op { return Op{Kind: OpNominate, Job: n.Job, Nomination: n} }

// CancelNomination returns the operation dropping job id's nomination.
func CancelNomination(id JobID) Op { return Op{Kind: OpCancelNomination, Job: id} }

// ExpireNominations returns the operation dropping nominations expired at now.
func ExpireNominations(now int64) Op { return Op{Kind: OpExpireNominations, Now: now} }

// SetGPUHealth returns the operation setting GPU g's health.
func SetGPUHealth(g GPUID, h Health) Op { return Op{Kind: OpSetGPUHealth, GPU: g, Health: h} }

// SetHostHealth returns the operation setting host h's health.
func SetHostHealth(h HostID, health Health) Op {
	return Op{Kind: OpSetHostHealth, Host: h, Health: health}
}

// SetDomainHealth returns the operation setting the health of every host of d.
func SetDomainHealth(d DomainID, h Health) Op {
	return Op{Kind: OpSetDomainHealth, Domain: d, Health: h}
}

// ReplacePods returns the operation re-placing job id's pods at ranks.
func ReplacePods(id JobID, ranks []int32, pods ...Pod) Op {
	return Op{Kind: OpReplacePods, Job: id, Ranks: ranks, Pods: pods}
}
