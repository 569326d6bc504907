package preempt

import (
	"slices"

	"github.com/blinksched/blink/topology"
)

// The outer search: best-first over the domain tree, from the root down to
// the leaf scopes (domains of the required level; the last named level's
// domains, whose hosts are the scopes, for one-host requests; the root for
// gangs with no required level). Each node's key is its lower bound from
// aggregates (lb); a popped leaf is searched exactly (searchScope), which
// may improve the best answer; the search stops when the best answer costs
// no more than the least bound left, so every scope that could do better has
// been searched — or when a budget runs out after a first answer, and then
// the least bound left is the result's Bound.
//
// Children are examined lazily: expanding a node scans its children in
// index order and, at the first whose bound equals the node's (it cannot be
// lower), pushes it together with a continuation entry (the node, from the
// next child on, keyed by the node's bound) instead of scanning the rest. On
// a cluster where many domains share the least bound — the common case —
// the search thus goes straight down one path per level and stops as soon as
// a scope meets the bound, in O(levels) heap operations.

// search runs the best-first search, leaving the best answer in p.best*.
func (p *Planner) search() {
	p.found, p.best, p.bound = false, maxCost, maxCost
	p.bestV, p.bestDom, p.bestHost, p.irreducible = p.bestV[:0], 0, -1, false
	p.scopes, p.tests, p.testsLate, p.stopped, p.modelled = 0, 0, 0, false, 0
	p.soloReady, p.loneTried, p.bestPlaced = false, false, false
	p.near, p.nearScore = Reason{}, -1
	p.heap = p.heap[:0]
	p.slots.ready, p.leafHosts, p.creditLeaves = false, 0, 0
	lb, ok := p.lb(0)
	if !ok {
		return
	}
	p.heap.push(entry{lb: lb, node: 0, next: -1, level: 0})
	t := p.t
	for len(p.heap) > 0 {
		e := p.heap.pop()
		if p.found && !e.lb.Less(p.best) {
			return // nothing left can be cheaper
		}
		if p.found && (p.scopes >= p.cfg.MaxScopes || p.testsLate >= p.cfg.MaxTests) {
			p.stop(e.lb)
			return
		}
		if e.next < 0 && e.level == p.leafLevel {
			if p.rekey(e) {
				continue
			}
			p.leaf(e.node, e.lb)
			continue
		}
		lo, hi := t.Children(e.node)
		if e.next >= 0 {
			lo = e.next
		}
		for c := lo; c < hi; c++ {
			clb, ok := p.key(c, e.level+1)
			if !ok || p.found && !clb.Less(p.best) {
				continue
			}
			if clb.Compare(e.lb) <= 0 && c+1 < hi {
				p.heap.push(entry{lb: e.lb, node: e.node, next: c + 1, level: e.level})
				p.heap.push(entry{lb: clb, node: c, next: -1, level: e.level + 1})
				break
			}
			p.heap.push(entry{lb: clb, node: c, next: -1, level: e.level + 1})
		}
	}
}

// key is the bound of node c at level: its aggregate bound (lb), raised by
// the slot bound (slots.go) at the leaf level once the summary is made.
func (p *Planner) key(c topology.DomainID, level topology.Level) (Cost, bool) {
	lb, ok := p.lb(c)
	if ok && level == p.leafLevel && p.slots.ready {
		return p.slotKey(c, lb)
	}
	return lb, ok
}

// rekey is called on leaf entry e as it is popped: it makes the slot
// summary if it is due, and if the slot bound — or, the first time e is
// popped, the credit bound — raises e's bound, pushes e back with the
// raised bound (or drops it, if it cannot beat the best answer or no
// victim set fits) and returns true. A leaf pushed before the summary was
// made, or before its pods were read, is thus searched only once its
// raised bound is the least.
func (p *Planner) rekey(e entry) bool {
	if p.loneLeaf() {
		return true
	}
	if p.soloRaise(e) {
		return true
	}
	if p.slotsDue(e.node) {
		p.makeSlots()
	}
	if p.slots.ready {
		k, ok := p.slotKey(e.node, e.lb)
		if p.raise(e, k, ok) {
			return true
		}
	}
	if p.creditOK && !e.credited {
		e.credited = true
		k, ok := p.creditKey(e.node, e.lb)
		if ok && p.single(e.node, k) {
			return true
		}
		return p.raise(e, k, ok)
	}
	return false
}

