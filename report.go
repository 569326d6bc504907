package blink

import (
	"fmt"
	"math/bits"

	"github.com/blinksched/blink/topology"
)

// Reports tell the engine what happened. Each is validated against the
// engine's state first: a report that does not match (an unknown job, a bind
// confirmed that was never made, a host failing twice) returns an error
// wrapping ErrUnknown or ErrState and changes nothing.

func (e *Engine) stateErr(id JobID, what string) error {
	slot := int32(id.Slot())
	return fmt.Errorf("%w: %s job %v, which is %s", ErrState, what, id, e.jobs[slot].state.status())
}

// Bound confirms the bind (or repair) of job id: it is running.
func (e *Engine) Bound(id JobID) error {
	slot, err := e.lookup(id)
	if err != nil {
		return err
	}
	j := &e.jobs[slot]
	if j.state != stAssumed && j.state != stRepairing {
		return e.stateErr(id, "Bound for")
	}
	e.setState(slot, stRunning)
	return nil
}

// BindFailed reports that the bind (or repair) of job id failed: its pods
// leave the State and the job is pending again (a repaired job is
// rescheduled in full).
func (e *Engine) BindFailed(id JobID) error {
	slot, err := e.lookup(id)
	if err != nil {
		return err
	}
	j := &e.jobs[slot]
	if j.state != stAssumed && j.state != stRepairing {
		return e.stateErr(id, "BindFailed for")
	}
	if err := e.removeFromState(slot); err != nil {
		return fmt.Errorf("blink: BindFailed %v: %w", id, err)
	}
	e.requeue(slot)
	return nil
}

// Finished reports that job id ended: it leaves the engine and its id
// becomes unknown. A job that never started (pending) is an error.
func (e *Engine) Finished(id JobID) error {
	slot, err := e.lookup(id)
	if err != nil {
		return err
	}
	j := &e.jobs[slot]
	if j.state == stPending {
		return e.stateErr(id, "Finished for")
	}
	if j.state.inState() {
		if err := e.removeFromState(slot); err != nil {
			return fmt.Errorf("blink: Finished %v: %w", id, err)
		}
	}
	e.release(slot)
	return nil
}

// Evicted reports that job id was evicted (as a victim, or by the
// embedder's own doing): its pods leave the State and it is pending again,
// keeping its place in the queue.
func (e *Engine) Evicted(id JobID) error {
	slot, err := e.lookup(id)
	if err != nil {
		return err
	}
	j := &e.jobs[slot]
	if j.state == stPending {
		return e.stateErr(id, "Evicted for")
	}
	if j.state.inState() {
		if err := e.removeFromState(slot); err != nil {
			return fmt.Errorf("blink: Evicted %v: %w", id, err)
		}
	}
	e.requeue(slot)
	return nil
}

// Moved confirms the move of job id: it is running at its new place.
func (e *Engine) Moved(id JobID) error {
	slot, err := e.lookup(id)
	if err != nil {
		return err
	}
	j := &e.jobs[slot]
	if j.state != stMoving {
		return e.stateErr(id, "Moved for")
	}
	e.leaveState(slot)
	e.setState(slot, stRunning)
	j.oldPods = j.oldPods[:0]
	return nil
}

func (e *Engine) checkHost(h topology.HostID) error {
	if h < 0 || int(h) >= e.t.NumHosts() {
		return fmt.Errorf("%w: host %d (the tree has %d)", ErrUnknown, h, e.t.NumHosts())
	}
	return nil
}

// HostFailed reports that host h failed. Jobs with pods on it are repaired
// at the next Cycle; a spare host stops being one.
func (e *Engine) HostFailed(h topology.HostID) error {
	if err := e.checkHost(h); err != nil {
		return err
	}
	if e.s.HostHealth(h) == topology.Failed {
		return fmt.Errorf("%w: host %s already failed", ErrState, e.t.HostName(h))
	}
	if err := e.apply(topology.SetHostHealth(h, topology.Failed)); err != nil {
		return fmt.Errorf("blink: HostFailed: %w", err)
	}
	e.maxHealthyOK = false
	e.sp.hostChanged(e, h)
	e.ids = e.s.AppendHostJobs(e.ids[:0], h)
	for _, id := range e.ids {
		e.fault(int32(id))
	}
	return nil
}

// GPUFailed reports that GPU g failed. Jobs using it are repaired at the
// next Cycle; a spare host with a failed GPU stops being one.
func (e *Engine) GPUFailed(g topology.GPUID) error {
	if g < 0 || int(g) >= e.t.NumGPUs() {
		return fmt.Errorf("%w: GPU %d (the tree has %d)", ErrUnknown, g, e.t.NumGPUs())
	}
	if e.s.GPUFailed(g) {
		return fmt.Errorf("%w: GPU %d already failed", ErrState, g)
	}
	if err := e.apply(topology.SetGPUHealth(g, topology.Failed)); err != nil {
		return fmt.Errorf("blink: GPUFailed: %w", err)
	}
	e.maxHealthyOK = false
	e.sp.hostChanged(e, e.t.GPUHost(g))
	e.ids = e.s.GPUHolders(e.ids[:0], g)
	for _, id := range e.ids {
		e.fault(int32(id))
	}
	return nil
}

