package blink

import (
	"slices"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Preemption and defragmentation plans for a blocked job, from the
// Preempter and Defragmenter plugged into the Config. The engine checks what
// a planner returns and applies it: victims become Evicting (the State keeps
// them until Evicted), moves are applied at once (Moving until Moved), and
// the GPUs the plan gives the blocked job are nominated for it, so freed
// capacity goes to it and not to the next small job. The nomination is
// sticky: while the job holds it, later cycles neither re-plan nor pick
// another domain; it waits until its victims or moves are confirmed (or
// expire), then is placed — inside the nominated domain first.

// minRequest returns job slot's request at its smallest size.
func (e *Engine) minRequest(slot int32) *placement.Request {
	j := &e.jobs[slot]
	r := e.request(slot)
	r.Sets = j.minSets()
	return r
}

// tryPreempt asks the Preempter for job slot; it reports whether the job
// now has a preemption under way (or was bound at once).
func (e *Engine) tryPreempt(slot int32) bool {
	j := &e.jobs[slot]
	r := e.minRequest(slot)
	victims, plan, ok, err := e.cfg.Preempter.Preempt(e.s, r)
	if err != nil {
		e.failed("Preempter", err) // the engine's requests are valid: the planner failed
		return false
	}
	if !ok || plan == nil || !e.planFits(j, j.minSets(), plan) {
		return false
	}
	if len(victims) == 0 {
		return e.bind(slot, plan)
	}
	e.ids = append(e.ids[:0], victims...)
	if !slices.IsSorted(e.ids) {
		slices.Sort(e.ids)
	}
	for i, v := range e.ids {
		if v < 0 || int(v) >= len(e.jobs) || i > 0 && e.ids[i-1] == v {
			return false
		}
		vj := &e.jobs[v]
		if vj.state != stRunning && vj.state != stAssumed || !vj.spec.Preemptible || vj.spec.Priority >= j.spec.Priority {
			return false
		}
	}
	if !e.nominatePlan(slot, plan, nomPreempt, e.cfg.EvictTimeout) {
		return false
	}
	j.waitFor = int32(len(e.ids))
	rs := &e.rs
	rs.ids = rs.ids[:0]
	for _, v := range e.ids {
		vj := &e.jobs[v]
		e.setState(int32(v), stEvicting)
		vj.forJob, vj.forGen = slot, j.gen
		e.setDeadline(int32(v), tEvict, e.cfg.EvictTimeout)
		rs.ids = append(rs.ids, e.id(int32(v)))
	}
	e.dec.Preemptions = append(e.dec.Preemptions, Preemption{Job: e.id(slot), Victims: e.keepIDs(rs.ids),
		Domain: plan.Domain, GPUs: len(e.gpuList)})
	return true
}

// nominatePlan nominates plan's GPUs for job slot, ready after wait, in one
// Delta after the ops moves. GPUs nominated for a job of lower priority
// are taken over: that nomination is cancelled (displaced), since the job
// outranks it; GPUs nominated for equal or higher priority are left out.
func (e *Engine) nominatePlan(slot int32, plan *placement.Plan, kind nomKind, wait int64, moves ...topology.Op) bool {
	j := &e.jobs[slot]
	gpus := e.podGPUs(e.gpuList[:0], plan.Pods)
	ops := append(e.ops[:0], moves...)
	displaced := e.ranks[:0]
	for _, n := range e.nominees {
		nom, ok := e.s.NominationOf(topology.JobID(n))
		if n == slot || !ok || !intersects(gpus, nom.GPUs) {
			continue
		}
		if nom.Priority < j.spec.Priority {
			ops = append(ops, topology.CancelNomination(topology.JobID(n)))
			displaced = append(displaced, n)
			continue
		}
		gpus = slices.DeleteFunc(gpus, func(g topology.GPUID) bool {
			_, in := slices.BinarySearch(nom.GPUs, g)
			return in
		})
	}
	e.gpuList, e.ranks = gpus, displaced
	ready, expiry := later(e.now, wait), later(e.now, e.cfg.NominationTimeout)
	if len(gpus) > 0 {
		ops = append(ops, topology.Nominate(topology.Nomination{Job: topology.JobID(slot), Priority: j.spec.Priority,
			Ready: ready, Expiry: expiry, GPUs: gpus}))
	}
	e.ops = ops
	if len(ops) == 0 || e.s.Apply(topology.Delta{Ops: ops}) != nil {
		return false
	}
	for _, n := range displaced {
		e.dropNominee(n)
	}
	if len(gpus) > 0 {
		e.addNominee(slot, kind, plan.Domain)
		j.nomReady, j.nomExpiry = ready, expiry
	}
	return true
}

// intersects reports whether sorted lists a and b share an element.
func intersects(a, b []topology.GPUID) bool {
	for i, k := 0, 0; i < len(a) && k < len(b); {
		switch {
		case a[i] == b[k]:
			return true
		case a[i] < b[k]:
			i++
		default:
			k++
		}
	}
	return false
}

// tryDefrag asks the Defragmenter for job slot; it reports whether the job
// now waits for moves (or was bound at once).
func (e *Engine) tryDefrag(slot int32) bool {
	j := &e.jobs[slot]
	r := e.minRequest(slot)
	moves, plan, ok, err := e.cfg.Defragmenter.Defrag(e.s, r, e.cfg.MaxMoves)
	if err != nil {
		e.failed("Defragmenter", err) // as for the Preempter
		return false
	}
	if !ok || plan == nil || !e.planFits(j, j.minSets(), plan) || len(moves) > e.cfg.MaxMoves {
		return false
	}
	if len(moves) == 0 {
		return e.bind(slot, plan)
	}
	if !e.moveOpsOf(moves) || !e.nominatePlan(slot, plan, nomDefrag, e.cfg.MoveTimeout, e.moveOps...) {
		return false
	}
	e.startMoves(slot, moves)
	return true
}

// moveOpsOf checks a Defragmenter's moves (each of a running, preemptible,
// movable job, keeping its constraints) and writes their ops to e.moveOps,
// and the old pods of each moved job to e.rs.vpods, the offset of each
// job's first move there to e.rs.ranks; false for a move it rejects.
func (e *Engine) moveOpsOf(moves []DefragMove) bool {
	ep := e.nextMark()
	ops := e.moveOps[:0]
	old := e.rs.vpods[:0]
	e.rs.ranks = e.rs.ranks[:0]
	for _, m := range moves {
		if m.Job < 0 || int(m.Job) >= len(e.jobs) {
			return false
		}
		mj := &e.jobs[m.Job]
		if mj.state != stRunning || !mj.spec.Preemptible || !mj.spec.Movable || !e.moveFits(m.Job, m.Pods) {
			return false
		}
		if e.mark[m.Job] != ep {
			e.mark[m.Job] = ep
			e.rs.ranks = append(e.rs.ranks, int32(len(old)))
			old = e.s.AppendJobPods(old, m.Job)
		}
		ops = append(ops, topology.MoveJob(m.Job, m.Pods...))
	}
	e.moveOps, e.rs.vpods = ops, old
	return true
}

// startMoves records the moves applied for job slot: each moved job
// moving, with its old pods (from moveOpsOf), a deadline and a Move
// decision.
func (e *Engine) startMoves(slot int32, moves []DefragMove) {
	j := &e.jobs[slot]
	old := e.rs.vpods
	k := 0
	ep := e.nextMark()
	for _, m := range moves {
		mj := &e.jobs[m.Job]
		if e.mark[m.Job] == ep {
			continue
		}
		e.mark[m.Job] = ep
		start := e.rs.ranks[k]
		end := int32(len(old))
		if k+1 < len(e.rs.ranks) {
			end = e.rs.ranks[k+1]
		}
		k++
		mj.oldPods = append(mj.oldPods[:0], old[start:end]...)
		e.setState(int32(m.Job), stMoving)
		mj.forJob, mj.forGen = slot, j.gen
		e.setDeadline(int32(m.Job), tMove, e.cfg.MoveTimeout)
		if j.nom == nomDefrag { // else every GPU of the plan was nominated already, for jobs it may displace
			j.waitFor++
		}
		e.sp.touchPods(e, mj.oldPods)
		pods := e.s.AppendJobPods(e.pods[:0], m.Job)
		e.pods = pods
		e.dec.Moves = append(e.dec.Moves, Move{Job: e.id(int32(m.Job)), Pods: e.keepPods(pods), For: e.id(slot)})
	}
}
