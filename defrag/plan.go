package defrag

import (
	"errors"
	"fmt"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Sentinels wrapped by the errors of this package; match them with errors.Is.
var (
	// ErrInvalid: a malformed request, goal or Config.
	ErrInvalid = errors.New("defrag: invalid")
)

// Defaults of the Config's search limits.
const (
	DefaultMaxDomains    = 64
	DefaultMaxCandidates = 24
	DefaultMaxHelpers    = 16
	DefaultMaxWork       = 20000
)

// Config bounds a plan and the planner's work. Fields that are 0 take their
// default (Validate fills them), except MaxMoves, for which 0 means no move.
type Config struct {
	// MaxMoves is K, the most moves a plan may have. 0 allows none: MakeRoom
	// then only tries a plain placement, and Compact changes nothing.
	MaxMoves int
	// MaxGPUsMoved bounds the GPUs the moved jobs hold, summed over the moves
	// (a fractional pod counts the GPU it shares). 0: no bound.
	MaxGPUsMoved int64

	// Search limits. When one of them cuts the search short, the plan is
	// still valid, but MakeRoom no longer proves it minimal (Result.Exact).

	// MaxDomains: target domains MakeRoom examines in detail, fewest missing
	// GPUs first (default 64).
	MaxDomains int
	// MaxCandidates: movable jobs MakeRoom considers moving out of one target
	// domain, those freeing the most GPUs in it first (default 24).
	MaxCandidates int
	// MaxHelpers: movable jobs outside the target domain MakeRoom considers
	// moving to make room for the jobs it moves out (default 16), nearest
	// first.
	MaxHelpers int
	// MaxWork bounds the work of one MakeRoom call: placement calls,
	// subsets of candidates, and pods read on target domains, one unit each
	// (default 20,000).
	MaxWork int
}

// Validate checks c and fills its defaults.
func (c *Config) Validate() error {
	switch {
	case c.MaxMoves < 0:
		return fmt.Errorf("%w: MaxMoves %d, want ≥ 0", ErrInvalid, c.MaxMoves)
	case c.MaxGPUsMoved < 0:
		return fmt.Errorf("%w: MaxGPUsMoved %d, want ≥ 0", ErrInvalid, c.MaxGPUsMoved)
	case c.MaxDomains < 0 || c.MaxCandidates < 0 || c.MaxHelpers < 0 || c.MaxWork < 0:
		return fmt.Errorf("%w: negative search limit", ErrInvalid)
	}
	if c.MaxDomains == 0 {
		c.MaxDomains = DefaultMaxDomains
	}
	if c.MaxCandidates == 0 {
		c.MaxCandidates = DefaultMaxCandidates
	}
	if c.MaxHelpers == 0 {
		c.MaxHelpers = DefaultMaxHelpers
	}
	if c.MaxWork == 0 {
		c.MaxWork = DefaultMaxWork
	}
	return nil
}

// Move re-places one whole job: Pods are all of its pods after the move, in
// rank order, pod i keeping pod i's shape (topology.MoveJob).
type Move struct {
	Job  topology.JobID
	Pods []topology.Pod
	// GPUs the job holds (a fractional pod counts the GPU it shares) and its
	// milli-GPU: what moving it costs.
	GPUs  int
	Milli int64
}

// Plan is an ordered list of moves, each valid in the State the previous
// ones leave, and for MakeRoom the request's placement after them. It is a
// value: the caller applies Delta (then, for MakeRoom, Request.Delta()), or
// drops it. A Plan may be reused across calls: the planner overwrites it.
type Plan struct {
	Moves []Move
	// GPUs and Milli sum the moves' costs.
	GPUs  int
	Milli int64
	// Request is where MakeRoom's request goes once the moves are done (its
	// Pods are empty when it does not fit). Unused by Compact.
	Request placement.Plan
	// Target is the domain MakeRoom cleared for the request (the request's
	// domain when it fits without moves), or the domain Compact's largest
	// gang is in; -1 when none. TargetHost is the host when the target is
	// one host (the request's level is the host level), else -1; Target is
	// then the host's parent domain.
	Target     topology.DomainID
	TargetHost topology.HostID

	pods []topology.Pod // storage of every move's pods
	ops  []topology.Op
}

// reset empties the plan, keeping its buffers.
func (p *Plan) reset() {
	p.Moves, p.GPUs, p.Milli, p.Target, p.TargetHost = p.Moves[:0], 0, 0, -1, -1
	p.pods = p.pods[:0]
	p.Request.Pods = p.Request.Pods[:0]
}

// add appends a move of job id to pods (copied into the plan's storage).
func (p *Plan) add(id topology.JobID, pods []topology.Pod, gpus int, milli int64) {
	start := len(p.pods)
	p.pods = append(p.pods, pods...)
	p.Moves = append(p.Moves, Move{Job: id, GPUs: gpus, Milli: milli})
	p.GPUs += gpus
	p.Milli += milli
	// Slices into p.pods are taken once the storage stops growing (seal).
	p.Moves[len(p.Moves)-1].Pods = p.pods[start:len(p.pods):len(p.pods)]
}

// seal re-points every move's Pods into the final storage (appends may have
// moved it).
func (p *Plan) seal() {
	off := 0
	for i := range p.Moves {
		n := len(p.Moves[i].Pods)
		p.Moves[i].Pods = p.pods[off : off+n : off+n]
		off += n
	}
}

// Delta returns the moves as one Delta: a topology.MoveJob per move, in
// order. It shares the Plan's buffers: apply it before the Plan is reused.
// For MakeRoom, apply Request.Delta() after it (or append its ops: the
// request's GPUs are free only once the moves are done).
func (p *Plan) Delta() topology.Delta {
	p.ops = p.AppendOps(p.ops[:0])
	return topology.Delta{Ops: p.ops}
}

// AppendOps appends the moves' operations, in order, to dst.
func (p *Plan) AppendOps(dst []topology.Op) []topology.Op {
	for _, m := range p.Moves {
		dst = append(dst, topology.MoveJob(m.Job, m.Pods...))
	}
	return dst
}

// ReasonCode says why MakeRoom found no plan.
type ReasonCode uint8

const (
	// Fits: no failure.
	Fits ReasonCode = iota
	// NoTarget: no domain can hold the request even with every movable job
	// moved out of it (unmovable jobs, failed or draining hosts, too small).
	NoTarget
	// NoPlan: some domain could hold the request with jobs moved out, but no
	// plan of at most MaxMoves moves (and MaxGPUsMoved GPUs) does it; also
	// when the targets miss more GPUs than the MaxMoves largest movable jobs
	// hold (topology.State.MovableGPUsBound), decided without reading them.
	NoPlan
	// Unmovable: MaxMoves is 0.
	Unmovable
)

func (c ReasonCode) String() string {
	switch c {
	case Fits:
		return "fits"
	case NoTarget:
		return "no-target"
	case NoPlan:
		return "no-plan"
	case Unmovable:
		return "unmovable"
	}
	return "reason(?)"
}

// Reason explains a MakeRoom without a plan: a small value, built without
// allocating; Format renders it.
type Reason struct {
	Code ReasonCode
	// Place is why the request does not fit as the cluster is.
	Place placement.Reason
	// Level is the level of the target domains; Moves the budget.
	Level topology.Level
	Moves int
}

// Format renders the reason for people, naming levels by t's names.
func (r Reason) Format(t *topology.Tree) string {
	place := r.Place.Format(t)
	switch r.Code {
	case Fits:
		return ""
	case Unmovable:
		return place + "; no moves allowed"
	case NoTarget:
		return fmt.Sprintf("%s; no %s could hold it even with every movable job moved out", place, levelWord(t, r.Level))
	case NoPlan:
		moves := "moves"
		if r.Moves == 1 {
			moves = "move"
		}
		return fmt.Sprintf("%s; no plan of at most %d %s makes room in a %s", place, r.Moves, moves, levelWord(t, r.Level))
	}
	return place
}

func levelWord(t *topology.Tree, l topology.Level) string {
	if l <= 0 {
		return "cluster"
	}
	return t.LevelName(l)
}

// Result is what MakeRoom found besides the plan.
type Result struct {
	// Fits: the request fits after the plan's moves (possibly none).
	Fits bool
	// Exact: the answer is proven in the move model of the package doc: a
	// plan with the fewest moves, or no plan within the budget. False when a
	// search limit of the Config cut the search short.
	Exact  bool
	Reason Reason
	// Domains and Work count the target domains examined and the placement
	// calls made.
	Domains, Work int
}
