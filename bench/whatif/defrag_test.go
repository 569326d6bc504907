package whatif

import (
	"fmt"
	"slices"

	"github.com/blinksched/blink/topology"
)

// applyMoves checks the moves of a defrag answer against the scenario,
// independently of the planner, and applies them in order to the cluster's
// State: each moves a running job that is movable and preemptible, once,
// with as many pods as it has, pod i keeping pod i's GPU count, milli, CPU
// and memory on a healthy host of pod i's GPU model, the job's requiredLevel
// kept; and each applies to the State the previous ones left.
func applyMoves(c *Cluster, sc *Scenario, moves []Move) error {
	t := c.Tree
	moved := map[string]bool{}
	for k, mv := range moves {
		id := slices.Index(c.Jobs, mv.Job)
		if id < 0 {
			return fmt.Errorf("move %d: %q is not a running job", k, mv.Job)
		}
		j := &sc.Jobs[id]
		switch {
		case moved[mv.Job]:
			return fmt.Errorf("move %d: job %q moves twice", k, mv.Job)
		case j.Movable != nil && !*j.Movable || !j.Preemptible:
			return fmt.Errorf("move %d: job %q is not movable and preemptible", k, mv.Job)
		case len(mv.Pods) != len(j.Pods):
			return fmt.Errorf("move %d: job %q has %d pods, the move %d", k, mv.Job, len(j.Pods), len(mv.Pods))
		}
		moved[mv.Job] = true
		pods := make([]topology.Pod, len(mv.Pods))
		for i, p := range mv.Pods {
			h, ok := t.HostByName(p.Host)
			old, _ := t.HostByName(j.Pods[i].Host)
			if !ok {
				return fmt.Errorf("move %d pod %d: unknown host %q", k, i, p.Host)
			}
			var mask uint64
			for _, g := range p.GPUs {
				mask |= 1 << uint(g)
			}
			switch {
			case len(p.GPUs) != len(j.Pods[i].GPUs) || p.Milli != j.Pods[i].Milli:
				return fmt.Errorf("move %d pod %d changes shape", k, i)
			case t.HostModel(h) != t.HostModel(old):
				return fmt.Errorf("move %d pod %d changes GPU model", k, i)
			case c.State.HostHealth(h) != topology.Healthy:
				return fmt.Errorf("move %d pod %d on %s host %s", k, i, c.State.HostHealth(h), p.Host)
			}
			pods[i] = topology.Pod{Host: h, GPUs: mask, Milli: p.Milli, CPUMilli: j.Pods[i].CPUMilli, MemoryMiB: j.Pods[i].MemoryMiB}
		}
		level := topology.NoLevel
		if j.RequiredLevel != "" {
			level, _ = t.LevelByName(j.RequiredLevel)
		}
		if err := keepsLevel(t, pods, level); err != nil {
			return fmt.Errorf("move %d (job %q): %w", k, mv.Job, err)
		}
		op := topology.MoveJob(topology.JobID(id), pods...)
		if err := c.State.Apply(topology.Delta{Ops: []topology.Op{op}}); err != nil {
			return fmt.Errorf("move %d (job %q) does not apply: %w", k, mv.Job, err)
		}
		if err := c.State.Check(); err != nil {
			return fmt.Errorf("check after move %d: %w", k, err)
		}
	}
	return nil
}
