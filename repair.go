package blink

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Repair. A fault (HostFailed, GPUFailed) under a running job queues it; the
// next Cycle finds replacements for its faulted pods — those on a failed host
// or using a failed GPU; pods on draining hosts stay — inside the domain the
// job required (the root if it required none), trying in turn:
//
//  1. spare hosts of that domain, evicting their filler (preemptible jobs of
//     lower priority; a spare holding other work is passed over): the spare
//     bitset is scanned over the domain's host interval, so finding the
//     spare costs O(hosts of the domain / 64) and the move O(pods of the
//     job);
//  2. free GPUs of that domain (placement.PlaceWithout scoped to it);
//  3. GPUs of preemptible lower-priority jobs in that domain (at most
//     Config.MaxRepairCandidates of them, lowest priority first; not for
//     jobs without a required domain, which the queue can place anywhere):
//     victims are the candidates whose GPUs the replacements take;
//  4. none: the job leaves the State and is pending again (Requeued).
//
// A job required on one host (Required at the host level) is repaired on
// that host alone: no spare (another host), free GPUs or lower-priority work
// there, else it is rescheduled.
//
// Several faulted pods of one job are replaced together. A repair is applied
// at once as one Delta — the victims' RemoveJob, then the job's ReplacePods
// of the faulted ranks (the other pods are not touched) — so the victims are released
// from the State immediately (their GPUs go to the repaired job; the
// embedder evicts them before starting the replacements) and the job is
// Repairing until Bound.

// repairAll repairs the jobs faults hit since the last cycle, in report
// order.
func (e *Engine) repairAll() {
	for _, ref := range e.faulted {
		j := &e.jobs[ref.slot]
		if j.gen != ref.gen || !j.faulted {
			continue
		}
		j.faulted = false
		if j.state.inState() && j.state != stEvicting {
			e.repair(ref.slot)
		}
	}
	e.faulted = e.faulted[:0]
}

// repairScratch holds one repair's working lists.
type repairScratch struct {
	pods    []topology.Pod // the job's pods, in the decision arena (see loadJob)
	ranks   []int32        // faulted ranks
	repl    []topology.Pod // the replacements of the faulted ranks, in rank order
	victims []topology.JobID
	vpods   []topology.Pod
	uses    []spareUse
	cands   []topology.JobID
	hpods   []topology.HostPod
	ids     []JobID
	// Sliced jobs (repair_slices.go): the job's record, whether a slice
	// binds a faulted pod, each faulted rank's group and the groups, the
	// hosts earlier groups took, and the eligible sets placement is given.
	info   topology.Job
	sliced bool
	grp    []int32
	groups []replGroup
	taken  []topology.HostID
	open   []uint64 // every host but those taken
	one    []uint64 // one host
	// host is the host of a job required on one host (-1 for others): its
	// replacements stay there.
	host topology.HostID
}

type spareUse struct {
	h        topology.HostID
	avail    uint64
	cpu, mem int32
}

func (e *Engine) repair(slot int32) {
	rs := &e.rs
	mark := len(e.podBuf)
	e.loadJob(slot)
	if len(rs.ranks) == 0 {
		e.podBuf = e.podBuf[:mark]
		return // recovered since
	}
	if !e.repairFaulted(slot) {
		e.podBuf = e.podBuf[:mark] // rs.pods are not a decision's
	}
}

// loadJob reads job slot's pods into rs.pods and its faulted ranks into
// rs.ranks. The pods go to the decision arena, where a repair's decision
// takes them with the replacements written in: one copy of the job's pods.
func (e *Engine) loadJob(slot int32) {
	rs := &e.rs
	n := len(e.podBuf)
	e.podBuf = e.s.AppendJobPods(e.podBuf, topology.JobID(slot))
	rs.pods = e.podBuf[n:len(e.podBuf):len(e.podBuf)]
	rs.ranks = rs.ranks[:0]
	for i := e.suspect(rs.pods, 0); i < len(rs.pods); i = e.suspect(rs.pods, i+1) {
		p := &rs.pods[i]
		if e.s.HostHealth(p.Host) == topology.Failed || p.GPUs&e.s.HostFailedMask(p.Host) != 0 {
			rs.ranks = append(rs.ranks, int32(i))
		}
	}
}

// suspect returns the index of the first pod from i on whose host is not
// healthy with every GPU healthy (len(pods) if none): the pods that may be
// faulted. O(1) per pod.
func (e *Engine) suspect(pods []topology.Pod, i int) int {
	s, t := e.s, e.t
	if k := t.UniformHostGPUs(); k > 0 { // no host's count to read
		for ; i < len(pods) && s.HostHealthyGPUs(pods[i].Host) == k; i++ {
		}
		return i
	}
	for ; i < len(pods); i++ {
		if h := pods[i].Host; s.HostHealthyGPUs(h) != t.HostGPUCount(h) {
			break
		}
	}
	return i
}

