package preempt

import (
	"slices"

	"github.com/blinksched/blink/topology"
)

// Irreducibility, checked explicitly before an answer is returned: for each
// victim v, the request must fit nowhere with the others gone. Only scopes
// holding a victim's pod can have changed (every other one is as the
// cluster is, where the request does not fit), so the check visits the
// answer's scope and each other leaf scope a victim touches: a scope where
// the victims it holds do not make the request fit at all needs nothing
// more (feasibility is monotone); in one where they do, each victim is
// tried out. An exact search only ever returns irreducible sets, so a
// victim dropped here means a bounded search stopped early; the answer then
// moves to the scope where the rest fits.

type leafScope struct {
	dom  topology.DomainID
	host topology.HostID
}

// verify drops victims the request does not need until none is left
// (nothing to do for an answer already proven irreducible: p.irreducible).
func (p *Planner) verify() {
	for len(p.bestV) >= 2 && !p.irreducible {
		v, at, ok := p.reducible()
		if !ok {
			return
		}
		i, _ := slices.BinarySearch(p.bestV, v)
		p.bestV = slices.Delete(p.bestV, i, i+1)
		if at != (leafScope{p.bestDom, p.bestHost}) {
			p.bestModel = false // p.m models the scope the answer left
		}
		p.bestDom, p.bestHost = at.dom, at.host
		p.best = p.costOf(p.bestV)
	}
}

// reducible returns a victim of the answer that is not needed, and a scope
// where the request fits without it.
func (p *Planner) reducible() (topology.JobID, leafScope, bool) {
	v := p.bestV
	p.markSet(v)
	scopes := p.touched(v)
	for i, sc := range scopes {
		m := &p.m2
		if i == 0 && p.bestModel {
			m = &p.m // the answer's scope is still modelled: set V to the answer
			for c := range m.cands {
				m.set(c, p.markEp[m.cands[c].id] == p.markEpoch)
			}
		} else {
			lo, hi := p.t.Hosts(sc.dom)
			if sc.host >= 0 {
				lo, hi = sc.host, sc.host+1
			}
			m.build(p, lo, hi, modeMarked)
			for c := range m.cands {
				m.set(c, true)
			}
		}
		if i > 0 && !(m.fits() && p.feasible(m, sc.dom, sc.host)) {
			continue // the victims here do not make it fit at all
		}
		// It fits here: a victim with no pod here is not needed.
		here := p.idBuf[:0]
		for c := range m.cands {
			if m.in[c] {
				here = append(here, m.cands[c].id)
			}
		}
		p.idBuf = here
		if len(here) < len(v) {
			slices.Sort(here)
			for _, j := range v {
				if _, ok := slices.BinarySearch(here, j); !ok {
					return j, sc, true
				}
			}
		}
		for c := range m.cands {
			if !m.in[c] {
				continue
			}
			m.set(c, false)
			if m.fits() && p.feasible(m, sc.dom, sc.host) {
				return m.cands[c].id, sc, true
			}
			m.set(c, true)
		}
	}
	return 0, leafScope{}, false
}

// touched lists the leaf scopes holding a pod of v: the answer's first, then
// the others ascending.
func (p *Planner) touched(v []topology.JobID) []leafScope {
	first := leafScope{p.bestDom, p.bestHost}
	out := append(p.leafBuf[:0], first)
	if p.mode == rootMode {
		p.leafBuf = out
		return out
	}
	t := p.t
	for _, j := range v {
		pods := p.s.AppendJobPods(p.podBuf[:0], j)
		p.podBuf = pods
		for _, q := range pods {
			sc := leafScope{host: -1}
			if p.mode == hostMode {
				sc = leafScope{t.HostParent(q.Host), q.Host}
			} else {
				sc.dom = t.HostDomain(q.Host, p.leafLevel)
			}
			if sc != first {
				out = append(out, sc)
			}
		}
	}
	rest := out[1:]
	slices.SortFunc(rest, func(a, b leafScope) int {
		if a.dom != b.dom {
			return int(a.dom - b.dom)
		}
		return int(a.host - b.host)
	})
	out = append(out[:1], slices.Compact(rest)...)
	p.leafBuf = out
	return out
}
