package blink

import (
	"slices"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Planners' answers are checked, not trusted. A Preempter's or
// Defragmenter's plan for a blocked job, and each move of a running job,
// must keep the job's placement constraints — every pod in one domain of
// its required level, on a host of an acceptable model, each slice of a
// pod set in one domain of the slice's level — or the engine drops the
// answer: State.Apply checks that the pods fit, not what the job asked for.

// planFits reports whether a planner's plan for job j has the request's
// pod sets, in order, with every pod of its set's shape, and keeps j's
// constraints.
func (e *Engine) planFits(j *job, sets []placement.PodSet, plan *placement.Plan) bool {
	i := 0
	for _, set := range sets {
		if set.SliceSize > 0 && !e.slicesHold(plan.Pods, i, int(set.Pods), int(set.SliceSize), set.SliceLevel) {
			return false
		}
		for range set.Pods {
			if i >= len(plan.Pods) {
				return false
			}
			p := &plan.Pods[i]
			if p.NumGPUs() != int(set.GPUs) || p.Milli != set.Milli || p.CPUMilli != set.CPUMilli || p.MemoryMiB != set.MemoryMiB {
				return false
			}
			i++
		}
	}
	return i == len(plan.Pods) && i > 0 && e.within(plan.Pods, j.spec.Required, j.spec.Models)
}

// moveFits reports whether pods, a move of running job id, keep its
// constraints (its pod sets as the State records them).
func (e *Engine) moveFits(id topology.JobID, pods []topology.Pod) bool {
	info, ok := e.s.JobInfo(id)
	if !ok || !e.within(pods, info.Required, e.jobs[id].spec.Models) {
		return false
	}
	start := 0
	for _, set := range info.Sets {
		if set.SliceSize > 0 && !e.slicesHold(pods, start, int(set.Count), int(set.SliceSize), set.SliceLevel) {
			return false
		}
		start += int(set.Count)
	}
	return true
}

// within reports whether pods lie in one domain of level required (none:
// a level of 0 or below) on hosts of the models given (any: none given).
func (e *Engine) within(pods []topology.Pod, required topology.Level, models []int) bool {
	if required > 0 && len(pods) > 0 {
		lo, _ := hostRange(e.t, pods[0].Host, required)
		for i := range pods {
			if l, _ := hostRange(e.t, pods[i].Host, required); l != lo {
				return false
			}
		}
	}
	if len(models) > 0 {
		for i := range pods {
			if !slices.Contains(models, e.t.HostModel(pods[i].Host)) {
				return false
			}
		}
	}
	return true
}

// slicesHold reports whether the pods [start, start+count) of pods, cut
// into slices of size from start, keep each slice in one domain of level
// l; pods past the end are not checked (the caller counts them).
func (e *Engine) slicesHold(pods []topology.Pod, start, count, size int, l topology.Level) bool {
	if l <= 0 || size <= 1 {
		return true
	}
	end := min(start+count, len(pods))
	for a := start; a < end; a += size {
		lo, _ := hostRange(e.t, pods[a].Host, l)
		for r := a + 1; r < min(a+size, end); r++ {
			if l2, _ := hostRange(e.t, pods[r].Host, l); l2 != lo {
				return false
			}
		}
	}
	return true
}

// hostRange returns the hosts of the domain of level l that holds host h
// (h alone at the host level).
func hostRange(t *topology.Tree, h topology.HostID, l topology.Level) (lo, hi topology.HostID) {
	if l >= t.HostLevel() {
		return h, h + 1
	}
	return t.Hosts(t.HostDomain(h, l))
}
