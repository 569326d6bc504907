package blink

import (
	"fmt"
	"slices"

	"github.com/blinksched/blink/topology"
)

// Check verifies the engine's invariants against its State, and the State's
// own (State.Check): every job the engine places is in the State and no
// other; the queue holds exactly the pending jobs, in order; nominations
// belong to pending jobs the engine knows as nominees; the spare bitset, its
// complement and the per-domain counts agree, and every spare host is
// healthy and holds only preemptible jobs; no plan failed to apply and no
// placement or planner call returned an error (internal failures). Tests
// call it after every step. O(GPUs + jobs + pods); allocates.
func (e *Engine) Check() error {
	if err := e.s.Check(); err != nil {
		return err
	}
	if e.applyFailures != 0 {
		return fmt.Errorf("blink: %d internal failures (plans that did not apply, placement errors), the first: %w", e.applyFailures, e.firstFailure)
	}
	if int(e.s.JobIDBound()) > len(e.jobs) {
		return fmt.Errorf("blink: the State knows job ids up to %d, the engine %d", e.s.JobIDBound(), len(e.jobs))
	}
	onFree := make([]bool, len(e.jobs))
	for _, f := range e.free {
		if onFree[f] || e.jobs[f].state != stFree {
			return fmt.Errorf("blink: slot %d is on the free list twice or is live", f)
		}
		onFree[f] = true
	}
	pending, evicting := 0, 0
	for i := range e.jobs {
		if err := e.checkSlot(int32(i), onFree[i]); err != nil {
			return err
		}
		switch e.jobs[i].state {
		case stPending:
			pending++
		case stEvicting:
			evicting++
		}
	}
	if len(e.free)+e.liveJobs() != len(e.jobs) {
		return fmt.Errorf("blink: %d free slots and %d live jobs for %d slots", len(e.free), e.liveJobs(), len(e.jobs))
	}
	if err := e.checkLists(pending, evicting); err != nil {
		return err
	}
	return e.sp.check(e)
}

// checkSlot checks job slot i against the State (presence, nomination,
// attributes) and the engine's lists (queue, free list: onFree).
func (e *Engine) checkSlot(i int32, onFree bool) error {
	j := &e.jobs[i]
	id := topology.JobID(i)
	_, nom := e.s.NominationOf(id)
	switch {
	case e.s.HasJob(id) != j.state.inState():
		return fmt.Errorf("blink: job slot %d is %v (state %d) but in the State: %v", i, j.state.status(), j.state, e.s.HasJob(id))
	case nom != (j.nom != nomNone):
		return fmt.Errorf("blink: job slot %d: State nomination %v, engine %v", i, nom, j.nom)
	case nom && j.state != stPending:
		return fmt.Errorf("blink: job slot %d holds a nomination but is %v", i, j.state.status())
	case j.inQueue != (j.state == stPending):
		return fmt.Errorf("blink: job slot %d is %v, in queue: %v", i, j.state.status(), j.inQueue)
	case j.state == stFree && !onFree:
		return fmt.Errorf("blink: free slot %d is not on the free list", i)
	}
	if j.state.inState() {
		info, _ := e.s.JobInfo(id)
		if info.Priority != j.spec.Priority || info.Preemptible != j.spec.Preemptible {
			return fmt.Errorf("blink: job slot %d: State attributes differ from its spec", i)
		}
	}
	return nil
}

// checkLists checks the evicting list, the queue (its length and order)
// and the nominees against the counts of the jobs' states and the State.
func (e *Engine) checkLists(pending, evicting int) error {
	if evicting != len(e.evicting) {
		return fmt.Errorf("blink: %d jobs evicting, %d listed", evicting, len(e.evicting))
	}
	for _, slot := range e.evicting {
		if e.jobs[slot].state != stEvicting {
			return fmt.Errorf("blink: slot %d listed as evicting is %v", slot, e.jobs[slot].state.status())
		}
	}
	if pending != len(e.queue) {
		return fmt.Errorf("blink: %d pending jobs, %d in the queue", pending, len(e.queue))
	}
	for i := 1; i < len(e.queue); i++ {
		if !e.before(e.queue[i-1], e.queue[i]) {
			return fmt.Errorf("blink: queue out of order at %d", i)
		}
	}
	if !slices.IsSorted(e.nominees) || len(slices.Compact(slices.Clone(e.nominees))) != len(e.nominees) {
		return fmt.Errorf("blink: nominees not sorted and distinct")
	}
	if n := e.s.NumNominations(); n != len(e.nominees) {
		return fmt.Errorf("blink: %d nominations in the State, %d nominees in the engine", n, len(e.nominees))
	}
	return nil
}

func (e *Engine) liveJobs() int {
	n := 0
	for i := range e.jobs {
		if e.jobs[i].state != stFree {
			n++
		}
	}
	return n
}

func (sp *spares) check(e *Engine) error {
	if !sp.on() {
		return nil
	}
	t := e.t
	if err := sp.rx.Check(e.s); err != nil {
		return fmt.Errorf("blink: spares: %w", err)
	}
	for h := topology.HostID(0); int(h) < t.NumHosts(); h++ {
		spare := sp.spare(h)
		if elig := !sp.rx.Closed(h); elig == spare {
			return fmt.Errorf("blink: host %d: spare %v, eligible %v", h, spare, elig)
		}
		if !spare {
			continue
		}
		if e.s.HostHealth(h) != topology.Healthy || e.s.HostFailedMask(h) != 0 {
			return fmt.Errorf("blink: spare host %s is not healthy", t.HostName(h))
		}
		for _, id := range e.s.AppendHostJobs(nil, h) {
			if info, _ := e.s.JobInfo(id); !info.Preemptible {
				return fmt.Errorf("blink: spare host %s holds non-preemptible job %d", t.HostName(h), id)
			}
		}
	}
	for i, p := range sp.pol {
		lo, hi := t.LevelDomains(p.Level)
		for d := lo; d < hi; d++ {
			hl, hh := t.Hosts(d)
			n := 0
			for h := hl; h < hh; h++ {
				if sp.spare(h) {
					n++
				}
			}
			if int32(n) != sp.count[i][d-lo] {
				return fmt.Errorf("blink: domain %s counts %d spares, has %d", t.DomainPath(d), sp.count[i][d-lo], n)
			}
			if err := sp.checkShort(e, i, d, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkShort: a domain short of spares and not marked dirty holds no
// candidate (refill would not find one until something in it changes).
func (sp *spares) checkShort(e *Engine, i int, d topology.DomainID, n int) error {
	if n >= sp.pol[i].Hosts || sp.isDirty[i][d-sp.lo[i]] {
		return nil
	}
	hl, hh := e.t.Hosts(d)
	for h := hl; h < hh; h++ {
		if sp.candidate(e, h) != spareNo {
			return fmt.Errorf("blink: domain %s is short of spares and not dirty, but host %s is a candidate",
				e.t.DomainPath(d), e.t.HostName(h))
		}
	}
	return nil
}
