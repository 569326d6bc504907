package blink

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// Reservations. The top blocked job (in queue order) gets a nomination of
// the GPUs it will use, with the time they are expected to be free: the
// domain is the one of its required level (without one, of the deepest
// level whose domains are large enough) with the most free GPUs among those
// whose healthy GPUs could hold it; inside it, hosts are ranked by when
// their GPUs are free — now for free GPUs, else the latest expected end of
// the jobs on the host (topology.Job End; a job without one counts
// Config.DefaultRunTime after it started, or never) — and taken in that
// order until the job's pods are covered. The nomination's ready time is the
// last host's; an unknown (never) ready time becomes now, so no backfill is
// admitted inside. Lower jobs then place around the nominated GPUs, or on
// them when they are expected to end by the ready time: the topology
// package's nomination rule. A reservation is sticky: its holder keeps it,
// and its domain, until it is placed or the reservation expires
// (Config.ReservationTimeout), or a job earlier in the queue needs the slot
// (Config.MaxReservations). The estimate is per pod shape of the job's
// largest set and ignores CPU, memory and slices: a reservation is a
// heuristic, and the job is placed by placement when its GPUs are free.
// Cost: O(domains of a level + hosts of the domain · jobs per host), once
// per reservation; O(domains of a level + hosts of the domain) when no job
// has a known end (endsKnown).

// resCand is a host's contribution to a reservation.
type resCand struct {
	ready int64
	h     topology.HostID
	pods  int32
	mask  uint64
}

// reserve nominates GPUs for job slot; it reports whether it did.
func (e *Engine) reserve(slot int32) bool {
	j := &e.jobs[slot]
	g := int32(0)
	for _, set := range j.minSets() {
		switch {
		case set.Milli > 0:
			g = max(g, 1)
		default:
			g = max(g, set.GPUs)
		}
	}
	if g == 0 {
		return false
	}
	need := (j.resGPUs + int64(g) - 1) / int64(g)
	d := e.reserveDomain(j)
	if d < 0 {
		return false
	}
	cands := e.orderCands(e.hostCands(j, d, g))
	got, take := int64(0), 0
	for take < len(cands) && got < need {
		got += int64(cands[take].pods)
		take++
	}
	if got < need {
		return false
	}
	ready := cands[take-1].ready
	if ready == topology.NoEnd {
		ready = e.now
	}
	hosts := slices.Grow(e.resPods[:0], take) // the hosts taken, as pods for podGPUs
	for _, c := range cands[:take] {
		hosts = append(hosts, topology.Pod{Host: c.h, GPUs: c.mask})
	}
	e.resPods = hosts
	gpus := e.podGPUs(e.gpuList[:0], hosts)
	e.gpuList = gpus
	expiry := later(e.now, e.cfg.ReservationTimeout)
	n := topology.Nomination{Job: topology.JobID(slot), Priority: j.spec.Priority, Ready: ready, Expiry: expiry, GPUs: gpus}
	if err := e.apply(topology.Nominate(n)); err != nil {
		e.failed("reserve", err)
		return false
	}
	e.addNominee(slot, nomReserve, d)
	j.nomReady, j.nomExpiry = ready, expiry
	return true
}

// reserveDomain picks the domain a reservation goes to, or -1.
func (e *Engine) reserveDomain(j *job) topology.DomainID {
	e.fillMaxHealthy()
	l := j.spec.Required
	if l <= 0 || l >= e.t.HostLevel() {
		l = 0
		for lv := e.t.HostLevel() - 1; lv > 0; lv-- {
			if e.maxHealthy[lv] >= j.resGPUs {
				l = lv
				break
			}
		}
	}
	lo, hi := e.t.LevelDomains(l)
	best := topology.DomainID(-1)
	free := e.s.DomainFreeData()
	for d := lo; d < hi; d++ {
		if int64(e.s.HealthyGPUs(d)) >= j.resGPUs && (best < 0 || free[d] > free[best]) {
			best = d
		}
	}
	return best
}

// hostCands lists what each usable host of d offers pods of g GPUs: free
// GPUs now, the rest when its jobs end. In a domain whose hosts are all
// healthy with no failed GPU (its healthy GPUs are all its GPUs) and no
// nominated GPU, every GPU is usable and no host's masks are read for it; a
// host with no free GPU (State.HostFreeCounts) has no free mask to read.
func (e *Engine) hostCands(j *job, d topology.DomainID, g int32) []resCand {
	cands := e.cands[:0]
	lo, hi := e.t.Hosts(d)
	nonPre := !j.spec.Preemptible && e.sp.on()
	ends := e.endsKnown()
	if !ends {
		e.markEvicting(lo, hi)
	}
	glo, ghi := e.t.GPUs(d)
	clean := e.s.HealthyGPUs(d) == int(ghi-glo) && (e.s.NumNominations() == 0 || !e.s.NominatedIn(d))
	freeN := e.s.HostFreeCounts()
	for h := lo; h < hi; h++ {
		if nonPre && e.sp.spare(h) || !e.modelOK(j, h) {
			continue
		}
		usable := hostMask(e.t.HostGPUCount(h))
		if !clean {
			if e.s.HostHealth(h) != topology.Healthy {
				continue
			}
			usable &^= e.s.HostFailedMask(h) | e.s.HostNominatedMask(h)
		}
		u := int32(bits.OnesCount64(usable))
		if u < g {
			continue
		}
		var free uint64
		if freeN[h] != 0 {
			free = e.s.HostFreeMask(h)
		}
		nowPods := int32(bits.OnesCount64(free)) / g
		var taken uint64
		if nowPods > 0 {
			taken = lowBits(free, int(nowPods*g))
			cands = append(cands, resCand{ready: e.now, h: h, pods: nowPods, mask: taken})
		}
		if rest := u/g - nowPods; rest > 0 {
			mask := usable &^ taken
			if rest*g < u-nowPods*g { // else all of them
				mask = lowBits(mask, int(rest*g))
			}
			cands = append(cands, resCand{ready: e.laterReady(h, lo, ends), h: h, pods: rest, mask: mask})
		}
	}
	e.cands = cands
	return cands
}

