package blink_test

import (
	"fmt"
	"math/bits"
	"slices"

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
// held free: a fit there is a fit for the engine too. Nor may they fit with
// every preemptible job of lower priority in that domain gone (running or
// binding before the cycle; on the job's host for a job required on one),
// where the engine's third step would have found room: checked when the job
// required a domain and the candidates are no more than the engine takes.
// A repair that evicted jobs must not have fitted in free GPUs either, and
// one not from a spare must have had no spare that could take its one
// faulted pod (a spare of the domain, of a model the job accepts, whose
// filler is of lower priority: spares come first).
// Jobs with slices are left out (their groups constrain more than the
// domain).

// preCycle is what checkRequeue needs of the engine before a cycle.
type preCycle struct {
	s      *topology.State
	status map[topology.JobID]blink.Status // jobs in the State, by slot
	spare  []bool                          // by host
}

func snapPre(e *blink.Engine) preCycle {
	p := preCycle{s: e.State().Clone(), status: map[topology.JobID]blink.Status{}}
	for _, id := range e.AppendJobs(nil) {
		if st, err := e.Status(id); err == nil && p.s.HasJob(id.Slot()) {
			p.status[id.Slot()] = st
		}
	}
	for h := range topology.HostID(p.s.Tree().NumHosts()) {
		p.spare = append(p.spare, e.IsSpare(h))
	}
	return p
}

// checkRequeue fails if the one repair of d was requeued though its faulted
// pods fit in free GPUs of their domain before the cycle, or with the
// lower-priority preemptible jobs there gone; if it evicted jobs though they
// fit in free GPUs; or if it was not from a spare though a spare could take
// its one faulted pod.
func (l *loop) checkRequeue(step int, d blink.Decisions, p preCycle) {
	if len(d.Repairs) != 1 || len(d.Expired) > 0 || d.Repairs[0].Source == blink.FromSpare {
		return
	}
	r := d.Repairs[0]
	req, scope, ok := l.faultedRequest(r.Job, p.s)
	if !ok {
		return
	}
	l.n["repair-checked"]++
	t := p.s.Tree()
	info, _ := p.s.JobInfo(r.Job.Slot())
	if h := p.spareFor(r.Job.Slot(), info, req.Models, scope); h >= 0 && info.Required < t.HostLevel() {
		l.t.Fatalf("step %d: job %v was repaired %v (requeued %v), but spare host %s could take its faulted pod",
			step, r.Job, r.Source, r.Requeued, t.HostName(h))
	}
	if !r.Requeued && r.Source != blink.FromPreemption {
		return
	}
	where := "the cluster"
	if scope > 0 {
		where = t.DomainPath(scope)
	}
	var v placement.Solver
	var plan placement.Plan
	if ok, _, err := v.PlaceWithout(p.s, &req, scope, nil, &plan); err == nil && ok {
		what := "was requeued"
		if !r.Requeued {
			what = fmt.Sprintf("evicted %v", r.Victims)
		}
		l.t.Fatalf("step %d: job %v %s, but its faulted pods fit in free GPUs of %s before the cycle: %+v",
			step, r.Job, what, where, plan.Pods)
	}
	cands := p.candidates(r.Job.Slot(), info.Priority, scope, req.Eligible)
	if !r.Requeued || scope == 0 || len(cands) == 0 || len(cands) > l.h.e.Config().MaxRepairCandidates {
		return
	}
	l.n["repair-checked-preempt"]++
	if ok, _, err := v.PlaceWithout(p.s, &req, scope, cands, &plan); err == nil && ok {
		l.t.Fatalf("step %d: job %v was requeued, but its faulted pods fit in %s with jobs %v gone: %+v",
			step, r.Job, where, cands, plan.Pods)
	}
}

// faultedRequest is the request for job id's faulted pods on pre (one set a
// pod) and the domain they must stay in, found from where its pods are (a
// job required on one host: its host's parent, the request eligible on the
// host alone); false for a job with slices, none faulted, or not in pre.
func (l *loop) faultedRequest(id blink.JobID, pre *topology.State) (placement.Request, topology.DomainID, bool) {
	slot := id.Slot()
	info, ok := pre.JobInfo(slot)
	spec, err := l.h.e.Spec(id)
	if !ok || err != nil || sliced(info) {
		return placement.Request{}, 0, false
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
	if len(req.Sets) == 0 {
		return placement.Request{}, 0, false
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
	return req, scope, true
}

// candidates lists, ascending, the preemptible jobs of priority below prio,
// running or binding, other than slot, with pods in scope (on the hosts of
// elig when given).
func (p preCycle) candidates(slot topology.JobID, prio int32, scope topology.DomainID, elig []uint64) []topology.JobID {
	var out []topology.JobID
	lo, hi := p.s.Tree().Hosts(scope)
	for h := lo; h < hi; h++ {
		if elig != nil && elig[h/64]&(1<<(uint(h)%64)) == 0 {
			continue
		}
		for _, id := range p.s.AppendHostJobs(nil, h) {
			info, _ := p.s.JobInfo(id)
			st := p.status[id]
			if id != slot && info.Preemptible && info.Priority < prio && (st == blink.Running || st == blink.Binding) {
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
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

// spareFor returns a spare host of scope that could take job slot's one
// faulted pod once its filler (preemptible, of lower priority) is evicted,
// or -1 (also for jobs with more than one faulted pod).
func (p preCycle) spareFor(slot topology.JobID, info topology.Job, models []int, scope topology.DomainID) topology.HostID {
	s, t := p.s, p.s.Tree()
	pods := s.AppendJobPods(nil, slot)
	var pod *topology.Pod
	for i := range pods {
		if faulted(s, pods[i]) {
			if pod != nil {
				return -1
			}
			pod = &pods[i]
		}
	}
	lo, hi := t.Hosts(scope)
	for h := lo; h < hi; h++ {
		if pod == nil || !p.spare[h] || s.HostHealth(h) != topology.Healthy ||
			len(models) > 0 && !slices.Contains(models, t.HostModel(h)) {
			continue
		}
		free := uint64(1)<<t.HostGPUCount(h) - 1
		free &^= s.HostFailedMask(h) | s.HostNominatedMask(h)
		cpu, mem, ok := int64(t.HostCPU(h)), int64(t.HostMemory(h)), true
		for _, hp := range s.AppendHostPods(nil, h) {
			other, _ := s.JobInfo(hp.Job)
			switch {
			case hp.Job == slot:
				free &^= hp.GPUs
				cpu, mem = cpu-int64(hp.CPUMilli), mem-int64(hp.MemoryMiB)
			case !other.Preemptible || other.Priority >= info.Priority:
				ok = false
			}
		}
		if ok && bits.OnesCount64(free) >= pod.NumGPUs() && cpu >= int64(pod.CPUMilli) && mem >= int64(pod.MemoryMiB) {
			return h
		}
	}
	return -1
}
