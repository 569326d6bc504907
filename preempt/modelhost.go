package preempt

import (
	"math/bits"

	"github.com/blinksched/blink/topology"
)

// Adding one host to a model (build). A host takes nothing whatever goes
// (hostBase), or it holds candidate pods and is modelled (a hostRec with its
// pods), or its capacity is constant and joins the model's rest.
//
// Folding dead hosts. A host whose capacity is the same with every
// candidate gone as with none (a pod of a job that stays blocks it, say) is
// constant whatever V is: where the model is exact (one pod set of whole
// GPUs or none), it joins the rest with that capacity and its candidate pods
// are not modelled. A candidate only ever seen on such hosts is no
// candidate of the model at all: it changes no host's capacity, so no
// irreducible set holds it and no optimum does (dropping it fits as well,
// for fewer victims). On a full cluster most hosts holding candidates are
// dead for the candidates of the threshold's priority, so the searches
// that follow (forced, greedy, verification) see a fraction of them.
//
// A candidate's GPUs (cand.gpus) then count its pods on live hosts only:
// the GPU bound of the greedy stays valid, since a dead host takes at most
// its constant capacity, which its GPUs free with V empty (counted in the
// rest) already cover.

// addHost adds host h to the model under construction, classifying its jobs
// by mode; fold enables folding dead hosts into the rest.
func (m *model) addHost(h topology.HostID, mode int, fold bool) {
	p := m.p
	s := p.s
	rec, ok := p.hostBase(h)
	if !ok {
		return // takes nothing, whatever goes
	}
	if s.HostHasPods(h) {
		hp := s.AppendHostPods(p.hpBuf[:0], h)
		p.hpBuf = hp
		var cmask uint64
		var ccpu, cmem int64
		ncand := 0
		for i := range hp {
			q := &hp[i]
			if !p.isCand(q.Job, mode) {
				rec.others = true
				rec.fixed |= q.GPUs
				continue
			}
			cmask |= q.GPUs
			ccpu += int64(q.CPUMilli)
			cmem += int64(q.MemoryMiB)
			ncand++
		}
		j, held := s.HostExclusive(h)
		if held && !p.isCand(j, mode) {
			return // held by a job that stays
		}
		if ncand > 0 {
			if fold && m.dead(&rec, cmask, ccpu, cmem, held) {
				if !p.r.Exclusive { // an exclusive request takes nothing beside pods that stay
					m.addRest(&rec, rec.fixed|cmask, held)
				}
				return
			}
			m.addPods(&rec, hp, mode)
			if held {
				rec.owner = m.candOf(j, mode)
			}
			if rec.owner < 0 {
				used := rec.fixed | cmask
				m.gpus0 += int64(bits.OnesCount64(rec.share &^ used))
			}
			m.hosts = append(m.hosts, rec)
			return
		}
	}
	if p.r.Exclusive && rec.others {
		return
	}
	m.addRest(&rec, rec.fixed, false)
}

// addPods appends the candidate pods of hp (the pods of rec's host) to the
// model, creating their candidates on first sight.
func (m *model) addPods(rec *hostRec, hp []topology.HostPod, mode int) {
	p := m.p
	rec.lo = int32(len(m.pods))
	for i := range hp {
		q := &hp[i]
		if !p.isCand(q.Job, mode) {
			continue
		}
		ci := m.candOf(q.Job, mode)
		m.pods = append(m.pods, podEnt{cand: ci, gpus: q.GPUs, milli: q.Milli,
			cpu: q.CPUMilli, mem: q.MemoryMiB})
		cd := &m.cands[ci]
		cd.gpus += int64(q.NumGPUs())
	}
	rec.hi = int32(len(m.pods))
}