// repairFaulted repairs the faulted ranks of job slot (rs.ranks, non-empty)
// or requeues it; it reports whether it repaired them (a decision took
// rs.pods).
func (e *Engine) repairFaulted(slot int32) bool {
	rs := &e.rs
	j := &e.jobs[slot]
	scope := e.requiredDomain(rs.pods[0].Host, j.spec.Required) // all its pods are in it
	rs.sliced = false
	if j.sliced {
		rs.info, _ = e.s.JobInfo(topology.JobID(slot))
		rs.sliced = e.slicedFaults(&rs.info)
	}
	rs.host = -1
	if j.spec.Required >= e.t.HostLevel() {
		rs.host = rs.pods[0].Host // a spare is another host
	}
	if rs.host < 0 && e.sp.on() && e.fromSpares(slot, scope) {
		e.repaired(slot, FromSpare)
		return true
	}
	if e.fromPlacement(slot, scope, nil) {
		e.repaired(slot, FromFree)
		return true
	}
	if scope > 0 && e.repairCandidates(slot, scope) && e.fromPlacement(slot, scope, rs.cands) {
		e.repaired(slot, FromPreemption)
		return true
	}
	if err := e.removeFromState(slot); err != nil {
		e.failed("requeue a faulted job", err)
		return false
	}
	e.requeue(slot)
	e.dec.Repairs = append(e.dec.Repairs, Repair{Job: e.id(slot), Requeued: true, Source: Rescheduled})
	return false
}

// fromSpares places the faulted pods on spare hosts of scope, first fit in
// host order, and applies the repair; it reports whether it did.
func (e *Engine) fromSpares(slot int32, scope topology.DomainID) bool {
	rs := &e.rs
	slo, shi := e.t.Hosts(scope)
	rs.uses = rs.uses[:0]
	rs.repl = rs.repl[:0]
	next := slo // spares before next are in rs.uses or unusable (one range: no slices)
	for i, r := range rs.ranks {
		p := &rs.pods[r]
		lo, hi := slo, shi
		if rs.sliced {
			lo, hi = e.replRange(&rs.info, i, slo, shi)
			next = lo
		}
		placed := false
		for k := range rs.uses {
			if u := &rs.uses[k]; u.h >= lo && u.h < hi {
				if q, ok := u.take(p); ok {
					rs.repl, placed = append(rs.repl, q), true
					break
				}
			}
		}
		for !placed {
			h := e.nextSpare(next, hi)
			if h < 0 {
				return false
			}
			next = h + 1
			if rs.sliced && slices.ContainsFunc(rs.uses, func(u spareUse) bool { return u.h == h }) {
				continue // tried above
			}
			u, ok := e.spareUse(slot, h)
			if !ok {
				continue
			}
			rs.uses = append(rs.uses, u)
			if q, ok := rs.uses[len(rs.uses)-1].take(p); ok {
				rs.repl, placed = append(rs.repl, q), true
			}
		}
	}
	rs.victims = rs.victims[:0]
	for i := range rs.uses {
		if u := &rs.uses[i]; u.used(rs.repl) {
			e.ids = e.s.AppendHostJobs(e.ids[:0], u.h)
			for _, id := range e.ids {
				if int32(id) != slot {
					rs.victims = append(rs.victims, id)
				}
			}
		}
	}
	slices.Sort(rs.victims)
	rs.victims = slices.Compact(rs.victims)
	return e.applyRepair(slot)
}

// nextSpare returns the first spare host in [from, hi), or -1.
func (e *Engine) nextSpare(from, hi topology.HostID) topology.HostID {
	w := e.sp.isSpare
	for i := int(from); i < int(hi); {
		word := w[i>>6] >> (uint(i) & 63)
		if word == 0 {
			i = (i | 63) + 1
			continue
		}
		h := i + bits.TrailingZeros64(word)
		if h >= int(hi) {
			return -1
		}
		return topology.HostID(h)
	}
	return -1
}