// single answers leaf d without a model when its credit bound k is one
// victim that one job alone meets (p.cred.single, of cost k): the request
// fitting in d with that job gone, no answer there is cheaper — every
// answer costs at least k, and every single victim that fits has solo pods
// covering Δ, among which the job has the least milli. It reports whether
// it took the answer (placement decides: CPU, memory or exclusivity may
// still stand in the way, and then the leaf is modelled as before). It
// places into the caller's plan, which placeBest keeps while the answer
// stays the best.
func (p *Planner) single(d topology.DomainID, k Cost) bool {
	j := p.cred.single
	if k.Victims != 1 || j < 0 || p.found && !k.Less(p.best) {
		return false
	}
	if prio, _ := p.info(j); (Cost{Priority: prio, Victims: 1, Milli: p.milli(j)}) != k {
		return false // the bound is the lower edge of the priorities tried, not the job's cost
	}
	if p.found {
		p.scopes++
		p.testsLate++
	}
	p.tests++
	p.gone = append(p.gone[:0], j)
	p.bestPlaced = false // the plan is about to change
	ok, _, err := p.solver.PlaceWithout(p.s, p.r, d, p.gone, p.plan)
	if !ok || err != nil {
		return false
	}
	p.takeBest(k, d, -1, false)
	p.bestV = append(p.bestV[:0], j)
	p.irreducible = true // one victim, and the request does not fit with none
	p.bestPlaced = true  // placeBest has nothing to do unless a better answer comes
	p.singles++
	return true
}

// raise handles k, a raised bound of leaf entry e (ok false: no victim set
// fits there): it drops e if it cannot beat the best answer, pushes it
// back with bound k if that is higher, and reports whether it did either.
func (p *Planner) raise(e entry, k Cost, ok bool) bool {
	switch {
	case !ok || p.found && !k.Less(p.best):
		return true
	case e.lb.Less(k):
		e.lb = k
		p.heap.push(e)
		return true
	}
	return false
}

// stop ends a search whose budget ran out; lb bounds what is left.
func (p *Planner) stop(lb Cost) {
	p.stopped = true
	if lb.Less(p.bound) {
		p.bound = lb
	}
}

// leaf searches leaf scope d (bound lb).
func (p *Planner) leaf(d topology.DomainID, lb Cost) {
	if p.mode != hostMode {
		if p.found {
			p.scopes++
		}
		lo, hi := p.t.Hosts(d)
		p.bestModel = false
		p.modelled++
		p.leafHosts += int64(hi - lo)
		if p.loneRoot() || p.topDown() {
			return
		}
		if p.slots.ready {
			lb, _ = p.lb(d) // edgeOf reads the aggregate bound
		}
		if edge, ok := p.edgeOf(lb); ok && p.modelExact {
			// The aggregates say the candidates below edge may suffice:
			// model those only. The threshold then comes out the same
			// as with all candidates (it takes priorities in ascending
			// order, and the others stay out of V, as the jobs that
			// stay), and so does everything after it, which only
			// involves candidates up to the threshold. If they do not
			// suffice, model all (only where the model is exact: the
			// threshold then calls no placement, which would count
			// against the budget twice).
			p.below = edge
			p.m.build(p, lo, hi, modeBelow)
			if p.searchScope(&p.m, d, -1, true) {
				return
			}
		}
		p.m.build(p, lo, hi, modeCands)
		p.searchScope(&p.m, d, -1, false)
		return
	}
	lo, hi := p.t.Hosts(d)
	p.lastJob = -1
	for h := lo; h < hi; h++ {
		if p.found {
			if !lb.Less(p.best) {
				return // no host of d can beat it
			}
			if p.scopes >= p.cfg.MaxScopes || p.testsLate >= p.cfg.MaxTests {
				p.stop(lb)
				return
			}
			p.scopes++
			if !p.hostMayBeat(h, lb) {
				continue
			}
		}
		p.bestModel = false
		p.m.build(p, h, h+1, modeCands)
		p.modelled++
		if len(p.m.cands) == 0 {
			continue
		}
		p.searchScope(&p.m, d, h, false)
	}
}

