package blink

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Cycle runs one scheduling cycle at time now and returns its Decisions
// (valid until the next Cycle). In order:
//
//  1. Expiry: unconfirmed binds, repairs, evictions and moves whose timeout
//     passed are undone (Decisions.Expired); expired nominations are dropped.
//  2. Spares: domains short of spare hosts designate new ones.
//  3. Repairs: jobs a fault hit since the last cycle get replacement pods in
//     the domain they require (spares first, then free GPUs, then
//     preempting lower-priority work there), or go back to the queue.
//  4. Scheduling: pending jobs in queue order (priority, then submit time)
//     are placed and recorded as assumed binds. A job whose shape already
//     failed this cycle is answered from a memo. A blocked job may get
//     defragmentation moves or a preemption (capped per cycle), and the top
//     blocked job a reservation: a nomination of the GPUs it will use, with
//     the time they are expected to be free; lower jobs backfill around it,
//     or inside it when they are expected to end before that time.
//
// A now earlier than a time already seen counts as that time. Cost: O(pending
// jobs) plus the placements made; a job that cannot fit fails from the
// State's aggregates or the memo.
func (e *Engine) Cycle(now int64) Decisions {
	now = e.advance(now)
	e.resetDecisions(now)
	e.expire(now)
	e.expireNominations(now)
	e.sp.refill(e)
	e.announceRequeued()
	e.repairAll()
	e.schedule()
	return e.dec
}

func (e *Engine) resetDecisions(now int64) {
	d := &e.dec
	*d = Decisions{Now: now, Binds: d.Binds[:0], Preemptions: d.Preemptions[:0], Moves: d.Moves[:0],
		Repairs: d.Repairs[:0], Expired: d.Expired[:0], Pending: d.Pending[:0]}
	e.podBuf, e.idBuf, e.i32Buf = e.podBuf[:0], e.idBuf[:0], e.i32Buf[:0]
}

// keepPods copies pods into the decision arena.
func (e *Engine) keepPods(pods []topology.Pod) []topology.Pod {
	n := len(e.podBuf)
	if len(pods) == 1 { // most binds: one pod, copied without memmove's call
		e.podBuf = append(e.podBuf, pods[0])
	} else {
		e.podBuf = append(e.podBuf, pods...)
	}
	return e.podBuf[n:len(e.podBuf):len(e.podBuf)]
}

func (e *Engine) keepIDs(ids []JobID) []JobID {
	n := len(e.idBuf)
	e.idBuf = append(e.idBuf, ids...)
	return e.idBuf[n:len(e.idBuf):len(e.idBuf)]
}

func (e *Engine) keepI32(v []int32) []int32 {
	n := len(e.i32Buf)
	e.i32Buf = append(e.i32Buf, v...)
	return e.i32Buf[n:len(e.i32Buf):len(e.i32Buf)]
}

// expireNominations drops the nominations expired at now, in the State and
// in the engine's records.
func (e *Engine) expireNominations(now int64) {
	due := false
	for _, slot := range e.nominees {
		due = due || e.jobs[slot].nomExpiry <= now
	}
	if !due {
		return
	}
	if err := e.apply(topology.ExpireNominations(now)); err != nil {
		e.failed("expire nominations", err)
		return
	}
	for i := 0; i < len(e.nominees); {
		slot := e.nominees[i]
		if _, ok := e.s.NominationOf(topology.JobID(slot)); !ok {
			e.dropNominee(slot)
			continue
		}
		i++
	}
}

// announceRequeued turns jobs reports returned to the queue into Repairs.
func (e *Engine) announceRequeued() {
	for _, id := range e.requeued {
		e.dec.Repairs = append(e.dec.Repairs, Repair{Job: id, Requeued: true, Source: Rescheduled})
	}
	e.requeued = e.requeued[:0]
}

// budget counts what a cycle may still try.
type budget struct {
	place, preempt, defrag, reserve int
}

