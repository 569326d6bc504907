package blink

import (
	"fmt"
	"slices"

	"github.com/bits-and-blooms/bitset"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Engine is the scheduling engine an embedder drives: a queue of jobs, a
// Cycle that returns Decisions, and reports of what happened. It owns a
// topology.State, which only it changes. An Engine is not safe for
// concurrent use; it does no I/O, starts no goroutine and reads no clock.
type Engine struct {
	cfg Config
	s   *topology.State
	t   *topology.Tree

	v          placement.Solver
	plan, best placement.Plan
	req        placement.Request  // the request being placed, planned or reserved (request)
	why        Reason             // why place found no plan
	sets       []placement.PodSet // scratch request sets (elastic probes, repairs)

	now int64 // the latest time seen; earlier values passed in count as now
	seq uint64

	jobs     []job
	evicting []int32 // slots in stEvicting, unordered (setState keeps it)
	free     []int32 // free slots, reused last-in first-out
	queue    []int32 // pending slots by (priority desc, submit time, submission order)

	timers   [nTimers]timerQueue
	faulted  []slotRef // running jobs to repair at the next cycle
	requeued []JobID   // jobs a report returned to the queue, to announce
	nominees []int32   // slots holding nominations (engine view), ascending

	sp   spares
	memo memo
	mark []uint32 // per slot, scratch marks with markEpoch
	mEp  uint32

	maxHealthy    []int64 // per level: the most healthy GPUs of a domain
	maxNonSpare   []int64 // the same without spare hosts
	leastHealthy  int64   // the least of those (maxNonSpare's with spares): a job needing no more may fit at any level
	spareGPUs     []int32 // per domain: GPUs of its spare hosts (scratch)
	maxHealthyOK  bool
	applyFailures int   // plans that did not apply, placement errors: bugs if ever nonzero
	firstFailure  error // the first of them

	dec     Decisions
	inQueue queued         // what the queue may put in the decision buffers (room.go)
	podBuf  []topology.Pod // decision arenas
	idBuf   []JobID
	i32Buf  []int32
	pods    []topology.Pod // scratch
	pods2   []topology.Pod
	ids     []topology.JobID
	ranks   []int32
	ops     []topology.Op
	moveOps []topology.Op
	rs      repairScratch
	gpuList []topology.GPUID
	gpuBits []uint64       // sortGPUs' and podGPUs' bitmap
	resPods []topology.Pod // reserve's hosts taken
	cands   []resCand
	cands2  []resCand     // orderCands' second buffer
	evHosts bitset.BitSet // scratch: hosts of a domain holding evicted victims (markEvicting)
}

type slotRef struct {
	slot int32
	gen  uint32
}

// New returns an Engine over State s (which it takes over: change it only
// through the engine from now on) with Config cfg. Jobs already in s are
// adopted as running, with JobIDs equal to their topology.JobIDs; their specs
// are derived from their recorded attributes and pods. O(GPUs + pods) with
// spares, O(jobs) without.
func New(s *topology.State, cfg Config) (*Engine, error) {
	t := s.Tree()
	if err := cfg.validate(t); err != nil {
		return nil, err
	}
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("%w: the State is inconsistent: %w", ErrInvalid, err)
	}
	e := &Engine{cfg: cfg, s: s, t: t}
	if err := e.v.SetProfile(t, cfg.Profile); err != nil {
		return nil, fmt.Errorf("%w: Config.Profile: %w", ErrInvalid, err)
	}
	n := int(s.JobIDBound())
	e.jobs = make([]job, n)
	for id := n - 1; id >= 0; id-- {
		if !s.HasJob(topology.JobID(id)) {
			if _, ok := s.NominationOf(topology.JobID(id)); ok {
				return nil, fmt.Errorf("%w: the State holds a nomination for job %d, which the engine cannot adopt", ErrInvalid, id)
			}
			e.free = append(e.free, int32(id))
			continue
		}
		if _, ok := s.NominationOf(topology.JobID(id)); ok {
			return nil, fmt.Errorf("%w: running job %d holds a nomination, which the engine cannot adopt", ErrInvalid, id)
		}
		e.adopt(int32(id))
	}
	e.sp.init(e)
	e.prepare()
	return e, nil
}

// adopt records job slot, present in the State, as running.
func (e *Engine) adopt(slot int32) {
	info, _ := e.s.JobInfo(topology.JobID(slot))
	pods := e.s.AppendJobPods(e.pods[:0], topology.JobID(slot))
	e.pods = pods
	spec := JobSpec{Priority: info.Priority, Preemptible: info.Preemptible, Movable: info.Movable,
		Exclusive: info.Exclusive, Required: info.Required, Preferred: info.Preferred}
	if len(info.Sets) > 0 {
		for _, set := range info.Sets {
			spec.Sets = append(spec.Sets, placement.PodSet{Pods: set.Count, GPUs: set.GPUs, Milli: set.Milli,
				CPUMilli: set.CPUMilli, MemoryMiB: set.MemoryMiB, SliceSize: set.SliceSize, SliceLevel: set.SliceLevel})
		}
	} else {
		spec.Sets = setsOf(spec.Sets, pods)
	}
	j := &e.jobs[slot]
	j.spec = spec
	e.setState(slot, stRunning)
	j.seq = e.seq
	e.seq++
	j.forJob = -1
	j.prepare()
}