// spareUse returns what spare host h offers the repair of job slot once its
// other jobs (filler) are evicted; false for a host of a model the job does
// not accept, or one holding non-preemptible work or work of a priority not
// below the job's (a repair evicts only what preemption could).
func (e *Engine) spareUse(slot int32, h topology.HostID) (spareUse, bool) {
	s, n := e.s, e.t.HostGPUCount(h)
	if models := e.jobs[slot].spec.Models; len(models) > 0 && !slices.Contains(models, e.t.HostModel(h)) {
		return spareUse{}, false
	}
	u := spareUse{h: h, avail: hostMask(n), cpu: e.t.HostCPU(h), mem: e.t.HostMemory(h)}
	if n == 0 || s.HostHealthyGPUs(h) != n { // else healthy, no GPU failed
		if s.HostHealth(h) != topology.Healthy {
			return spareUse{}, false
		}
		u.avail &^= s.HostFailedMask(h)
	}
	u.avail &^= s.HostNominatedMask(h)
	e.rs.hpods = s.AppendHostPods(e.rs.hpods[:0], h)
	pre := s.PreemptibleJobWords() // the pods' jobs are live: a bit is their Preemptible
	prio := e.jobs[slot].spec.Priority
	for i := range e.rs.hpods {
		hp := &e.rs.hpods[i]
		if int32(hp.Job) == slot { // the job's own pods stay (unless faulted, but the host is healthy)
			u.avail &^= hp.GPUs
			u.cpu -= hp.CPUMilli
			u.mem -= hp.MemoryMiB
			continue
		}
		if j := int(hp.Job); j>>6 >= len(pre) || pre[j>>6]&(1<<(uint(j)&63)) == 0 || e.jobs[j].spec.Priority >= prio {
			return spareUse{}, false // filler the repair may not evict
		}
	}
	return u, true
}

// take places pod p's shape on the spare, if it fits.
func (u *spareUse) take(p *topology.Pod) (topology.Pod, bool) {
	k := p.NumGPUs()
	if bits.OnesCount64(u.avail) < k || u.cpu < p.CPUMilli || u.mem < p.MemoryMiB {
		return topology.Pod{}, false
	}
	m := lowBits(u.avail, k)
	u.avail &^= m
	u.cpu -= p.CPUMilli
	u.mem -= p.MemoryMiB
	q := *p
	q.Host, q.GPUs = u.h, m
	return q, true
}

// used reports whether any replacement pod landed on the spare.
func (u *spareUse) used(repl []topology.Pod) bool {
	for i := range repl {
		if repl[i].Host == u.h {
			return true
		}
	}
	return false
}

// fromPlacement places the faulted pods inside scope as if the jobs gone
// (sorted) were not there, and applies the repair with the gone jobs the
// replacements touch as victims; it reports whether it did.
func (e *Engine) fromPlacement(slot int32, scope topology.DomainID, gone []topology.JobID) bool {
	rs := &e.rs
	if rs.sliced {
		if !e.placeGroups(slot, scope, gone) {
			return false
		}
		return e.applyPlaced(slot, gone)
	}
	rs.info, _ = e.s.JobInfo(topology.JobID(slot))
	sets := e.sets[:0]
	var last topology.Pod
	for i, r := range rs.ranks {
		p := rs.pods[r]
		if i > 0 && p.NumGPUs() == last.NumGPUs() && p.Milli == last.Milli && p.CPUMilli == last.CPUMilli && p.MemoryMiB == last.MemoryMiB {
			sets[len(sets)-1].Pods++
			continue
		}
		sets = append(sets, placement.PodSet{Pods: 1, GPUs: int32(p.NumGPUs()), Milli: p.Milli, CPUMilli: p.CPUMilli, MemoryMiB: p.MemoryMiB})
		last = p
	}
	e.sets = sets
	req := e.repairRequest(slot)
	if rs.host >= 0 {
		req.Eligible = e.oneHost(rs.host)
	}
	ok, _, err := e.v.PlaceWithout(e.s, &req, scope, gone, &e.plan)
	if rs.host >= 0 {
		rs.one[rs.host>>6] = 0
	}
	if err != nil {
		e.failed("repair placement", err) // the request and the jobs gone are the engine's: a bug
		return false
	}
	if !ok {
		return false
	}
	rs.repl = append(rs.repl[:0], e.plan.Pods[:len(rs.ranks)]...) // in the order of rs.ranks
	return e.applyPlaced(slot, gone)
}

// applyPlaced applies the repair of job slot to the replacements rs.repl,
// with the jobs gone whose GPUs they take as victims (or, failing that,
// every gone job on their hosts); it reports whether it applied.
func (e *Engine) applyPlaced(slot int32, gone []topology.JobID) bool {
	rs := &e.rs
	rs.victims = rs.victims[:0]
	if len(gone) == 0 {
		return e.applyRepair(slot)
	}
	for _, p := range rs.repl {
		rs.hpods = e.s.AppendHostPods(rs.hpods[:0], p.Host)
		for _, hp := range rs.hpods {
			if _, isGone := slices.BinarySearch(gone, hp.Job); isGone && hp.GPUs&p.GPUs != 0 {
				rs.victims = append(rs.victims, hp.Job)
			}
		}
	}
	slices.Sort(rs.victims)
	rs.victims = slices.Compact(rs.victims)
	if e.applyRepair(slot) {
		return true
	}
	// CPU, memory or exclusivity may need the other gone jobs on those hosts.
	rs.victims = rs.victims[:0]
	for _, p := range rs.repl {
		e.ids = e.s.AppendHostJobs(e.ids[:0], p.Host)
		for _, id := range e.ids {
			if _, isGone := slices.BinarySearch(gone, id); isGone {
				rs.victims = append(rs.victims, id)
			}
		}
	}
	slices.Sort(rs.victims)
	rs.victims = slices.Compact(rs.victims)
	return e.applyRepair(slot)
}