// addRest adds a host of constant capacity to the rest: its GPUs in use are
// used, and owned says a candidate holds it exclusively (it takes nothing
// with V empty). Only for hosts without modelled pods.
func (m *model) addRest(rec *hostRec, used uint64, owned bool) {
	if owned {
		return // with V empty the owner stays: nothing free, no capacity
	}
	p := m.p
	m.restGPUs += int64(bits.OnesCount64(rec.share &^ used))
	for si := range m.rest {
		m.rest[si] += p.podsFit(si, rec, used, rec.cpu, rec.mem, nil)
	}
}

// dead reports whether the host of rec has the same capacity for every set
// with all its candidate pods gone (GPUs cmask, CPU ccpu, memory cmem; owned:
// a candidate holds it exclusively) as with none: hostCap's rule at both
// ends. Only for sets of whole GPUs (or none), whose podsFit reads no pods.
func (m *model) dead(rec *hostRec, cmask uint64, ccpu, cmem int64, owned bool) bool {
	p := m.p
	for si := range m.rest {
		none := int64(0)
		if !owned && !p.r.Exclusive {
			none = p.podsFit(si, rec, rec.fixed|cmask, rec.cpu, rec.mem, nil)
		}
		all := int64(0)
		if !p.r.Exclusive || !rec.others {
			all = p.podsFit(si, rec, rec.fixed, rec.cpu+ccpu, rec.mem+cmem, nil)
		}
		if all != none {
			return false
		}
	}
	return true
}

// wholeSets reports whether no pod set asks for a GPU fraction.
func (p *Planner) wholeSets() bool {
	for i := range p.sets {
		if p.sets[i].milli > 0 {
			return false
		}
	}
	return true
}

// Skipping quiet domains. Where the request is simple enough that the
// State's histograms give a domain's capacity exactly (one pod set of whole
// GPUs and no CPU or memory, any host eligible, any model, not exclusive, no
// nominations anywhere), a domain of the last named level in which no GPU is
// held by a preemptible job of a candidate's priority (PreemptibleBelow,
// which counts every GPU of a host held exclusively for its owner, whatever
// its pods take) has no host a candidate could change: its hosts join the
// rest from the aggregates, without visiting their pods.

// addHosts adds hosts [hlo, hhi) to the model under construction (see
// addHost), skipping quiet domains when fold allows it.
func (m *model) addHosts(hlo, hhi topology.HostID, mode int, fold bool) {
	p := m.p
	if p.jobFirst(hlo, hhi, fold) {
		m.addByJobs(mode)
		return
	}
	if !fold || hhi-hlo <= 1 || !p.quietOK() {
		for h := hlo; h < hhi; h++ {
			m.addHost(h, mode, fold)
		}
		return
	}
	t := p.t
	lvl := t.HostLevel() - 1
	for h := hlo; h < hhi; {
		d := t.HostDomain(h, lvl)
		lo, hi := t.Hosts(d)
		if lo == h && hi <= hhi && p.quiet(d, mode) {
			g := int(p.sets[0].gpus)
			m.restGPUs += int64(p.s.Free(d))
			m.rest[0] += int64(p.s.PodCapacity(d, g))
			h = hi
			continue
		}
		for end := min(hi, hhi); h < end; h++ {
			m.addHost(h, mode, fold)
		}
	}
}

// quietOK reports whether the request allows skipping quiet domains.
func (p *Planner) quietOK() bool {
	r := p.r
	if len(p.sets) != 1 || r.Exclusive || p.eligible != nil || !p.anyModel || p.s.NumNominations() > 0 {
		return false
	}
	set := &p.sets[0]
	return set.gpus > 0 && set.milli == 0 && set.cpu == 0 && set.mem == 0
}

// quiet reports whether no candidate of mode can change a host of domain d.
func (p *Planner) quiet(d topology.DomainID, mode int) bool {
	switch mode {
	case modeBelow:
		lo, _ := p.s.PreemptibleBelow(d, p.below)
		return lo == 0
	case modeCands:
		_, hi := p.s.PreemptibleBelow(d, p.r.Priority)
		return hi == 0
	}
	return false
}