// fault queues job slot for repair.
func (e *Engine) fault(slot int32) {
	j := &e.jobs[slot]
	if j.faulted || j.state == stEvicting {
		return // a victim is on its way out anyway
	}
	j.faulted = true
	e.faulted = append(e.faulted, slotRef{slot, j.gen})
}

// DomainFailed reports that domain d (a switch, a rack) failed as a whole:
// every host in it fails, and every job with pods in it leaves the State and
// is pending again (announced as a Requeued Repair by the next Cycle).
// Victims being evicted count as released. O(hosts of d + their pods).
func (e *Engine) DomainFailed(d topology.DomainID) error {
	if d < 0 || int(d) >= e.t.NumDomains() {
		return fmt.Errorf("%w: domain %d (the tree has %d)", ErrUnknown, d, e.t.NumDomains())
	}
	lo, hi := e.t.Hosts(d)
	all := true
	for h := lo; h < hi && all; h++ {
		all = e.s.HostHealth(h) == topology.Failed
	}
	if all {
		return fmt.Errorf("%w: every host of %s already failed", ErrState, e.t.DomainPath(d))
	}
	ep := e.nextMark()
	ops := append(e.ops[:0], topology.SetDomainHealth(d, topology.Failed))
	victims := e.ranks[:0]
	for h := lo; h < hi; h++ {
		e.ids = e.s.AppendHostJobs(e.ids[:0], h)
		for _, id := range e.ids {
			if e.mark[id] == ep {
				continue
			}
			e.mark[id] = ep
			ops = append(ops, topology.RemoveJob(id))
			victims = append(victims, int32(id))
		}
	}
	e.ops, e.ranks = ops, victims
	pods := e.pods2[:0] // the victims' pods: outside d, their hosts may become spare candidates
	for _, slot := range victims {
		pods = e.s.AppendJobPods(pods, topology.JobID(slot))
	}
	e.pods2 = pods
	if err := e.s.Apply(topology.Delta{Ops: ops}); err != nil {
		return fmt.Errorf("blink: DomainFailed: %w", err)
	}
	for h := lo; h < hi; h++ {
		e.sp.hostChanged(e, h)
	}
	e.sp.touchPods(e, pods)
	for _, slot := range victims {
		j := &e.jobs[slot]
		if j.state == stEvicting {
			e.setState(slot, stReleased)
			continue
		}
		e.requeue(slot)
		e.requeued = append(e.requeued, e.id(slot))
	}
	e.maxHealthyOK = false
	return nil
}

// Recovered reports that host h is healthy again, with all its GPUs: it
// takes pods again (and may become a spare).
func (e *Engine) Recovered(h topology.HostID) error {
	if err := e.checkHost(h); err != nil {
		return err
	}
	failed := e.s.HostFailedMask(h)
	if e.s.HostHealth(h) == topology.Healthy && failed == 0 {
		return fmt.Errorf("%w: host %s is healthy", ErrState, e.t.HostName(h))
	}
	ops := append(e.ops[:0], topology.SetHostHealth(h, topology.Healthy))
	lo, _ := e.t.HostGPUs(h)
	for m := failed; m != 0; m &= m - 1 {
		ops = append(ops, topology.SetGPUHealth(lo+topology.GPUID(bits.TrailingZeros64(m)), topology.Healthy))
	}
	e.ops = ops
	if err := e.s.Apply(topology.Delta{Ops: ops}); err != nil {
		return fmt.Errorf("blink: Recovered: %w", err)
	}
	e.maxHealthyOK = false
	e.sp.hostChanged(e, h)
	return nil
}

// Drain reports that host h is draining: its pods keep running, it takes no
// new ones (Recovered undoes it). A spare host stops being one. A later
// repair of a job with pods on it moves those pods too.
func (e *Engine) Drain(h topology.HostID) error {
	if err := e.checkHost(h); err != nil {
		return err
	}
	if hh := e.s.HostHealth(h); hh != topology.Healthy {
		return fmt.Errorf("%w: host %s is %s", ErrState, e.t.HostName(h), hh)
	}
	if err := e.apply(topology.SetHostHealth(h, topology.Draining)); err != nil {
		return fmt.Errorf("blink: Drain: %w", err)
	}
	e.maxHealthyOK = false
	e.sp.hostChanged(e, h)
	return nil
}

// nextMark starts a new epoch of the per-slot marks.
func (e *Engine) nextMark() uint32 {
	if len(e.mark) < len(e.jobs) {
		e.mark = append(e.mark, make([]uint32, len(e.jobs)-len(e.mark))...)
	}
	e.mEp++
	if e.mEp == 0 {
		clear(e.mark)
		e.mEp = 1
	}
	return e.mEp
}
