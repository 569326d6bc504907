package blink_test

import (
	"slices"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// The random loops check every "does not fit" a cycle answers with a fresh
// placement on the State the cycle leaves. Within a cycle the State only
// fills (binds, nominations), unless a nomination is released or changed (a
// nominee bound elsewhere, a reservation taken over) or jobs move: in those
// cycles the check is skipped. Otherwise a job reported NoFit or NeverFits
// at its turn must not fit at the end either: a fit then would fit at its
// turn too, and the engine (its aggregates, its memo of failed shapes, its
// nomination masks, the spares' restriction) missed it. The request is the
// job's smallest size, without its run time (which only admits it to more
// nominations): a stricter request than the engine's.

// nomSnap is the State's nominations by job.
type nomSnap map[topology.JobID][]topology.GPUID

func snapNoms(s *topology.State) nomSnap {
	out := nomSnap{}
	for j := range s.JobIDBound() {
		if n, ok := s.NominationOf(j); ok {
			out[j] = slices.Clone(n.GPUs)
		}
	}
	return out
}

// released reports whether a nomination of before is gone or changed in s.
func (before nomSnap) released(s *topology.State) bool {
	for j, gpus := range before {
		n, ok := s.NominationOf(j)
		if !ok || !slices.Equal(n.GPUs, gpus) {
			return true
		}
	}
	return false
}

// checkNoFit fails if a job d reports as not fitting fits on the State the
// cycle left (see above); before is the nominations before the cycle.
func (l *loop) checkNoFit(step int, d blink.Decisions, before nomSnap) {
	e := l.h.e
	s := e.State()
	if len(d.Moves) > 0 || before.released(s) {
		l.n["nofit-skipped"]++
		return
	}
	var v placement.Solver
	var plan placement.Plan
	for _, w := range d.Pending {
		if w.Reason.Code != blink.NoFit && w.Reason.Code != blink.NeverFits {
			continue
		}
		if st, _ := e.Status(w.Job); st != blink.Pending {
			continue // a planner bound it after all
		}
		r := l.smallest(w.Job)
		ok, _, err := v.Place(s, r, &plan)
		if err != nil {
			l.t.Fatalf("step %d: job %v: %v", step, w.Job, err)
		}
		l.n["nofit-checked"]++
		if ok {
			spec, _ := e.Spec(w.Job)
			l.t.Fatalf("step %d: job %v (%+v) was answered %s, but fits at the end of the cycle: pods %v",
				step, w.Job, spec, w.Reason.Format(l.h.tree), plan.Pods)
		}
	}
}

// smallest is job id's request at its smallest size, without its run time,
// kept off spare hosts unless it is preemptible.
func (l *loop) smallest(id blink.JobID) *placement.Request {
	e := l.h.e
	spec, _ := e.Spec(id)
	r := &placement.Request{Job: id.Slot(), Priority: spec.Priority, Preemptible: spec.Preemptible,
		Sets: slices.Clone(spec.Sets), Required: spec.Required, Preferred: spec.Preferred,
		Exclusive: spec.Exclusive, Models: spec.Models, Policy: spec.Policy}
	for i := range spec.MinPods {
		if spec.MinPods[i] > 0 {
			r.Sets[i].Pods = spec.MinPods[i]
		}
	}
	if !spec.Preemptible {
		n := l.h.tree.NumHosts()
		r.Eligible = make([]uint64, (n+63)/64)
		for h := range topology.HostID(n) {
			if !e.IsSpare(h) {
				r.Eligible[h/64] |= 1 << (uint(h) % 64)
			}
		}
	}
	return r
}