// schedule walks the queue once.
func (e *Engine) schedule() {
	e.memo.next()
	c := budget{place: e.cfg.MaxPlaceAttempts, preempt: e.cfg.MaxPreemptAttempts,
		defrag: e.cfg.MaxDefragAttempts, reserve: e.cfg.MaxReservations}
	if c.place == 0 {
		c.place = math.MaxInt
	}
	for _, slot := range e.nominees {
		e.jobs[slot].visited = false
	}
	// The queue keeps, in place and in order, the jobs still pending after
	// their turn (nothing else enters or leaves it during the walk), so no
	// second pass reads every queued job's record again.
	keep := e.queue[:0]
	e.inQueue = queued{}
	e.prefetchFirst()
	for i, slot := range e.queue {
		e.prefetchAhead(i)
		if e.visit(slot, &c) {
			keep = append(keep, slot)
			e.inQueue.add(e.t, &e.jobs[slot])
		}
	}
	e.queue = keep
}

// visit gives queued job slot its turn: it waits on its nomination, fits
// (and is bound), or is blocked (a planner may still bind it). It reports
// whether the job is still pending after its turn.
func (e *Engine) visit(slot int32, c *budget) bool {
	j := &e.jobs[slot]
	j.visited = true
	if j.nom != nomNone { // most jobs hold no nomination: no call to ask
		if r, wait := e.waiting(slot); wait {
			e.waitFor(slot, r)
			return j.state == stPending
		}
	}
	if c.place == 0 {
		e.waitFor(slot, Reason{Code: NotTried})
		return j.state == stPending
	}
	// The nominations' mask, only for a job whose shape the memo may hold
	// or which does not fit (most fit, and their shape is not in the memo):
	// placing changes no nomination.
	mask, memoOK, masked := uint64(0), true, len(e.nominees) == 0
	if e.memo.mayHit(j, memoPlace) {
		if !masked {
			mask, memoOK = e.admitMask(slot)
			masked = true
		}
		if memoOK && e.memo.mayHitKey(j, memoPlace, mask) {
			if r, ok := e.memo.lookup(e.jobs, j, memoPlace, mask); ok {
				e.settle(slot, e.blocked(slot, r, mask, memoOK, c))
				return e.jobs[slot].state == stPending
			}
		}
	}
	c.place--
	plan := e.place(slot)
	if plan != nil && e.bind(slot, plan) {
		return false
	}
	r := Reason{} // a plan that did not apply: a bug, counted
	if plan == nil {
		r = e.why
	}
	if !masked {
		mask, memoOK = e.admitMask(slot)
	}
	if memoOK {
		e.memo.add(j, slot, memoPlace, mask, r)
	}
	e.settle(slot, e.blocked(slot, r, mask, memoOK, c))
	return e.jobs[slot].state == stPending
}

// settle reports job slot as waiting for reason r, unless it was bound
// after all (a planner found it fits).
func (e *Engine) settle(slot int32, r Reason) {
	if e.jobs[slot].state == stPending {
		e.waitFor(slot, r)
	}
}

// waitFor reports job slot as waiting for reason r, written in place as
// bind writes its Bind (TestBindFields).
func (e *Engine) waitFor(slot int32, r Reason) {
	e.dec.Pending = append(e.dec.Pending, Waiting{})
	w := &e.dec.Pending[len(e.dec.Pending)-1]
	w.Job, w.Reason = e.id(slot), r
}

// waiting reports whether job slot waits on its nomination this cycle.
func (e *Engine) waiting(slot int32) (Reason, bool) {
	j := &e.jobs[slot]
	switch j.nom {
	case nomPreempt:
		if j.waitFor > 0 {
			return Reason{Code: Preempting}, true
		}
	case nomDefrag:
		if j.waitFor > 0 {
			return Reason{Code: WaitingMoves}, true
		}
	case nomReserve:
		if !e.reservationReady(slot) {
			return Reason{Code: Reserved}, true
		}
	}
	return Reason{}, false
}

// admitMask returns which of the engine's nominations admit job slot (bit
// i: e.nominees[i]); ok is false with more than 64 nominations.
func (e *Engine) admitMask(slot int32) (mask uint64, ok bool) {
	if len(e.nominees) > 64 {
		return 0, false
	}
	j := &e.jobs[slot]
	end, hasEnd := later(e.now, j.spec.RunTime), j.spec.RunTime > 0
	for i, n := range e.nominees {
		nj := &e.jobs[n]
		if n == slot || j.spec.Priority > nj.spec.Priority || hasEnd && end <= nj.nomReady {
			mask |= 1 << uint(i)
		}
	}
	return mask, true
}

