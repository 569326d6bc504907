package preempt

import (
	"math/bits"

	"github.com/blinksched/blink/topology"
)

// No-fit reasons. The search notes, among the scopes it modelled, the one
// whose capacity with every candidate gone came closest to the request
// (noteNear); if aggregates ruled every scope out, the leaf domain with the
// most GPUs free or held by candidates is taken instead. In that scope every
// job becomes a candidate (modeAll): with all victims by the rules gone, the
// others are added lowest priority first until the request fits, then
// dropped again where not needed, leaving the jobs that block it; the one of
// highest priority is named. If no set of jobs makes it fit, GPUs nominated
// against the request, or the scope's healthy capacity, are to blame.

// noteNear remembers scope (dom, host) if, with every candidate gone (V =
// the first end candidates: all of them when the threshold search ran out),
// it came closer to fitting than the scopes before.
func (p *Planner) noteNear(m *model, dom topology.DomainID, host topology.HostID, end int) {
	if end < len(m.cands) {
		return // stopped early by the best answer's priority: not a no-fit scope
	}
	score := m.total[p.primary]
	if score > p.nearScore {
		p.nearScore = score
		p.near = Reason{Domain: dom, Host: host}
	}
}

// noFit builds the reason no victim set makes the request fit.
func (p *Planner) noFit() Reason {
	why, lo, hi := p.noFitScope()
	if why.Have < why.Need {
		return why // too small whatever goes
	}
	dom, host := why.Domain, why.Host
	if hi-lo > blockerHosts {
		// Too large a scope to try job by job: what the rules allow, in GPUs.
		_, pre := p.s.PreemptibleBelow(dom, p.r.Priority)
		why.Code, why.Have = Insufficient, p.freeIn(dom)+p.extraIn(dom)+int64(pre)
		return why
	}
	if p.blocker(&why, dom, host, lo, hi) {
		return why
	}
	// No set of jobs: nominations against the request, or the hosts' shape.
	have, nominated, nominee, nomPrio := p.nominatedIn(lo, hi)
	if need := why.Need; nominee >= 0 && have < need && have+nominated >= need {
		why.Code, why.Job, why.Priority = Nominated, nominee, nomPrio
	}
	return why
}

// noFitScope picks the no-fit scope (the nearest noted, else nearest's) and
// returns the NoCapacity reason for it, with the scope's healthy GPUs as
// Have, and the scope's hosts [lo, hi).
func (p *Planner) noFitScope() (why Reason, lo, hi topology.HostID) {
	dom, host := p.near.Domain, p.near.Host
	if p.nearScore < 0 {
		dom, host = p.nearest()
	}
	why = Reason{Code: NoCapacity, Domain: dom, Host: host, Request: p.r.Priority, Need: p.needMilli / 1000}
	lo, hi = p.t.Hosts(dom)
	why.Have = int64(p.s.HealthyGPUs(dom))
	if host >= 0 {
		lo, hi = host, host+1
		why.Have = 0
		if p.s.HostHealth(host) == topology.Healthy {
			why.Have = int64(p.t.HostGPUCount(host) - bits.OnesCount64(p.s.HostFailedMask(host)))
		}
	}
	return why, lo, hi
}

// blocker models hosts [lo, hi) of scope (dom, host) with every job a
// candidate, takes out all victims by the rules, then the others lowest
// priority first until the request fits. If it does, it writes to why the
// blocking job of highest priority and how many block, and returns true.
func (p *Planner) blocker(why *Reason, dom topology.DomainID, host, lo, hi topology.HostID) bool {
	m := &p.m2
	m.build(p, lo, hi, modeAll)
	for c := range m.cands {
		if m.cands[c].allowed {
			m.set(c, true)
		}
	}
	for c := range m.cands {
		if m.cands[c].allowed {
			continue
		}
		m.set(c, true)
		if !(m.fits() && p.feasible(m, dom, host)) {
			continue
		}
		count, top := p.neededBlockers(m, dom, host, c)
		j := &m.cands[top]
		why.Code, why.Job, why.Priority, why.Preemptible, why.Count = Blocked, j.id, j.prio, j.pre, count
		return true
	}
	return false
}

// neededBlockers drops from V the blockers up to c (c included) that the
// request does not need to fit, latest (highest priority) first, and
// returns how many stay and the latest of them.
func (p *Planner) neededBlockers(m *model, dom topology.DomainID, host topology.HostID, c int) (count, top int) {
	count, top = 0, -1
	for b := c; b >= 0; b-- {
		if m.cands[b].allowed || !m.in[b] {
			continue
		}
		m.set(b, false)
		if m.fits() && p.feasible(m, dom, host) {
			continue
		}
		m.set(b, true)
		count++
		if top < 0 {
			top = b
		}
	}
	return count, top
}

// nominatedIn sums, over the healthy hosts of an allowed model in [lo,
// hi), the GPUs neither failed nor nominated against the request (have)
// and those nominated against it (nominated), and names the nominee of
// lowest priority (then lowest id) among them, or -1.
func (p *Planner) nominatedIn(lo, hi topology.HostID) (have, nominated int64, nominee topology.JobID, nomPrio int32) {
	nominee = -1
	for h := lo; h < hi; h++ {
		if p.s.HostHealth(h) != topology.Healthy || !p.modelOK[p.t.HostModel(h)] {
			continue
		}
		glo, _ := p.t.HostGPUs(h)
		failed := p.s.HostFailedMask(h)
		against := p.s.NominatedAgainst(h, &p.extras) &^ failed
		have += int64(p.t.HostGPUCount(h) - bits.OnesCount64(failed|against))
		nominated += int64(bits.OnesCount64(against))
		for a := against; a != 0; a &= a - 1 {
			g := glo + topology.GPUID(bits.TrailingZeros64(a))
			if j, ok := p.s.GPUNominee(g); ok {
				n, _ := p.s.NominationOf(j)
				if nominee < 0 || n.Priority < nomPrio || n.Priority == nomPrio && j < nominee {
					nominee, nomPrio = j, n.Priority
				}
			}
		}
	}
	return have, nominated, nominee, nomPrio
}

// blockerHosts bounds the scopes whose blocking jobs are looked for one by
// one; a larger scope's reason comes from aggregates.
const blockerHosts = 4096

// nearest picks a scope when no scope was modelled: the leaf domain with the
// most GPUs free or held by candidates (ties: most healthy GPUs, then
// lowest index), and for one-host requests its host with the most.
func (p *Planner) nearest() (topology.DomainID, topology.HostID) {
	t, s := p.t, p.s
	lo, hi := t.LevelDomains(p.leafLevel)
	best, bestScore, bestCap := lo, int64(-1), -1
	for d := lo; d < hi; d++ {
		_, pre := s.PreemptibleBelow(d, p.r.Priority)
		score := p.freeIn(d) + p.extraIn(d) + int64(pre)
		if c := s.HealthyGPUs(d); score > bestScore || score == bestScore && c > bestCap {
			best, bestScore, bestCap = d, score, c
		}
	}
	if p.mode != hostMode {
		return best, -1
	}
	hlo, hhi := t.Hosts(best)
	host, hostScore := hlo, int64(-1)
	m := &p.m2
	for h := hlo; h < hhi; h++ {
		m.build(p, h, h+1, modeCands)
		for c := range m.cands {
			m.set(c, true)
		}
		if sc := m.total[p.primary]; sc > hostScore {
			host, hostScore = h, sc
		}
	}
	return best, host
}
