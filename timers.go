package blink

import (
	"math"

	"github.com/blinksched/blink/topology"
)

// Unconfirmed actions expire after a timeout measured in the caller's time.
// Deadlines of one kind are now + a fixed timeout and now never decreases,
// so each kind's timers form a FIFO queue already sorted by deadline: no
// heap, and expiry costs O(expired). Entries are checked lazily: a timer
// whose job has moved on (another generation, another deadline, another
// state) is dropped when it comes due.

const (
	tBind  = iota // assumed binds and repairs
	tEvict        // evictions (victims in or already out of the State)
	tMove         // defragmentation moves
	nTimers
)

type timer struct {
	at   int64
	slot int32
	gen  uint32
}

type timerQueue struct {
	q    []timer
	head int
}

func (tq *timerQueue) push(t timer) {
	if tq.head > 64 && tq.head*2 > len(tq.q) {
		n := copy(tq.q, tq.q[tq.head:])
		tq.q, tq.head = tq.q[:n], 0
	}
	tq.q = append(tq.q, t)
}

// pop returns the next timer due at now.
func (tq *timerQueue) pop(now int64) (timer, bool) {
	if tq.head < len(tq.q) && tq.q[tq.head].at <= now {
		t := tq.q[tq.head]
		tq.head++
		return t, true
	}
	return timer{}, false
}

// later is time t plus a duration d ≥ 0, saturating at math.MaxInt64 (which
// topology.NoEnd is: never) instead of wrapping to the past: times and
// durations are the caller's, and may be as large as an int64 holds.
func later(t, d int64) int64 {
	if t > 0 && d > math.MaxInt64-t {
		return math.MaxInt64
	}
	return t + d
}

// setDeadline gives job slot a deadline timeout from now, in queue kind.
func (e *Engine) setDeadline(slot int32, kind int, timeout int64) {
	j := &e.jobs[slot]
	j.deadline = later(e.now, timeout)
	e.timers[kind].push(timer{at: j.deadline, slot: slot, gen: j.gen})
}

// expire handles every unconfirmed action due at now.
func (e *Engine) expire(now int64) {
	for kind := range e.timers {
		for {
			t, ok := e.timers[kind].pop(now)
			if !ok {
				break
			}
			j := &e.jobs[t.slot]
			if j.gen != t.gen || j.deadline != t.at || j.state == stFree {
				continue
			}
			e.expireOne(kind, t.slot)
		}
	}
}

func (e *Engine) expireOne(kind int, slot int32) {
	j := &e.jobs[slot]
	id := e.id(slot)
	switch {
	case kind == tBind && (j.state == stAssumed || j.state == stRepairing):
		if err := e.removeFromState(slot); err != nil {
			e.failed("expire a bind", err)
			return
		}
		e.requeue(slot)
		e.dec.Expired = append(e.dec.Expired, Expiry{Job: id, What: BindExpired})
	case kind == tEvict && j.state == stEvicting:
		e.leaveState(slot)
		e.setState(slot, stRunning)
		e.dec.Expired = append(e.dec.Expired, Expiry{Job: id, What: EvictionExpired})
	case kind == tEvict && j.state == stReleased:
		e.requeue(slot)
		e.dec.Expired = append(e.dec.Expired, Expiry{Job: id, What: EvictionExpired})
	case kind == tMove && j.state == stMoving:
		e.rollbackMove(slot)
		e.dec.Expired = append(e.dec.Expired, Expiry{Job: id, What: MoveExpired})
	}
}

// rollbackMove puts an unconfirmed move back where the job was, if its old
// GPUs are still free once its beneficiary's nomination is dropped; the job
// counts as running either way.
func (e *Engine) rollbackMove(slot int32) {
	j := &e.jobs[slot]
	b := j.forJob
	bgen := j.forGen
	e.leaveState(slot)
	e.setState(slot, stRunning)
	if len(j.oldPods) == 0 {
		return
	}
	ops := e.ops[:0]
	if b >= 0 && e.jobs[b].gen == bgen && e.jobs[b].nom == nomDefrag {
		ops = append(ops, topology.CancelNomination(topology.JobID(b)))
	}
	ops = append(ops, topology.MoveJob(topology.JobID(slot), j.oldPods...))
	e.ops = ops
	if e.s.Apply(topology.Delta{Ops: ops}) == nil {
		if len(ops) == 2 {
			e.dropNominee(b)
		}
		e.sp.touchPods(e, j.oldPods)
	}
	j.oldPods = j.oldPods[:0]
}