// edgeOf is the priority below which candidates may suffice in a leaf of
// bound lb: the upper edge of lb's priority bucket (lb.Priority is the
// lower edge of the first bucket whose preemptible GPUs, with those of the
// buckets below, cover the request), and false if that is the request's
// priority or the bound has no priority (no restriction then).
func (p *Planner) edgeOf(lb Cost) (int32, bool) {
	if lb.Priority == NoPriority {
		return 0, false
	}
	b := bucketOf(lb.Priority) + 1
	if b > p.pb {
		return 0, false
	}
	return lowPrio(b), true
}

// offer records victim set v (the candidates in V of m) found in scope
// (dom, host) at cost c if it beats the best so far; bound is what the
// scope's search proved (c when exact).
func (p *Planner) offer(m *model, dom topology.DomainID, host topology.HostID, c, bound Cost) {
	if bound.Less(c) && bound.Less(p.bound) {
		p.bound = bound
	}
	if p.found && !c.Less(p.best) {
		return
	}
	p.takeBest(c, dom, host, m == &p.m)
	p.bestV = p.bestV[:0]
	for i := range m.cands {
		if m.in[i] {
			p.bestV = append(p.bestV, m.cands[i].id)
		}
	}
	slices.Sort(p.bestV)
}

// offerSet records victim set v of cost c, in the root scope, as the best
// answer if it beats the best so far, and reports whether it did.
func (p *Planner) offerSet(v []topology.JobID, c Cost) bool {
	if p.found && !c.Less(p.best) {
		return false
	}
	p.takeBest(c, 0, -1, false)
	p.bestV = append(p.bestV[:0], v...)
	slices.Sort(p.bestV)
	return true
}

// takeBest makes cost c, found in scope (dom, host), the best answer (the
// caller writes its victims); modelled: p.m still models that scope.
func (p *Planner) takeBest(c Cost, dom topology.DomainID, host topology.HostID, modelled bool) {
	p.found, p.best, p.bestDom, p.bestHost, p.bestModel = true, c, dom, host, modelled
	p.irreducible = false // until its proof says otherwise
	p.bestPlaced = false  // until single says otherwise
	p.bestPodsOK = false  // until the top-down answer gives them
	p.bestTopDown = false
	p.lastJob = -1 // hostMayBeat's verdicts were against the old best
}

// hostMayBeat screens host h before its model is built: every victim set
// fitting the request on h contains a candidate with pods on h, so it costs
// at least (the least priority of those candidates, 1, the least milli of
// those of that priority) — and at least the leaf's bound lb. On a domain
// held by one large job this skips every host after the first.
func (p *Planner) hostMayBeat(h topology.HostID, lb Cost) bool {
	jobs := p.s.AppendHostJobs(p.idBuf[:0], h)
	p.idBuf = jobs
	if len(jobs) == 1 && jobs[0] == p.lastJob {
		return p.lastBeat // a host of the same one job as the last: same answer
	}
	low := maxCost
	for _, j := range jobs {
		if !p.isCand(j, modeCands) {
			continue
		}
		prio, _ := p.info(j)
		if c := (Cost{Priority: prio, Victims: 1, Milli: p.milli(j)}); c.Less(low) {
			low = c
		}
	}
	if low.Less(lb) {
		low = lb
	}
	beat := low.Less(p.best)
	if len(jobs) == 1 {
		p.lastJob, p.lastBeat = jobs[0], beat
	}
	return beat
}
