package preempt

import (
	"slices"

	"github.com/blinksched/blink/topology"
)

// The inner search: the cheapest victim set inside one scope, over the
// scope's candidates (preemptible jobs of lower priority with pods in it),
// in four steps, each cheaper than the next:
//
//  1. Threshold. Candidates sorted by priority; the smallest priority p such
//     that evicting every candidate of priority ≤ p makes the request fit is
//     the first component of the scope's optimum (feasibility only grows
//     with the victim set). Priorities above the best answer's are not
//     tried.
//  2. Forced. A candidate of priority ≤ p without which the model says it
//     cannot fit (even with all the others gone) is in every answer: the
//     model is a necessary condition, and feasibility is monotone.
//  3. If the forced set alone fits, it is the scope's optimum: every
//     feasible set contains it.
//  4. Otherwise the rest R: all subsets of R in cost order (size, then
//     milli) when |R| ≤ Config.ExactVictims, pruned by the best answer and
//     by milli sums (R sorted by milli, so the cheapest completion of a
//     partial subset is its next members); the first size with a feasible
//     subset gives the optimum. Larger R: greedy — start from everything and
//     drop candidates, those holding the fewest GPUs in the scope first,
//     keeping each drop that still fits, which leaves an irreducible set
//     (greedy.go, which decides most drops from the model and runs of
//     them at once); its lower bound counts how many of R's candidates,
//     most useful first, could cover the missing pods at all.
//
// "Fits" is the model (exact for one pod set without slices) or, where the
// model is only a necessary condition, the model and then placement itself
// (PlaceWithout in the scope, as if the set were gone).

// searchScope searches the scope of model m: domain dom, or host (≥ 0) under
// it, and offers its answer. A partial model (of the candidates below some
// priority) that does not reach the threshold returns false, and nothing is
// noted: the caller models all candidates.
func (p *Planner) searchScope(m *model, dom topology.DomainID, host topology.HostID, partial bool) bool {
	end, ok := p.threshold(m, dom, host)
	if !ok {
		if partial {
			return false
		}
		p.noteNear(m, dom, host, end)
		return true
	}
	pstar := m.cands[end-1].prio
	nf, milliE := p.markForced(m, end)
	if lb := (Cost{Priority: pstar, Victims: max(nf, 1), Milli: milliE}); p.found && !lb.Less(p.best) {
		return true
	}
	rest := p.unforced(end)
	p.searchRest(m, dom, host, pstar, nf, milliE, rest)
	return true
}

// threshold puts in V the candidates of m, a priority at a time, lowest
// first, until the request fits (ok), or priorities run out or exceed the
// best answer's; end is how many candidates V holds.
func (p *Planner) threshold(m *model, dom topology.DomainID, host topology.HostID) (end int, ok bool) {
	n := len(m.cands)
	for end < n {
		prio := m.cands[end].prio
		if p.found && prio > p.best.Priority {
			break
		}
		from := end
		for end < n && m.cands[end].prio == prio {
			end++
		}
		m.setRange(from, end, true)
		if m.fits() && p.feasible(m, dom, host) {
			return end, true
		}
	}
	return end, false
}

// markForced marks in p.flags the forced candidates among the first end (all in
// V): those without which the model says the request cannot fit. It
// returns how many there are and their milli; V is left as it was.
func (p *Planner) markForced(m *model, end int) (nf int, milliE int64) {
	forced := resize(p.flags, len(m.cands))
	p.flags = forced
	nh := len(m.hosts)
	for c := range end {
		// Without c, a host of c keeps at least nothing: if the others
		// cover every set even then, c is not forced (no need to toggle).
		forced[c] = false
		if m.coversWithout(c, nh) {
			continue
		}
		m.set(c, false)
		forced[c] = !m.fits()
		m.set(c, true)
		if forced[c] {
			nf++
			milliE += m.cands[c].milli
		}
	}
	return nf, milliE
}

// unforced lists in p.order the first end candidates not forced (p.flags).
func (p *Planner) unforced(end int) []int32 {
	rest := p.order[:0]
	for c := range end {
		if !p.flags[c] {
			rest = append(rest, int32(c))
		}
	}
	p.order = rest
	return rest
}

// searchRest finishes the scope's search once the nf forced candidates
// (milliE their milli) are known, V holding them and rest, and offers the
// answer: the forced set if it fits alone, else the cheapest subset of rest
// added to it (exhaustive), else the greedy's.
func (p *Planner) searchRest(m *model, dom topology.DomainID, host topology.HostID, pstar int32, nf int, milliE int64, rest []int32) {
	if nf == 0 && len(rest) > p.cfg.ExactVictims {
		// V is rest already, as the greedy starts; its bound reads the
		// capacities with V empty from the build.
		p.greedy(m, dom, host, pstar, nf, milliE, rest, true)
		return
	}
	for _, c := range rest {
		m.set(int(c), false)
	}
	if nf > 0 && m.fits() && p.feasible(m, dom, host) {
		c := Cost{Priority: pstar, Victims: nf, Milli: milliE}
		p.offer(m, dom, host, c, c)
		return
	}
	if len(rest) <= p.cfg.ExactVictims && p.exhaustive(m, dom, host, pstar, nf, milliE, rest) {
		return
	}
	p.greedy(m, dom, host, pstar, nf, milliE, rest, false)
}

