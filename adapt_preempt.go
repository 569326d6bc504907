package blink

import (
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
)

// PreemptPlanner is the Preempter backed by package preempt: the cheapest
// irreducible victim set (see preempt.Planner). It is the default
// Config.Preempter. The engine makes its own nomination of the plan's GPUs
// (taking over those of lower-priority nominees, as preempt.Result.Delta
// would), so Preempt sets Planner.Config.NoNomination: the Planner makes
// none.
type PreemptPlanner struct {
	// Planner bounds its search with Planner.Config (zero: its defaults).
	Planner preempt.Planner
	res     preempt.Result
}

// Preempt implements Preempter.
func (p *PreemptPlanner) Preempt(s *topology.State, r *placement.Request) ([]topology.JobID, *placement.Plan, bool, error) {
	p.Planner.Config.NoNomination = true // the engine nominates the plan's GPUs itself
	ok, _, err := p.Planner.Plan(s, r, 0, 0, &p.res)
	if err != nil || !ok {
		return nil, nil, false, err
	}
	return p.res.Victims, &p.res.Plan, true, nil
}