// request builds job slot's request for now, in the engine's buffer (valid
// until the next call).
func (e *Engine) request(slot int32) *placement.Request {
	j := &e.jobs[slot]
	s, r := &j.spec, &e.req
	// Every field, written in place: a composite literal is built on the
	// stack and copied (twice the stores). TestRequestFields checks that no
	// field is left out.
	r.Job, r.Priority, r.Preemptible = topology.JobID(slot), s.Priority, s.Preemptible
	r.HasEnd, r.End = s.RunTime > 0, later(e.now, s.RunTime)
	r.Sets, r.Required, r.Preferred, r.Exclusive = s.Sets, s.Required, s.Preferred, s.Exclusive
	r.Models, r.Policy = s.Models, s.Policy
	r.Restriction, r.Eligible = e.sp.restrictionFor(j), nil
	if r.Restriction != nil {
		r.Eligible = r.Restriction.Eligible()
	}
	return r
}

// place finds where job slot goes now: the plan, or nil and why not in
// e.why (a result of seven words would be zeroed and spilled at every
// turn). An elastic job gets its largest size that fits, found by binary
// search over the common growth above its minimum.
func (e *Engine) place(slot int32) *placement.Plan {
	j := &e.jobs[slot]
	if !e.maxHealthyOK || e.sp.changed { // fillMaxHealthy's test, without the call
		e.fillMaxHealthy()
	}
	if j.need > e.leastHealthy { // else a domain of every level may hold it: most jobs
		if l, have := e.mostHealthy(j); j.need > have {
			return e.noPlan(neverFits(l, have, j.need))
		}
	}
	r := e.request(slot)
	scope := topology.DomainID(0)
	if j.nom != nomNone {
		scope = j.nomDomain
	}
	if !j.elastic && scope == 0 { // most jobs: placeIn's last call, without placeIn's
		ok, why, err := e.v.Place(e.s, r, &e.plan)
		switch {
		case err != nil:
			e.failed("place", err) // specs are validated at Submit: a bug
			return e.noPlan(e.noFit(placement.Reason{}))
		case ok:
			return &e.plan
		}
		return e.noPlan(e.noFit(why))
	}
	if !j.elastic {
		ok, why := e.placeIn(r, scope, &e.plan)
		if ok {
			return &e.plan
		}
		return e.noPlan(e.noFit(why))
	}
	grow := int32(0)
	for i := range j.spec.Sets {
		grow = max(grow, j.spec.Sets[i].Pods-j.minSets()[i].Pods)
	}
	e.sets = append(e.sets[:0], j.spec.Sets...)
	r.Sets = e.sets
	probe := func(x int32, into *placement.Plan) (bool, placement.Reason) {
		for i := range e.sets {
			top, bot := j.spec.Sets[i].Pods, j.minSets()[i].Pods
			n := min(top, bot+x)
			if s := e.sets[i].SliceSize; s > 0 {
				n -= n % s
			}
			e.sets[i].Pods = n
		}
		return e.placeIn(r, scope, into)
	}
	if ok, _ := probe(grow, &e.plan); ok {
		r.Sets = j.spec.Sets
		return &e.plan
	}
	ok, why := probe(0, &e.best)
	if !ok {
		r.Sets = j.spec.Sets
		return e.noPlan(e.noFit(why))
	}
	lo, hi := int32(0), grow // lo fits, hi does not
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok, _ := probe(mid, &e.plan); ok {
			lo = mid
			e.plan, e.best = e.best, e.plan
		} else {
			hi = mid
		}
	}
	r.Sets = j.spec.Sets
	return &e.best
}

// noPlan is place's answer when the job does not fit for reason r.
func (e *Engine) noPlan(r Reason) *placement.Plan {
	e.why = r
	return nil
}

// placeIn places r inside scope first (a nominee's domain), then anywhere.
// Spare hosts: a non-preemptible job's request carries the spares'
// restriction (placement.Restriction), so it is placed from exact
// capacities of the other hosts in one call.
func (e *Engine) placeIn(r *placement.Request, scope topology.DomainID, plan *placement.Plan) (bool, placement.Reason) {
	if scope > 0 {
		ok, _, err := e.v.PlaceWithout(e.s, r, scope, nil, plan)
		if err != nil {
			e.failed("place in the nominee's domain", err)
		} else if ok {
			return true, placement.Reason{}
		}
	}
	ok, why, err := e.v.Place(e.s, r, plan)
	if err != nil {
		e.failed("place", err) // specs are validated at Submit: a bug
		return false, placement.Reason{}
	}
	return ok, why
}

