package blink

import (
	"slices"

	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
)

// Clone returns an independent copy of the engine: its State (State.Clone),
// jobs, queue, timers, nominations and spares, with fresh scratch buffers.
// The Config is shared, except that the built-in PreemptPlanner and
// DefragPlanner are replaced by fresh ones (their scratch state is their
// own); a custom Preempter or Defragmenter is shared: use the clones one at
// a time if it keeps state. Specs are shared too; the engine never
// writes them after Submit. For what-if runs, tests and benchmarks. O(GPUs +
// jobs + pods).
func (e *Engine) Clone() *Engine {
	c := &Engine{cfg: e.cfg, s: e.s.Clone(), t: e.t, now: e.now, seq: e.seq, evicting: slices.Clone(e.evicting),
		free: slices.Clone(e.free), queue: slices.Clone(e.queue),
		faulted: slices.Clone(e.faulted), requeued: slices.Clone(e.requeued),
		nominees: slices.Clone(e.nominees), applyFailures: e.applyFailures}
	c.jobs = make([]job, len(e.jobs))
	for i := range e.jobs {
		j := e.jobs[i]
		j.minReq = slices.Clone(j.minReq)
		j.oldPods = slices.Clone(j.oldPods)
		c.jobs[i] = j
	}
	for k := range e.timers {
		c.timers[k] = timerQueue{q: slices.Clone(e.timers[k].q[e.timers[k].head:])}
	}
	c.sp = e.sp.clone(c.s)
	c.inQueue = e.inQueue
	c.roomFor() // a clone takes the queue's decisions without growing its buffers, as the original does
	// The built-in planners keep scratch state: each clone gets its own.
	if p, ok := c.cfg.Preempter.(*PreemptPlanner); ok {
		c.cfg.Preempter = &PreemptPlanner{Planner: preempt.Planner{Config: p.Planner.Config}}
	}
	if d, ok := c.cfg.Defragmenter.(*DefragPlanner); ok {
		c.cfg.Defragmenter = &DefragPlanner{Config: d.Config}
	}
	_ = c.v.SetProfile(c.t, c.cfg.Profile) // validated by New: it cannot fail
	c.prepare()
	return c
}

// clone copies the spare pools for s, the engine clone's State.
func (sp *spares) clone(s *topology.State) spares {
	c := spares{pol: sp.pol, isSpare: slices.Clone(sp.isSpare),
		lo: sp.lo, dirty: slices.Clone(sp.dirty), gpuless: sp.gpuless}
	for i := range sp.count {
		c.count = append(c.count, slices.Clone(sp.count[i]))
		c.isDirty = append(c.isDirty, slices.Clone(sp.isDirty[i]))
	}
	if sp.rx != nil {
		c.rx = sp.rx.CloneFor(s) // its sums copied, not counted afresh at the clone's first cycle
	}
	return c
}

// prepare sizes the planners' per-host scratch now (placement.Solver.Prepare
// and the like), so that the first Cycle of a new or cloned engine does not
// allocate megabytes at a million GPUs.
func (e *Engine) prepare() {
	e.v.Prepare(e.t)
	if p, ok := e.cfg.Preempter.(*PreemptPlanner); ok {
		p.Planner.Prepare(e.t)
	}
	if d, ok := e.cfg.Defragmenter.(*DefragPlanner); ok {
		d.Planner.Prepare(e.t)
	}
}