// setsOf appends one pod set per run of pods of equal shape.
func setsOf(dst []placement.PodSet, pods []topology.Pod) []placement.PodSet {
	for _, p := range pods {
		set := placement.PodSet{Pods: 1, GPUs: int32(p.NumGPUs()), Milli: p.Milli, CPUMilli: p.CPUMilli, MemoryMiB: p.MemoryMiB}
		if n := len(dst); n > 0 {
			last := &dst[n-1]
			if last.GPUs == set.GPUs && last.Milli == set.Milli && last.CPUMilli == set.CPUMilli && last.MemoryMiB == set.MemoryMiB {
				last.Pods++
				continue
			}
		}
		dst = append(dst, set)
	}
	return dst
}

// requiredDomain returns the domain of level l that holds host h: the
// root when l is none, h's parent at the host level (a host is no domain;
// repairs keep such a job on h itself).
func (e *Engine) requiredDomain(h topology.HostID, l topology.Level) topology.DomainID {
	switch {
	case l <= 0:
		return 0
	case l >= e.t.HostLevel():
		return e.t.HostParent(h)
	}
	return e.t.HostDomain(h, l)
}

// State returns the engine's State, for reading (rendering, queries). Do
// not change it: only the engine applies Deltas to it.
func (e *Engine) State() *topology.State { return e.s }

// Config returns the engine's configuration, defaults filled in.
func (e *Engine) Config() Config { return e.cfg }

// Now is the latest time the engine has seen.
func (e *Engine) Now() int64 { return e.now }

// NumPending is the number of pending jobs.
func (e *Engine) NumPending() int { return len(e.queue) }

// Status returns job id's status, or an error wrapping ErrUnknown.
func (e *Engine) Status(id JobID) (Status, error) {
	slot, err := e.lookup(id)
	if err != nil {
		return 0, err
	}
	return e.jobs[slot].state.status(), nil
}

// Spec returns a copy of job id's spec.
func (e *Engine) Spec(id JobID) (JobSpec, error) {
	slot, err := e.lookup(id)
	if err != nil {
		return JobSpec{}, err
	}
	return cloneSpec(e.jobs[slot].spec), nil
}

// AppendJobs appends the ids of the live jobs, by slot, to dst.
func (e *Engine) AppendJobs(dst []JobID) []JobID {
	for i := range e.jobs {
		if e.jobs[i].state != stFree {
			dst = append(dst, makeID(int32(i), e.jobs[i].gen))
		}
	}
	return dst
}

// lookup returns the slot of live job id.
func (e *Engine) lookup(id JobID) (int32, error) {
	slot := int32(id.Slot())
	if int(slot) >= len(e.jobs) || e.jobs[slot].state == stFree || e.jobs[slot].gen != id.gen() {
		return -1, fmt.Errorf("%w: job %v", ErrUnknown, id)
	}
	return slot, nil
}

func (e *Engine) id(slot int32) JobID { return makeID(slot, e.jobs[slot].gen) }

// Submit queues a job submitted at time now and returns its id. The spec is
// copied. An invalid spec returns an error wrapping ErrInvalid. O(log
// pending) plus the queue insertion; it also makes room for the job's
// decisions (room.go), amortized O(1), so that Cycle need not.
func (e *Engine) Submit(now int64, spec JobSpec) (JobID, error) {
	if err := validateSpec(e.t, &spec); err != nil {
		return 0, err
	}
	slot, err := e.allocSlot()
	if err != nil {
		return 0, err
	}
	now = e.advance(now)
	j := &e.jobs[slot]
	gen, buf := j.gen, j.minReq
	*j = job{gen: gen, minReq: buf, state: stPending, seq: e.seq, submit: now, spec: cloneSpec(spec), forJob: -1}
	e.seq++
	j.prepare()
	e.enqueue(slot)
	e.roomFor()
	return e.id(slot), nil
}

func (e *Engine) advance(now int64) int64 {
	if now > e.now {
		e.now = now
	}
	return e.now
}

func (e *Engine) allocSlot() (int32, error) {
	if n := len(e.free); n > 0 {
		slot := e.free[n-1]
		e.free = e.free[:n-1]
		return slot, nil
	}
	if len(e.jobs) > int(topology.MaxJobID) {
		return -1, fmt.Errorf("%w: more than %d live jobs", ErrInvalid, topology.MaxJobID+1)
	}
	e.jobs = append(e.jobs, job{forJob: -1})
	return int32(len(e.jobs) - 1), nil
}

// release frees slot: the job is gone for good (finished or cancelled).
func (e *Engine) release(slot int32) {
	j := &e.jobs[slot]
	if j.inQueue {
		e.dequeue(slot)
	}
	e.leaveState(slot)
	e.setState(slot, stFree)
	buf := j.minReq
	gen := j.gen + 1 // wraps after 2^32 reuses of one slot
	*j = job{gen: gen, minReq: buf[:0], forJob: -1}
	e.free = append(e.free, slot)
}

