package blink

import (
	"github.com/blinksched/blink/defrag"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// DefragPlanner is the Defragmenter backed by package defrag: the fewest
// moves (at most the engine's Config.MaxMoves) after which a request fits
// (defrag.Planner.MakeRoom). It is the default Config.Defragmenter.
type DefragPlanner struct {
	Planner defrag.Planner
	// Config bounds the search; its MaxMoves is replaced by the engine's.
	Config defrag.Config
	plan   defrag.Plan
	moves  []DefragMove
}

// Defrag implements Defragmenter.
func (d *DefragPlanner) Defrag(s *topology.State, r *placement.Request, maxMoves int) ([]DefragMove, *placement.Plan, bool, error) {
	cfg := d.Config
	cfg.MaxMoves = maxMoves
	res, err := d.Planner.MakeRoom(s, r, cfg, &d.plan)
	if err != nil || !res.Fits {
		return nil, nil, false, err
	}
	d.moves = d.moves[:0]
	for _, m := range d.plan.Moves {
		d.moves = append(d.moves, DefragMove{Job: m.Job, Pods: m.Pods})
	}
	return d.moves, &d.plan.Request, true, nil
}
