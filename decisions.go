package blink

import (
	"fmt"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Decisions is what one Cycle asks of the embedder. Its slices (and the pod
// and job lists inside) are the engine's buffers: valid until the next call
// to Cycle. Act on them in field order: repairs first (they concern jobs
// already running), then evictions (Preemptions and Repair victims), moves,
// and binds.
type Decisions struct {
	Now int64
	// Repairs replace faulted pods of running jobs, or return jobs to the
	// queue for full rescheduling.
	Repairs []Repair
	// Preemptions name victims to evict for a blocked job, whose target GPUs
	// are now nominated for it.
	Preemptions []Preemption
	// Moves migrate running jobs (defragmentation) to make room for a
	// blocked job.
	Moves []Move
	// Binds place pending jobs. They are already recorded in the State as
	// assumed: confirm each with Bound, or report BindFailed.
	Binds []Bind
	// Expired are unconfirmed actions that timed out this cycle.
	Expired []Expiry
	// Pending gives, for each pending job that got nothing, why.
	Pending []Waiting
}

// Bind places a job: its pods in rank order (the pods of set 0 first).
type Bind struct {
	Job  JobID
	Pods []topology.Pod
	// Sizes are the pods per set (the spec's sizes, or smaller for an
	// elastic job).
	Sizes []int32
	// Domain is the domain of the job's required level that holds it (the
	// root when it has none).
	Domain topology.DomainID
}

// Preemption evicts Victims (whole jobs, ascending) so that Job fits; the
// GPUs Job will take are nominated for it until they are free.
type Preemption struct {
	Job     JobID
	Victims []JobID
	Domain  topology.DomainID
	// GPUs is the number of GPUs nominated for Job.
	GPUs int
}

// Move migrates a running job to new pods (its full pod list, rank order),
// to make room for job For. The State already has it at its new place;
// confirm with Moved.
type Move struct {
	Job  JobID
	Pods []topology.Pod
	For  JobID
}

// Repair answers a fault under a running job. Either Pods is the job's new
// full pod list (rank order), in which the pods of ranks Ranks replace the
// faulted ones — start them after evicting Victims (filler on a spare host,
// or lower-priority jobs, already released from the State) and confirm with
// Bound — or Requeued is true: the job's domain has no way left, the job
// has left the State and is pending again, and its surviving pods should be
// stopped.
type Repair struct {
	Job      JobID
	Pods     []topology.Pod
	Ranks    []int32
	Victims  []JobID
	Requeued bool
	// Source says where the replacements came from.
	Source RepairSource
}

// RepairSource says how a repair found its replacement pods.
type RepairSource uint8

const (
	// FromSpare: spare hosts of the job's domain.
	FromSpare RepairSource = iota + 1
	// FromFree: free GPUs of the job's domain.
	FromFree
	// FromPreemption: GPUs of lower-priority preemptible jobs in the domain.
	FromPreemption
	// Rescheduled: none; the job was requeued.
	Rescheduled
)

var sourceNames = [...]string{"", "spare", "free", "preemption", "rescheduled"}

func (r RepairSource) String() string {
	if int(r) < len(sourceNames) && r != 0 {
		return sourceNames[r]
	}
	return "source(?)"
}

// Expiry is an unconfirmed action that timed out.
type Expiry struct {
	Job  JobID
	What ExpiryKind
}

// ExpiryKind names the action that timed out.
type ExpiryKind uint8

const (
	// BindExpired: a bind or repair was not confirmed; the job left the
	// State and is pending again.
	BindExpired ExpiryKind = iota + 1
	// EvictionExpired: an eviction was not confirmed; the victim counts as
	// running again (or, if already released, as evicted and pending).
	EvictionExpired
	// MoveExpired: a move was not confirmed; it was rolled back if the old
	// place was still free.
	MoveExpired
)

var expiryNames = [...]string{"", "bind", "eviction", "move"}

func (k ExpiryKind) String() string {
	if int(k) < len(expiryNames) && k != 0 {
		return expiryNames[k]
	}
	return "expiry(?)"
}

// Waiting is a pending job that got nothing this cycle, and why.
type Waiting struct {
	Job    JobID
	Reason Reason
}

// Reason says why a pending job got nothing: a small value, formatted only
// on demand (Format).
type Reason struct {
	Code ReasonCode
	// Place is placement's reason when Code is NoFit or NeverFits.
	Place placement.Reason
}

// ReasonCode names why a job waits.
type ReasonCode uint8

const (
	// NoFit: the job does not fit now (Place says why); it may have been
	// answered from an earlier job of the same shape this cycle.
	NoFit ReasonCode = iota + 1
	// NeverFits: the job is larger than any healthy domain it may use, or
	// a pod of it larger than any host of an acceptable model (GPUs, CPU,
	// memory; placement.ReasonCode.Permanent).
	NeverFits
	// Reserved: the job holds a reservation that is not ready yet.
	Reserved
	// Preempting: the job waits for its victims to be evicted.
	Preempting
	// WaitingMoves: the job waits for defragmentation moves.
	WaitingMoves
	// NotTried: the cycle's placement attempts ran out before the job.
	NotTried
)

var reasonNames = [...]string{"", "no fit", "never fits", "reserved", "preempting", "waiting for moves", "not tried"}

func (c ReasonCode) String() string {
	if int(c) < len(reasonNames) && c != 0 {
		return reasonNames[c]
	}
	return "reason(?)"
}

// Format renders the reason for people, naming levels by t's names.
func (r Reason) Format(t *topology.Tree) string {
	if r.Code == NeverFits && !r.Place.Code.Permanent() && r.Place.Code != placement.Fits {
		return fmt.Sprintf("%s: %s", r.Code, r.tooLarge(t))
	}
	if (r.Code == NoFit || r.Code == NeverFits) && r.Place.Code != placement.Fits {
		return fmt.Sprintf("%s: %s", r.Code, r.Place.Format(t))
	}
	return r.Code.String()
}

// tooLarge renders the engine's own never-fits bound (Engine.neverFits):
// Have counts healthy GPUs, not free ones, and Need the GPUs of the job's
// smallest size, not pods.
func (r Reason) tooLarge(t *topology.Tree) string {
	where := "the cluster has"
	if r.Place.Code == placement.RequiredLevel {
		name := t.LevelName(r.Place.Level)
		where = fmt.Sprintf("required %s: the largest %s has", name, name)
	}
	return fmt.Sprintf("%s %d healthy GPUs it may use, the job needs %d", where, r.Place.Have, r.Place.Need)
}