// repairCandidates lists in rs.cands the preemptible running jobs of lower
// priority than job slot with pods in scope (on its host, for a job required
// on one host), ascending; it reports whether there are any.
func (e *Engine) repairCandidates(slot int32, scope topology.DomainID) bool {
	rs := &e.rs
	prio := e.jobs[slot].spec.Priority
	if lo, hi := e.s.PreemptibleBelow(scope, prio); hi == 0 && lo == 0 {
		return false
	}
	ep := e.nextMark()
	rs.cands = rs.cands[:0]
	lo, hi := e.t.Hosts(scope)
	if rs.host >= 0 {
		lo, hi = rs.host, rs.host+1
	}
	for h := lo; h < hi; h++ {
		e.ids = e.s.AppendHostJobs(e.ids[:0], h)
		for _, id := range e.ids {
			if e.mark[id] == ep {
				continue
			}
			e.mark[id] = ep
			oj := &e.jobs[id]
			if int32(id) != slot && oj.spec.Preemptible && oj.spec.Priority < prio && (oj.state == stRunning || oj.state == stAssumed) {
				rs.cands = append(rs.cands, id)
			}
		}
	}
	if max := e.cfg.MaxRepairCandidates; len(rs.cands) > max {
		slices.SortFunc(rs.cands, func(a, b topology.JobID) int {
			if pa, pb := e.jobs[a].spec.Priority, e.jobs[b].spec.Priority; pa != pb {
				return int(pa) - int(pb)
			}
			return int(a - b)
		})
		rs.cands = rs.cands[:max]
	}
	slices.Sort(rs.cands) // PlaceWithout and applyPlaced take the gone jobs sorted
	return len(rs.cands) > 0
}

// applyRepair applies the removal of rs.victims and the move of job slot's
// faulted ranks to rs.repl as one Delta; it reports whether the Delta
// applied.
func (e *Engine) applyRepair(slot int32) bool {
	rs := &e.rs
	ops := e.ops[:0]
	rs.vpods = rs.vpods[:0]
	for _, v := range rs.victims {
		ops = append(ops, topology.RemoveJob(v))
		rs.vpods = e.s.AppendJobPods(rs.vpods, v)
	}
	// only the faulted ranks move: O(levels) per replaced pod
	ops = append(ops, topology.ReplacePods(topology.JobID(slot), rs.ranks, rs.repl...))
	e.ops = ops
	if err := e.s.Apply(topology.Delta{Ops: ops}); err != nil {
		return false
	}
	e.sp.touchPods(e, rs.vpods)
	return true
}

// repaired records the state changes and the decision of a repair applied.
func (e *Engine) repaired(slot int32, src RepairSource) {
	rs := &e.rs
	rs.ids = rs.ids[:0]
	for _, v := range rs.victims {
		e.releaseVictim(int32(v))
		rs.ids = append(rs.ids, e.id(int32(v)))
	}
	j := &e.jobs[slot]
	if j.state == stMoving {
		e.leaveState(slot)
		j.oldPods = j.oldPods[:0]
	}
	e.setState(slot, stRepairing)
	e.setDeadline(slot, tBind, e.cfg.BindTimeout)
	if !j.spec.Preemptible {
		e.sp.taken(e, rs.repl) // the other pods stay where they were
	}
	for i, r := range rs.ranks { // rs.pods are in the decision arena (loadJob)
		rs.pods[r] = rs.repl[i]
	}
	e.dec.Repairs = append(e.dec.Repairs, Repair{Job: e.id(slot), Pods: rs.pods,
		Ranks: e.keepI32(rs.ranks), Victims: e.keepIDs(rs.ids), Source: src})
}

// releaseVictim records that job slot left the State as a repair's victim:
// it is evicting, already released.
func (e *Engine) releaseVictim(slot int32) {
	j := &e.jobs[slot]
	j.faulted = false
	if j.state == stEvicting {
		e.setState(slot, stReleased) // its preemptor still waits for Evicted
		return
	}
	e.leaveState(slot)
	j.oldPods = j.oldPods[:0]
	e.setState(slot, stReleased)
	j.forJob = -1
	e.setDeadline(slot, tEvict, e.cfg.EvictTimeout)
}
