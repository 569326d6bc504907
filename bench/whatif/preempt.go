package whatif

import (
	"errors"
	"fmt"
	"slices"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
)

// preemptAnswer answers mode "preempt": preempt.Planner.Plan on the cluster
// as it is. The answer lists the victims (job names, sorted byte-wise) and
// the pods the request gets once they are gone; exact says whether the
// victim set is proven the cheapest (see package preempt). A request that
// fits as it is has no victims. The answer is checked before it is given:
// the nomination must apply to the State, and the plan once the victims are
// removed; if not, the engine is wrong, not the scenario.
func preemptAnswer(c *Cluster, sc *Scenario) (*Answer, error) {
	if sc.Request == nil {
		return nil, fmt.Errorf("%w: mode preempt needs a request", ErrInvalid)
	}
	req, noModel, err := c.Request(sc.Request, topology.JobID(len(c.Jobs)))
	if err != nil {
		return nil, err
	}
	if noModel {
		return noFit(placement.Reason{Code: placement.NoModel}.Format(c.Tree)), nil
	}
	var p preempt.Planner
	var res preempt.Result
	fits, reason, err := p.Plan(c.State, &req, 0, 1, &res)
	switch {
	case errors.Is(err, preempt.ErrInvalid):
		return nil, fmt.Errorf("%w: request: %w", ErrInvalid, err)
	case err != nil:
		return nil, fmt.Errorf("whatif: internal error: %w", err)
	case !fits:
		a := noFit(reason.FormatNames(c.Tree, func(id topology.JobID) string { return c.Jobs[id] }))
		return a, nil
	}
	if err := c.State.Clone().Apply(res.Delta()); err != nil {
		return nil, fmt.Errorf("whatif: internal error: the nomination does not apply: %w", err)
	}
	ops := make([]topology.Op, 0, len(res.Victims)+1)
	victims := make([]string, 0, len(res.Victims))
	for _, j := range res.Victims {
		ops = append(ops, topology.RemoveJob(j))
		victims = append(victims, c.Jobs[j])
	}
	ops = append(ops, res.Plan.Delta().Ops...)
	if err := c.State.Apply(topology.Delta{Ops: ops}); err != nil {
		return nil, fmt.Errorf("whatif: internal error: the plan does not apply once the victims are gone: %w", err)
	}
	slices.Sort(victims)
	return &Answer{Fits: true, Pods: c.placed(res.Plan.Pods), Victims: victims, Exact: res.Exact}, nil
}
