package defrag_test

import (
	"fmt"

	"github.com/blinksched/blink/defrag"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// checkPlan applies plan's moves one by one to a clone of s, checking after
// each that the State's invariants hold and that the moved job is still
// valid: same pod count, pod i with pod i's shape (GPUs, milli, CPU, memory)
// on a host of pod i's GPU model, its required level and slices kept, and,
// outside target (if ≥ 0; -1 for none). Then, if r is not nil, the request's
// placement must apply and keep the request's constraints. It returns the
// State after the plan, or the first problem.
func checkPlan(s *topology.State, plan *defrag.Plan, r *placement.Request, target topology.DomainID) (*topology.State, error) {
	t := s.Tree()
	c := s.Clone()
	seen := map[topology.JobID]bool{}
	for i, mv := range plan.Moves {
		if seen[mv.Job] {
			return nil, fmt.Errorf("move %d: job %d moves twice", i, mv.Job)
		}
		seen[mv.Job] = true
		info, ok := c.JobInfo(mv.Job)
		if !ok {
			return nil, fmt.Errorf("move %d: job %d absent", i, mv.Job)
		}
		if !info.Movable || !info.Preemptible {
			return nil, fmt.Errorf("move %d: job %d is not movable and preemptible", i, mv.Job)
		}
		old := c.AppendJobPods(nil, mv.Job)
		if err := c.Apply(topology.Delta{Ops: []topology.Op{topology.MoveJob(mv.Job, mv.Pods...)}}); err != nil {
			return nil, fmt.Errorf("move %d (job %d): %w", i, mv.Job, err)
		}
		if err := c.Check(); err != nil {
			return nil, fmt.Errorf("after move %d: %w", i, err)
		}
		if err := validMove(t, &info, old, mv.Pods, target); err != nil {
			return nil, fmt.Errorf("move %d (job %d): %w", i, mv.Job, err)
		}
	}
	if r == nil {
		return c, nil
	}
	if len(plan.Request.Pods) == 0 {
		return nil, fmt.Errorf("no placement for the request")
	}
	if err := validRequest(t, r, plan.Request.Pods); err != nil {
		return nil, err
	}
	if err := c.Apply(plan.Request.Delta()); err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("after the request: %w", err)
	}
	return c, nil
}

// validMove checks a moved job's new pods against its old ones and its
// recorded constraints.
func validMove(t *topology.Tree, info *topology.Job, old, pods []topology.Pod, target topology.DomainID) error {
	if len(old) != len(pods) {
		return fmt.Errorf("%d pods, had %d", len(pods), len(old))
	}
	for i := range pods {
		a, b := old[i], pods[i]
		if a.NumGPUs() != b.NumGPUs() || a.Milli != b.Milli || a.CPUMilli != b.CPUMilli || a.MemoryMiB != b.MemoryMiB {
			return fmt.Errorf("pod %d changed shape: %+v → %+v", i, a, b)
		}
		if t.HostModel(a.Host) != t.HostModel(b.Host) {
			return fmt.Errorf("pod %d changed GPU model", i)
		}
		if target >= 0 {
			if lo, hi := t.Hosts(target); b.Host >= lo && b.Host < hi {
				return fmt.Errorf("pod %d moved into the target %s", i, t.DomainPath(target))
			}
		}
	}
	if !sameDomain(t, pods, info.Required) {
		return fmt.Errorf("required level %s broken", t.LevelName(info.Required))
	}
	rank := 0
	for _, set := range info.Sets {
		if set.SliceSize > 0 {
			for k := 0; k < int(set.Count); k += int(set.SliceSize) {
				if !sameDomain(t, pods[rank+k:rank+k+int(set.SliceSize)], set.SliceLevel) {
					return fmt.Errorf("slice at rank %d broken", rank+k)
				}
			}
		}
		rank += int(set.Count)
	}
	return nil
}

// validRequest checks a one-set request's pods: count, shape, model,
// required level and slices.
func validRequest(t *topology.Tree, r *placement.Request, pods []topology.Pod) error {
	n := 0
	for _, set := range r.Sets {
		n += int(set.Pods)
	}
	if len(pods) != n {
		return fmt.Errorf("request: %d pods, want %d", len(pods), n)
	}
	rank := 0
	for _, set := range r.Sets {
		for k := range int(set.Pods) {
			p := pods[rank+k]
			if p.NumGPUs() != int(set.GPUs) || p.Milli != set.Milli || p.CPUMilli != set.CPUMilli {
				return fmt.Errorf("request pod %d has the wrong shape", rank+k)
			}
			if len(r.Models) > 0 && !contains(r.Models, t.HostModel(p.Host)) {
				return fmt.Errorf("request pod %d on a host of another model", rank+k)
			}
		}
		if set.SliceSize > 0 {
			for k := 0; k < int(set.Pods); k += int(set.SliceSize) {
				if !sameDomain(t, pods[rank+k:rank+k+int(set.SliceSize)], set.SliceLevel) {
					return fmt.Errorf("request slice at rank %d broken", rank+k)
				}
			}
		}
		rank += int(set.Pods)
	}
	if !sameDomain(t, pods, r.Required) {
		return fmt.Errorf("request breaks its required level")
	}
	return nil
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// sameDomain reports whether pods share one domain of level l (true for
// NoLevel and the root).
func sameDomain(t *topology.Tree, pods []topology.Pod, l topology.Level) bool {
	if l <= 0 || len(pods) == 0 {
		return true
	}
	for _, p := range pods[1:] {
		if l == t.HostLevel() {
			if p.Host != pods[0].Host {
				return false
			}
		} else if t.HostDomain(p.Host, l) != t.HostDomain(pods[0].Host, l) {
			return false
		}
	}
	return true
}
