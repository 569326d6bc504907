package blink_test

import (
	"github.com/blinksched/blink"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// The random loops check every repair a cycle gives up on (Requeued) against
// the State before the cycle: the job's faulted pods (on a failed host or a
// failed GPU) must not fit in free GPUs of its required domain, found here
// from where its pods are (one host at the host level), not from the
// engine's records. The engine repairs before it schedules, so in a cycle
// with one repair and nothing expired (an expiry can roll a move back onto
// free GPUs) the State it repairs on holds at most what the State before
// held free: a fit there is a fit for the engine too. Jobs with slices are
// left out (their groups constrain more than the domain).

// checkRequeue fails if the one repair of d was requeued though its faulted
// pods fit in free GPUs of their domain on pre, the State before the cycle.
func (l *loop) checkRequeue(step int, d blink.Decisions, pre *topology.State) {
	if len(d.Repairs) != 1 || !d.Repairs[0].Requeued || len(d.Expired) > 0 {
		return
	}
	id := d.Repairs[0].Job
	slot := id.Slot()
	info, ok := pre.JobInfo(slot)
	spec, err := l.h.e.Spec(id)
	if !ok || err != nil || sliced(info) {
		return
	}
	pods := pre.AppendJobPods(nil, slot)
	req := placement.Request{Job: slot, Priority: info.Priority, Preemptible: info.Preemptible, HasEnd: info.HasEnd,
		End: info.End, Exclusive: info.Exclusive, Models: spec.Models, Policy: spec.Policy}
	for _, p := range pods {
		if faulted(pre, p) {
			req.Sets = append(req.Sets, placement.PodSet{Pods: 1, GPUs: int32(p.NumGPUs()), Milli: p.Milli,
				CPUMilli: p.CPUMilli, MemoryMiB: p.MemoryMiB})
		}
	}
	if len(req.Sets) == 0 || len(pods) == 0 {
		return
	}
	t := pre.Tree()
	scope := topology.DomainID(0)
	switch h := pods[0].Host; {
	case info.Required >= t.HostLevel():
		scope = t.HostParent(h)
		req.Eligible = make([]uint64, (t.NumHosts()+63)/64)
		req.Eligible[h/64] = 1 << (uint(h) % 64)
	case info.Required > 0:
		scope = t.HostDomain(h, info.Required)
	}
	l.n["requeue-checked"]++
	var v placement.Solver
	var plan placement.Plan
	if ok, _, err := v.PlaceWithout(pre, &req, scope, nil, &plan); err == nil && ok {
		where := "the cluster"
		if scope > 0 {
			where = t.DomainPath(scope)
		}
		l.t.Fatalf("step %d: job %v was requeued, but its faulted pods fit in %s before the cycle: %+v",
			step, id, where, plan.Pods)
	}
}

// faulted reports whether pod p is on a failed host or uses a failed GPU.
func faulted(s *topology.State, p topology.Pod) bool {
	return s.HostHealth(p.Host) == topology.Failed || s.HostFailedMask(p.Host)&p.GPUs != 0
}

// sliced reports whether a pod set of the job has slices.
func sliced(info topology.Job) bool {
	for _, set := range info.Sets {
		if set.SliceSize > 1 {
			return true
		}
	}
	return false
}
