package blink

import (
	"errors"
	"fmt"
	"slices"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Sentinels wrapped by the errors of Submit, Cancel and the reports; match
// them with errors.Is. A call that returns an error changes nothing.
var (
	// ErrInvalid: a malformed job spec or Config.
	ErrInvalid = errors.New("blink: invalid")
	// ErrUnknown: the job id names no live job (never submitted, or finished,
	// cancelled or its slot reused since), or a host, GPU or domain id is out
	// of range.
	ErrUnknown = errors.New("blink: unknown")
	// ErrState: the report does not match what the engine knows (a job
	// finishing that never started, a bind confirmed twice, a host failing
	// that already failed).
	ErrState = errors.New("blink: report does not match the engine's state")
)

// JobID identifies a job of an Engine. The low 24 bits are the job's slot
// in the topology State (its topology.JobID), the bits above a generation
// that changes each time the slot is reused, so an id of a job that has left
// is never taken for a later one.
type JobID uint64

const slotBits = 24

func makeID(slot int32, gen uint32) JobID { return JobID(gen)<<slotBits | JobID(slot) }

// Slot is the job's topology.JobID in the Engine's State.
func (id JobID) Slot() topology.JobID { return topology.JobID(id & (1<<slotBits - 1)) }

func (id JobID) gen() uint32 { return uint32(id >> slotBits) }

// String renders the id as "7", or "7.2" for generation 2 of slot 7.
func (id JobID) String() string {
	if g := id.gen(); g != 0 {
		return fmt.Sprintf("%d.%d", id.Slot(), g)
	}
	return fmt.Sprint(uint64(id.Slot()))
}

// JobSpec describes a job: a gang of one or more pod sets placed together or
// not at all.
type JobSpec struct {
	// Sets are the pod sets in rank order; Sets[i].Pods is the set's size
	// (its largest size when elastic).
	Sets []placement.PodSet
	// MinPods, if not nil, makes the job elastic: one entry per set, the
	// fewest pods of that set the job accepts (1…Sets[i].Pods, a multiple of
	// the set's slice size; 0 means Sets[i].Pods). The job is placed at the
	// largest size that fits now: the sets grow together, set i by the same
	// number of pods above MinPods[i] (capped at Sets[i].Pods).
	MinPods []int32
	// Priority: higher goes first; only strictly higher priority preempts.
	Priority int32
	// Preemptible jobs may be evicted by higher priority, and may run on
	// spare hosts (filler).
	Preemptible bool
	// Movable jobs may be migrated by defragmentation.
	Movable bool
	// Exclusive: the job's hosts hold no other job.
	Exclusive bool
	// Required and Preferred are topology levels (0 or topology.NoLevel:
	// none), as in placement.Request.
	Required, Preferred topology.Level
	// Models are acceptable GPU model ids (Tree.ModelByName); empty: any.
	Models []int
	// Policy chooses among the places that fit (default best fit).
	Policy placement.Policy
	// RunTime, if positive, is the expected run time: the job is expected
	// to end RunTime after it is bound, which lets it backfill reserved GPUs
	// whose reservation is ready after that.
	RunTime int64
}

// Status is where a job is in its life.
type Status uint8

const (
	// Pending: queued, waiting for a cycle to place it.
	Pending Status = iota + 1
	// Binding: a cycle bound it (assumed in the State); Bound confirms.
	Binding
	// Running: bound and confirmed.
	Running
	// Repairing: a cycle replaced some of its pods after a fault; Bound
	// confirms.
	Repairing
	// Moving: a cycle moved it (defragmentation); Moved confirms.
	Moving
	// Evicting: a cycle chose it as a victim; Evicted confirms.
	Evicting
)

var statusNames = [...]string{"", "pending", "binding", "running", "repairing", "moving", "evicting"}

func (s Status) String() string {
	if int(s) < len(statusNames) && s != 0 {
		return statusNames[s]
	}
	return "status(?)"
}

// jobState is the engine's finer view of a job.
type jobState uint8

const (
	stFree jobState = iota
	stPending
	stAssumed
	stRunning
	stRepairing
	stMoving
	stEvicting // a victim still in the State
	stReleased // a victim already released from the State (repair victims)
)

// setState moves job slot to state st, keeping the list of evicting jobs.
func (e *Engine) setState(slot int32, st jobState) {
	j := &e.jobs[slot]
	switch {
	case j.state == stEvicting && st != stEvicting:
		i := slices.Index(e.evicting, slot)
		e.evicting[i] = e.evicting[len(e.evicting)-1]
		e.evicting = e.evicting[:len(e.evicting)-1]
	case st == stEvicting && j.state != stEvicting:
		e.evicting = append(e.evicting, slot)
	}
	j.state = st
}

// inState reports whether a job in state st has pods in the State.
func (st jobState) inState() bool { return st >= stAssumed && st <= stEvicting }

func (st jobState) status() Status {
	switch st {
	case stPending:
		return Pending
	case stAssumed:
		return Binding
	case stRunning:
		return Running
	case stRepairing:
		return Repairing
	case stMoving:
		return Moving
	case stEvicting, stReleased:
		return Evicting
	}
	return 0
}

// nomKind says what a job's nomination is for.
type nomKind uint8

const (
	nomNone nomKind = iota
	nomReserve
	nomPreempt
	nomDefrag
)

// job is the engine's record of one slot.
type job struct {
	// What the cycle and the reports read of most jobs they touch comes first,
	// in the struct's first two cache lines (with the spec's priority and
	// preemptibility): a job's record is cold when a fault or a cycle reaches
	// it, and each further line is another miss.
	state   jobState
	nom     nomKind
	faulted bool // queued for repair
	inQueue bool // in e.queue (pending, or pending-to-be after a requeue)
	elastic bool
	visited bool // scratch for a cycle
	sliced  bool // a pod set has slices below the required level (repair_slices.go)
	gen     uint32
	waitFor int32 // victims (or moves) still to be confirmed for its nomination
	forJob  int32 // a victim's or moved job's beneficiary slot, -1 none
	forGen  uint32

	nomDomain topology.DomainID

	spec JobSpec // its Priority and Preemptible still in the second line

	deadline  int64 // of the unconfirmed action (assumed, repairing, moving, evicting, released)
	started   int64
	need      int64  // GPUs the smallest size needs at least: its whole GPUs, its fractions' milli rounded up
	resGPUs   int64  // GPUs a reservation of the smallest size takes: fractions packed per set
	key       uint64 // hash of the static part of the memo key
	seq       uint64 // submission order
	submit    int64
	nomReady  int64 // the nomination's ready time
	nomExpiry int64

	minReq  []placement.PodSet // an elastic job's sets at their smallest (minSets); empty otherwise
	oldPods []topology.Pod
}

// validateSpec checks a spec against tree t.
func validateSpec(t *topology.Tree, spec *JobSpec) error {
	if len(spec.Sets) == 0 {
		return fmt.Errorf("%w: job has no pod sets", ErrInvalid)
	}
	if spec.MinPods != nil && len(spec.MinPods) != len(spec.Sets) {
		return fmt.Errorf("%w: %d MinPods for %d pod sets", ErrInvalid, len(spec.MinPods), len(spec.Sets))
	}
	if spec.RunTime < 0 {
		return fmt.Errorf("%w: run time %d < 0", ErrInvalid, spec.RunTime)
	}
	for i, m := range spec.MinPods {
		set := &spec.Sets[i]
		switch {
		case m < 0 || m > set.Pods:
			return fmt.Errorf("%w: pod set %d: MinPods %d, want 0…%d", ErrInvalid, i, m, set.Pods)
		case m > 0 && set.SliceSize > 0 && m%set.SliceSize != 0:
			return fmt.Errorf("%w: pod set %d: MinPods %d is not a multiple of the slice size %d", ErrInvalid, i, m, set.SliceSize)
		}
	}
	r := placement.Request{Sets: spec.Sets, Required: spec.Required, Preferred: spec.Preferred,
		Exclusive: spec.Exclusive, Models: spec.Models, Policy: spec.Policy}
	if err := r.Validate(t); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// cloneSpec copies a spec's slices, so the engine owns them.
func cloneSpec(s JobSpec) JobSpec {
	s.Sets = append([]placement.PodSet(nil), s.Sets...)
	if s.MinPods != nil {
		s.MinPods = append([]int32(nil), s.MinPods...)
	}
	if s.Models != nil {
		s.Models = append([]int(nil), s.Models...)
	}
	return s
}

// prepare fills a job's derived fields from its spec.
func (j *job) prepare() {
	s := &j.spec
	j.minReq = j.minReq[:0]
	j.elastic = false
	whole, milli, packed := int64(0), int64(0), int64(0)
	j.sliced = false
	for i, set := range s.Sets {
		j.sliced = j.sliced || set.SliceSize > 1 && set.SliceLevel > max(s.Required, 0)
		if s.MinPods != nil && s.MinPods[i] > 0 && s.MinPods[i] < set.Pods {
			set.Pods = s.MinPods[i]
			j.elastic = true
		}
		j.minReq = append(j.minReq, set)
		if set.Milli > 0 { // fractions of several sets may share a GPU
			milli += int64(set.Milli) * int64(set.Pods)
			perGPU := int64(topology.FullGPU / set.Milli)
			packed += (int64(set.Pods) + perGPU - 1) / perGPU
			continue
		}
		whole += int64(set.GPUs) * int64(set.Pods)
	}
	j.need = whole + (milli+topology.FullGPU-1)/topology.FullGPU
	j.resGPUs = whole + packed
	if !j.elastic {
		j.minReq = j.minReq[:0] // minSets is the spec's own: one record fewer to read per job
	}
	j.key = specHash(j)
}

// minSets is the job's pod sets at its smallest size: the spec's, unless
// the job is elastic.
func (j *job) minSets() []placement.PodSet {
	if j.elastic {
		return j.minReq
	}
	return j.spec.Sets
}

// specHash hashes what decides whether the job's smallest size fits, apart
// from nominations (FNV-1a over the fields).
func specHash(j *job) uint64 {
	h := uint64(14695981039346656037)
	mix := func(v int64) {
		for range 8 {
			h ^= uint64(v & 0xff)
			h *= 1099511628211
			v >>= 8
		}
	}
	for _, set := range j.minSets() {
		mix(int64(set.Pods))
		mix(int64(set.GPUs)<<32 | int64(set.Milli))
		mix(int64(set.CPUMilli)<<32 | int64(set.MemoryMiB))
		mix(int64(set.SliceSize)<<8 | int64(set.SliceLevel))
	}
	s := &j.spec
	b := int64(0)
	if s.Exclusive {
		b |= 1
	}
	if s.Preemptible {
		b |= 2
	}
	mix(int64(s.Required)<<16 | int64(s.Preferred)<<8 | int64(s.Policy)<<4 | b)
	for _, m := range s.Models {
		mix(int64(m))
	}
	mix(int64(len(s.Models)))
	return h
}

// sameShape reports whether jobs a and b have equal memo keys' static parts.
func sameShape(a, b *job) bool {
	as, bs := a.minSets(), b.minSets()
	if a.key != b.key || len(as) != len(bs) || len(a.spec.Models) != len(b.spec.Models) {
		return false
	}
	for i := range as {
		if as[i] != bs[i] {
			return false
		}
	}
	for i := range a.spec.Models {
		if a.spec.Models[i] != b.spec.Models[i] {
			return false
		}
	}
	x, y := &a.spec, &b.spec
	return x.Exclusive == y.Exclusive && x.Preemptible == y.Preemptible && x.Required == y.Required &&
		x.Preferred == y.Preferred && x.Policy == y.Policy
}
