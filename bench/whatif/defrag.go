package whatif

import (
	"errors"
	"fmt"

	"github.com/blinksched/blink/defrag"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// defragAnswer answers mode "defrag": defrag.Planner.MakeRoom with at most
// maxMoves moves (default 8). Running jobs move when they are preemptible
// and movable, each at most once, keeping their requiredLevel, their pods'
// shapes and GPU model; failed and draining hosts take no moved pods. The
// answer lists the moves in execution order — each the job's name and all
// of its pods after the move, in its input order — and the request's pods
// once the moves are done; exact says whether the number of moves is proven
// the fewest (see package defrag). A request that fits as it is has no
// moves. The plan is checked before it is given: the moves, then the
// request, must apply to the State; if not, the engine is wrong, not the
// scenario.
func defragAnswer(c *Cluster, sc *Scenario) (*Answer, error) {
	if sc.Request == nil {
		return nil, fmt.Errorf("%w: mode defrag needs a request", ErrInvalid)
	}
	req, noModel, err := c.Request(sc.Request, topology.JobID(len(c.Jobs)))
	if err != nil {
		return nil, err
	}
	if noModel {
		return noFit(placement.Reason{Code: placement.NoModel}.Format(c.Tree)), nil
	}
	cfg := defrag.Config{MaxMoves: DefaultMaxMoves}
	if sc.MaxMoves != nil {
		cfg.MaxMoves = *sc.MaxMoves
	}
	var p defrag.Planner
	var plan defrag.Plan
	res, err := p.MakeRoom(c.State, &req, cfg, &plan)
	switch {
	case errors.Is(err, placement.ErrInvalid) || errors.Is(err, defrag.ErrInvalid):
		return nil, fmt.Errorf("%w: request: %w", ErrInvalid, err)
	case err != nil:
		return nil, fmt.Errorf("whatif: internal error: %w", err)
	case !res.Fits:
		a := noFit(res.Reason.Format(c.Tree))
		a.Exact = res.Exact
		return a, nil
	}
	if err := c.State.Apply(plan.Delta()); err != nil {
		return nil, fmt.Errorf("whatif: internal error: the moves do not apply: %w", err)
	}
	if err := c.State.Apply(plan.Request.Delta()); err != nil {
		return nil, fmt.Errorf("whatif: internal error: the request does not apply after the moves: %w", err)
	}
	moves := make([]Move, len(plan.Moves))
	for i, mv := range plan.Moves {
		moves[i] = Move{Job: c.Jobs[mv.Job], Pods: c.placed(mv.Pods)}
	}
	return &Answer{Fits: true, Pods: c.placed(plan.Request.Pods), Moves: moves, Exact: res.Exact}, nil
}