// before reports whether slot a goes before slot b in the queue.
func (e *Engine) before(a, b int32) bool {
	x, y := &e.jobs[a], &e.jobs[b]
	if x.spec.Priority != y.spec.Priority {
		return x.spec.Priority > y.spec.Priority
	}
	if x.submit != y.submit {
		return x.submit < y.submit
	}
	return x.seq < y.seq
}

func (e *Engine) queuePos(slot int32) int {
	i, _ := slices.BinarySearchFunc(e.queue, slot, func(q, s int32) int {
		switch {
		case q == s:
			return 0
		case e.before(q, s):
			return -1
		}
		return 1
	})
	return i
}

func (e *Engine) enqueue(slot int32) {
	i := e.queuePos(slot)
	e.queue = slices.Insert(e.queue, i, slot)
	e.jobs[slot].inQueue = true
	e.inQueue.add(e.t, &e.jobs[slot])
}

func (e *Engine) dequeue(slot int32) {
	i := e.queuePos(slot)
	if i < len(e.queue) && e.queue[i] == slot {
		e.queue = slices.Delete(e.queue, i, i+1)
	}
	e.jobs[slot].inQueue = false
}

// requeue makes slot pending again (its pods already left the State).
func (e *Engine) requeue(slot int32) {
	e.leaveState(slot)
	j := &e.jobs[slot]
	e.setState(slot, stPending)
	j.faulted = false
	j.oldPods = j.oldPods[:0]
	if !j.inQueue {
		e.enqueue(slot)
	}
}

// leaveState undoes the links of slot's current state: a victim or a moved
// job no longer counts for its beneficiary, a nominee drops its nomination
// record (the caller drops the State's).
func (e *Engine) leaveState(slot int32) {
	j := &e.jobs[slot]
	switch j.state {
	case stEvicting, stReleased, stMoving:
		e.beneficiaryDone(j.forJob, j.forGen)
		j.forJob = -1
	}
	if j.nom != nomNone {
		e.dropNominee(slot)
	}
}

// beneficiaryDone counts one awaited victim or move of job slot as settled.
func (e *Engine) beneficiaryDone(slot int32, gen uint32) {
	if slot < 0 || int(slot) >= len(e.jobs) {
		return
	}
	b := &e.jobs[slot]
	if b.gen == gen && b.state == stPending && b.waitFor > 0 {
		b.waitFor--
	}
}

// addNominee records that slot holds a nomination of kind k in domain d.
func (e *Engine) addNominee(slot int32, k nomKind, d topology.DomainID) {
	j := &e.jobs[slot]
	j.nom, j.nomDomain = k, d
	i, _ := slices.BinarySearch(e.nominees, slot)
	e.nominees = slices.Insert(e.nominees, i, slot)
	e.memo.next() // the memo's nomination masks index e.nominees
}

// dropNominee forgets slot's nomination record.
func (e *Engine) dropNominee(slot int32) {
	j := &e.jobs[slot]
	e.sp.touchDomain(e.t, j.nomDomain) // hosts with GPUs it held may be candidates again
	j.nom, j.waitFor = nomNone, 0
	if i, ok := slices.BinarySearch(e.nominees, slot); ok {
		e.nominees = slices.Delete(e.nominees, i, i+1)
	}
	e.memo.next() // masks shift, and the nomination's free GPUs are free again
}

// failed counts a Delta that did not apply, or a placement call that failed,
// where it must have succeeded (a bug).
func (e *Engine) failed(what string, err error) {
	e.applyFailures++
	if e.firstFailure == nil {
		e.firstFailure = fmt.Errorf("%s: %w", what, err)
	}
}

// apply applies ops to the State as one Delta.
func (e *Engine) apply(ops ...topology.Op) error {
	return e.s.Apply(topology.Delta{Ops: ops})
}

// removeFromState removes job slot from the State (with its nomination
// record), keeping the spare bookkeeping. The job must be in the State.
func (e *Engine) removeFromState(slot int32) error {
	pods := e.s.AppendJobPods(e.pods2[:0], topology.JobID(slot))
	e.pods2 = pods
	if err := e.apply(topology.RemoveJob(topology.JobID(slot))); err != nil {
		return err
	}
	e.sp.touchPods(e, pods)
	return nil
}

// Cancel removes job id whatever its status: a pending job leaves the queue
// (and its nomination), a placed one leaves the State; the embedder stops
// its pods. The id becomes unknown.
func (e *Engine) Cancel(id JobID) error {
	slot, err := e.lookup(id)
	if err != nil {
		return err
	}
	j := &e.jobs[slot]
	switch {
	case j.state.inState():
		if err := e.removeFromState(slot); err != nil {
			return fmt.Errorf("blink: cancel %v: %w", id, err)
		}
	case j.nom != nomNone:
		if err := e.apply(topology.CancelNomination(topology.JobID(slot))); err != nil {
			return fmt.Errorf("blink: cancel %v: %w", id, err)
		}
	}
	e.release(slot)
	return nil
}