// noFit turns placement's reason into the engine's: shapes that no healthy
// host could ever take never fit.
func (e *Engine) noFit(why placement.Reason) Reason {
	if why.Code.Permanent() {
		return Reason{Code: NeverFits, Place: why}
	}
	return Reason{Code: NoFit, Place: why}
}

// mostHealthy returns job j's required level (the root when it has none)
// and the most healthy GPUs a domain of that level has, not counting spare
// hosts for a non-preemptible job: a job that needs more never fits.
func (e *Engine) mostHealthy(j *job) (topology.Level, int64) {
	l := j.spec.Required
	if l < 0 || l >= e.t.HostLevel() {
		l = 0
	}
	if !e.maxHealthyOK || e.sp.changed { // fillMaxHealthy's test, without the call
		e.fillMaxHealthy()
	}
	if e.sp.on() && !j.spec.Preemptible {
		return l, e.maxNonSpare[l]
	}
	return l, e.maxHealthy[l]
}

// neverFits is the reason of a job that needs more than the have GPUs
// mostHealthy found at level l.
func neverFits(l topology.Level, have, need int64) Reason {
	code := placement.NotEnoughGPUs
	if l > 0 {
		code = placement.RequiredLevel
	}
	return Reason{Code: NeverFits, Place: placement.Reason{Code: code, Level: l, Have: have, Need: need}}
}

// fillMaxHealthy recomputes, after a health or spare change, the most
// healthy GPUs of a domain per level, with and without spare hosts: O(domains
// + spares · levels).
func (e *Engine) fillMaxHealthy() {
	if e.sp.changed {
		e.sp.changed, e.maxHealthyOK = false, false
	}
	if e.maxHealthyOK {
		return
	}
	t := e.t
	if e.sp.on() {
		if len(e.spareGPUs) != t.NumDomains() {
			e.spareGPUs = make([]int32, t.NumDomains())
		}
		clear(e.spareGPUs)
		for w, word := range e.sp.isSpare {
			for ; word != 0; word &= word - 1 {
				h := topology.HostID(w<<6 + bits.TrailingZeros64(word))
				n := int32(t.HostGPUCount(h))
				for l := topology.Level(0); l < t.HostLevel(); l++ {
					e.spareGPUs[t.HostDomain(h, l)] += n
				}
			}
		}
	}
	e.maxHealthy, e.maxNonSpare = e.maxHealthy[:0], e.maxNonSpare[:0]
	for l := topology.Level(0); l < t.HostLevel(); l++ {
		lo, hi := t.LevelDomains(l)
		all, non := int64(0), int64(0)
		for d := lo; d < hi; d++ {
			h := int64(e.s.HealthyGPUs(d))
			all = max(all, h)
			if e.sp.on() {
				non = max(non, h-int64(e.spareGPUs[d]))
			}
		}
		e.maxHealthy = append(e.maxHealthy, all)
		e.maxNonSpare = append(e.maxNonSpare, non)
	}
	e.leastHealthy = slices.Min(e.maxHealthy)
	if e.sp.on() {
		e.leastHealthy = min(e.leastHealthy, slices.Min(e.maxNonSpare))
	}
	e.maxHealthyOK = true
}