// orderCands orders cands (hostCands', by host) by ready time, then host:
// a stable sort. Without known ends (endsKnown) a ready time is now, a
// victim's deadline or never: the first and the last keep their order in a
// stable partition, and only the deadlines, a victim's hosts, are sorted.
func (e *Engine) orderCands(cands []resCand) []resCand {
	if e.endsKnown() {
		slices.SortStableFunc(cands, byReady)
		return cands
	}
	out := e.cands2[:0]
	for _, c := range cands {
		if c.ready == e.now {
			out = append(out, c)
		}
	}
	mid := len(out)
	for _, c := range cands {
		if c.ready != e.now && c.ready != topology.NoEnd {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out[mid:], byReady)
	for _, c := range cands {
		if c.ready == topology.NoEnd && c.ready != e.now {
			out = append(out, c)
		}
	}
	e.cands, e.cands2 = out, cands // the next hostCands writes into the other buffer
	return out
}

// byReady orders candidates by ready time, then host.
func byReady(a, b resCand) int {
	if a.ready != b.ready {
		if a.ready < b.ready {
			return -1
		}
		return 1
	}
	return int(a.h - b.h)
}

// endsKnown reports whether some job may have an expected end other than
// an evicted victim's deadline: one with an end in the State, or a default
// run time. Without, hostReady is NoEnd on every host with a job and no
// victim (markEvicting).
func (e *Engine) endsKnown() bool {
	return e.cfg.DefaultRunTime > 0 || e.s.JobsWithEnd() > 0
}

// markEvicting sets e.evHosts bit h-lo for each host h in [lo, hi) that
// holds a pod of a victim being evicted. O(the victims' pods).
func (e *Engine) markEvicting(lo, hi topology.HostID) {
	e.evHosts.ClearAll()
	for _, slot := range e.evicting {
		e.pods = e.s.AppendJobPods(e.pods[:0], topology.JobID(slot))
		for _, p := range e.pods {
			if p.Host >= lo && p.Host < hi {
				e.evHosts.Set(uint(p.Host - lo))
			}
		}
	}
}

// laterReady is hostReady(h) for a healthy host h, of a domain whose hosts
// start at lo, with a usable GPU that is not free; ends is endsKnown(), and
// markEvicting has run. Such a GPU is held by a pod (a failed or nominated
// GPU is not usable): without any known end, and without a victim being
// evicted there, the host has a job that ends never, and its jobs are not
// read.
func (e *Engine) laterReady(h, lo topology.HostID, ends bool) int64 {
	if ends || e.evHosts.Test(uint(h-lo)) {
		return e.hostReady(h)
	}
	return topology.NoEnd
}

// hostReady is when host h's jobs are expected to have ended.
func (e *Engine) hostReady(h topology.HostID) int64 {
	ready := e.now
	e.ids = e.s.AppendHostJobs(e.ids[:0], h)
	for _, id := range e.ids {
		end := topology.NoEnd
		info, _ := e.s.JobInfo(id)
		oj := &e.jobs[id]
		switch {
		case oj.state == stEvicting:
			end = oj.deadline
		case info.HasEnd:
			end = info.End
		case e.cfg.DefaultRunTime > 0:
			end = later(oj.started, e.cfg.DefaultRunTime)
		}
		ready = max(ready, end)
	}
	return ready
}

func (e *Engine) modelOK(j *job, h topology.HostID) bool {
	if len(j.spec.Models) == 0 {
		return true
	}
	return slices.Contains(j.spec.Models, e.t.HostModel(h))
}

// reservationReady reports whether job slot's reserved GPUs (unused and
// healthy now) plus the free GPUs of its domain could hold it: only then is
// it worth a placement call.
func (e *Engine) reservationReady(slot int32) bool {
	j := &e.jobs[slot]
	n, ok := e.s.NominationOf(topology.JobID(slot))
	if !ok {
		return true
	}
	avail := int64(0)
	var hlo, hhi topology.GPUID
	var usable uint64
	for _, g := range n.GPUs {
		if g >= hhi {
			h := e.t.GPUHost(g)
			hlo, hhi = e.t.HostGPUs(h)
			usable = 0
			if e.s.HostHealth(h) == topology.Healthy {
				usable = e.s.HostUnusedMask(h) &^ e.s.HostFailedMask(h)
			}
		}
		avail += int64(usable >> uint(g-hlo) & 1)
	}
	return avail+int64(e.s.Free(j.nomDomain)) >= j.need
}

func hostMask(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(n) - 1
}

// lowBits returns the k lowest set bits of m.
func lowBits(m uint64, k int) uint64 {
	var out uint64
	for ; k > 0 && m != 0; k-- {
		out |= m & -m
		m &= m - 1
	}
	return out
}