// feasible: the model fits (checked by the caller); where the model is only
// a necessary condition, placement decides.
func (p *Planner) feasible(m *model, dom topology.DomainID, host topology.HostID) bool {
	if m.exact {
		return true
	}
	return p.test(m, dom, host)
}

// test asks placement whether the request fits in the scope with V gone.
func (p *Planner) test(m *model, dom topology.DomainID, host topology.HostID) bool {
	gone := p.gone[:0]
	for i := range m.cands {
		if m.in[i] {
			gone = append(gone, m.cands[i].id)
		}
	}
	slices.Sort(gone)
	p.gone = gone
	req := p.r
	if host >= 0 {
		req = p.hostReq(host)
	}
	p.tests++
	if p.found {
		p.testsLate++
	}
	ok, _, err := p.solver.PlaceWithout(p.s, req, dom, gone, &p.scratch)
	return ok && err == nil
}

// exhaustive tries the subsets of rest (candidate indices; V holds the
// forced set) in cost order and offers the cheapest that fits. It returns
// false if the subset budget ran out first (V is then restored).
func (p *Planner) exhaustive(m *model, dom topology.DomainID, host topology.HostID, pstar int32, nf int, milliE int64, rest []int32) bool {
	keys := resize(p.keys, len(rest))
	p.keys = keys
	slices.SortFunc(rest, func(a, b int32) int {
		if c := cmp3(m.cands[a].milli, m.cands[b].milli); c != 0 {
			return c
		}
		return cmp3(int64(m.cands[a].id), int64(m.cands[b].id))
	})
	for i, c := range rest {
		keys[i] = m.cands[c].milli
	}
	x := &p.ex
	*x = exSearch{p: p, m: m, dom: dom, host: host, rest: rest, keys: keys, budget: p.cfg.MaxSubsets,
		pick: x.pick[:0], cur: x.cur[:0]}
	for k := 1; k <= len(rest); k++ {
		cnt := nf + k
		limit := int64(-1) // no bound at this size yet
		if p.found && pstar == p.best.Priority {
			if cnt > p.best.Victims {
				return true // the best answer has fewer victims
			}
			if cnt == p.best.Victims {
				limit = p.best.Milli - milliE // must be strictly cheaper
			}
		}
		x.limit, x.found = limit, false
		x.dfs(0, k, 0)
		if x.budget < 0 {
			x.reset()
			return false
		}
		if x.found {
			for _, c := range rest {
				m.set(int(c), false)
			}
			for _, c := range x.pick {
				m.set(int(c), true)
			}
			cost := Cost{Priority: pstar, Victims: cnt, Milli: milliE + x.bestMilli}
			p.offer(m, dom, host, cost, cost)
			return true
		}
	}
	return true // nothing beats the best answer
}

// exSearch is the depth-first enumeration of k-subsets of rest by milli.
type exSearch struct {
	p         *Planner
	m         *model
	dom       topology.DomainID
	host      topology.HostID
	rest      []int32
	keys      []int64 // milli of rest, ascending
	limit     int64   // a subset must cost less than this (-1: any)
	budget    int
	found     bool
	bestMilli int64
	pick      []int32
	cur       []int32
}

func (x *exSearch) dfs(i, left int, milli int64) {
	if left == 0 {
		x.budget--
		if x.m.fits() && x.p.feasible(x.m, x.dom, x.host) {
			x.found, x.limit, x.bestMilli = true, milli, milli
			x.pick = append(x.pick[:0], x.cur...)
		}
		return
	}
	for j := i; j+left <= len(x.rest) && x.budget >= 0; j++ {
		// the cheapest completion takes the next left candidates
		low := milli
		for q := j; q < j+left; q++ {
			low += x.keys[q]
		}
		if x.limit >= 0 && low >= x.limit {
			return
		}
		c := int(x.rest[j])
		x.m.set(c, true)
		x.cur = append(x.cur, x.rest[j])
		x.dfs(j+1, left-1, milli+x.keys[j])
		x.cur = x.cur[:len(x.cur)-1]
		x.m.set(c, false)
	}
}

// reset takes rest out of V again.
func (x *exSearch) reset() {
	for _, c := range x.rest {
		x.m.set(int(c), false)
	}
	x.cur = x.cur[:0]
}