// bind applies plan for job slot as an assumed bind and records the
// decision. It reports false (and counts a failure) if the plan does not
// apply, which would be a bug: plans are made on the current State.
func (e *Engine) bind(slot int32, plan *placement.Plan) bool {
	j := &e.jobs[slot]
	for i := range min(len(plan.Pods), 4) { // Apply reads their pod lists after validating
		e.s.PrefetchHost(plan.Pods[i].Host)
	}
	d := plan.Delta()
	d.Ops[0].Info.Movable = j.spec.Movable
	if err := e.s.Apply(d); err != nil {
		e.failed(fmt.Sprintf("bind (info %+v pods %+v)", d.Ops[0].Info, d.Ops[0].Pods), err)
		return false
	}
	if j.nom != nomNone {
		e.dropNominee(slot) // AddJob released the nomination
	}
	// setState and setDeadline, inlined: a queued job is pending (not
	// evicting, so the list of evicting jobs stays as it is).
	j.state, j.inQueue, j.started = stAssumed, false, e.now
	j.deadline = later(e.now, e.cfg.BindTimeout)
	e.timers[tBind].push(timer{at: j.deadline, slot: slot, gen: j.gen})
	if !j.spec.Preemptible {
		e.sp.taken(e, plan.Pods)
	}
	buf, sets := e.i32Buf, plan.Info.Sets // the sizes go straight to the decision arena
	n := len(buf)
	for i := range sets {
		buf = append(buf, sets[i].Count)
	}
	e.i32Buf = buf
	sizes := buf[n:len(buf):len(buf)]
	// The decision, written in place field by field: a composite literal
	// is built on the stack and copied 16 bytes at a time, loads that wait
	// for the 8-byte stores that built it (no store forwarding).
	// TestBindFields checks that no field is left out.
	binds := e.dec.Binds
	if len(binds) == cap(binds) {
		binds = slices.Grow(binds, 1)
	}
	binds = binds[:len(binds)+1]
	b := &binds[len(binds)-1]
	b.Job, b.Pods, b.Sizes, b.Domain = makeID(slot, j.gen), e.keepPods(plan.Pods), sizes, plan.Domain
	e.dec.Binds = binds
	return true
}

// blocked handles a job that did not fit: defragmentation, preemption or a
// reservation, within the cycle's budget. It returns the reason to report.
func (e *Engine) blocked(slot int32, r Reason, mask uint64, memoOK bool, c *budget) Reason {
	j := &e.jobs[slot]
	if r.Code == NeverFits || j.nom != nomNone {
		return r
	}
	if c.defrag > 0 && e.cfg.Defragmenter != nil {
		c.defrag--
		if e.tryDefrag(slot) {
			return e.afterPlan(slot)
		}
	}
	if c.preempt > 0 && e.cfg.Preempter != nil && e.worthPreempting(j) {
		if _, failed := e.memo.lookup(e.jobs, j, memoPreempt, mask); !memoOK || !failed {
			c.preempt--
			if e.tryPreempt(slot) {
				return e.afterPlan(slot)
			}
			if memoOK {
				e.memo.add(j, slot, memoPreempt, mask, r)
			}
		}
	}
	if c.reserve > 0 {
		ok, freed := e.makeRoomForReservation(slot)
		if freed && c.place > 0 { // a lower job's reservation is gone: maybe it fits now
			c.place--
			plan := e.place(slot)
			if plan != nil && e.bind(slot, plan) {
				return Reason{}
			}
			r = Reason{}
			if plan == nil {
				r = e.why
			}
		}
		if ok {
			c.reserve--
			if e.reserve(slot) {
				return Reason{Code: Reserved}
			}
		}
	}
	return r
}

// afterPlan is the reason of a job a plan just served: it waits for its
// victims or moves, or it was bound at once (no reason: it left the
// queue).
func (e *Engine) afterPlan(slot int32) Reason {
	j := &e.jobs[slot]
	switch {
	case j.nom == nomDefrag:
		return Reason{Code: WaitingMoves}
	case j.nom == nomPreempt:
		return Reason{Code: Preempting}
	}
	return Reason{}
}

// worthPreempting reports whether the State's aggregates leave room for a
// preemption: free GPUs plus GPUs of preemptible lower-priority jobs
// (an upper bound) reach the job's smallest size.
func (e *Engine) worthPreempting(j *job) bool {
	_, hi := e.s.PreemptibleBelow(0, j.spec.Priority)
	return hi > 0 && int64(hi+e.s.Free(0)) >= j.need
}

// makeRoomForReservation reports whether job slot may take a reservation:
// fewer than MaxReservations are held, or one is held by a job later in the
// queue (not visited yet this cycle), which then loses it (freed).
func (e *Engine) makeRoomForReservation(slot int32) (ok, freed bool) {
	held := 0
	victim := int32(-1)
	for _, n := range e.nominees {
		if nj := &e.jobs[n]; nj.nom == nomReserve {
			held++
			if !nj.visited && (victim < 0 || e.before(victim, n)) {
				victim = n
			}
		}
	}
	if held < e.cfg.MaxReservations {
		return true, false
	}
	if victim < 0 || !e.before(slot, victim) {
		return false, false
	}
	if err := e.apply(topology.CancelNomination(topology.JobID(victim))); err != nil {
		e.failed("cancel a reservation", err)
		return false, false
	}
	e.dropNominee(victim)
	return true, true
}
