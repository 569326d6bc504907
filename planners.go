package blink

import (
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Preempter plans evictions for a blocked job: the seam where a preemption
// planner plugs in (Config.Preempter; nil disables preemption).
//
// Preempt answers for request r over the read-only State s: the victims
// (whole jobs, ascending; each preemptible and of priority strictly below
// r.Priority) whose removal lets r fit, and the placement r gets once they
// are gone (the Preempter's own Plan, valid until its next call). ok is
// false when no victim set exists. The engine checks the answer (victims
// must be running, preemptible and of lower priority; the plan must apply
// once they are gone) and ignores one that fails the check. An error is the
// Preempter's failure (the engine's requests are valid): the job waits, and
// Engine.Check reports it. The engine calls Preempt only for jobs with
// preemptible lower-priority work to take (State.PreemptibleBelow) and at
// most Config.MaxPreemptAttempts times per cycle. The returned slices may be
// the Preempter's own buffers: the engine is done with them before the next
// call.
type Preempter interface {
	Preempt(s *topology.State, r *placement.Request) (victims []topology.JobID, plan *placement.Plan, ok bool, err error)
}

// Defragmenter plans moves for a blocked job: the seam where a
// defragmentation planner plugs in (Config.Defragmenter; nil disables it).
//
// Defrag answers for request r over the read-only State s: at most maxMoves
// moves of running preemptible, movable jobs, in execution order, after
// which r fits as plan says (the Defragmenter's own Plan, valid until its
// next call). ok is false when no such plan exists. The engine applies the
// moves at once (each job's full new pod list through topology.MoveJob),
// nominates the plan's GPUs for r's job, and binds the job once every move
// is confirmed. An error counts as for a Preempter. The engine calls Defrag
// at most Config.MaxDefragAttempts times per cycle, before trying
// preemption.
type Defragmenter interface {
	Defrag(s *topology.State, r *placement.Request, maxMoves int) (moves []DefragMove, plan *placement.Plan, ok bool, err error)
}

// DefragMove is one move of a defragmentation plan: job Job's full new pod
// list in rank order.
type DefragMove struct {
	Job  topology.JobID
	Pods []topology.Pod
}
