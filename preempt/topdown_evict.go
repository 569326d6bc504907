package preempt

import "slices"

// The top-down construction's evictions (topdown.go): the candidates in
// order into V until the request fits, their pods read in batches, and the
// ones not needed taken back out.

// tdEvict evicts the collected candidates into V in order until the request
// gains the pods it lacks; it returns how many it evicted (V is the first n
// in order), the pods gained and whether the request then fits. The pods of
// the first limit candidates (those the bound counts) are read first, the
// others only if those do not suffice, each time in one tight loop
// (tdFetch), which keeps many reads of the State's scattered records in
// flight at once.
func (p *Planner) tdEvict(limit int, lack int64) (int, int64, bool) {
	if len(p.tdAcc) < p.t.NumHosts() {
		p.tdAcc, p.tdEp = make([]tdHost, p.t.NumHosts()), 0
	}
	if p.tdEp++; p.tdEp == 0 { // wrapped: clear the stamps
		clear(p.tdAcc)
		p.tdEp = 1
	}
	limit = min(limit, len(p.order))
	p.podBuf, p.candLinks, p.tdGain = p.podBuf[:0], p.candLinks[:0], p.tdGain[:0]
	p.tdStarts = append(p.tdStarts[:0], 0)
	p.tdFetch(0, limit)
	gain := int64(0)
	for n, c := range p.order {
		if n == limit {
			p.tdFetch(limit, len(p.order))
		}
		p.tdIn[c] = true
		gain += p.tdAdd(n)
		if gain >= lack {
			return n + 1, gain, true
		}
	}
	return len(p.order), gain, false
}

// tdAdd recomputes the hosts of the n-th candidate in order, just put in V,
// and returns the pods they gain.
func (p *Planner) tdAdd(n int) int64 {
	g, gain := p.sets[0].gpus, int64(0)
	lo, hi := p.tdPods(n)
	for e := lo; e < hi; e++ { // a host of several pods is recomputed after each
		if sole, ok := p.tdSole(&p.podBuf[e]); ok {
			p.tdGain[e] = int16(sole)
			gain += sole
			continue
		}
		h := p.podBuf[e].Host
		a := &p.tdAcc[h]
		if a.ep != p.tdEp {
			*a = tdHost{ep: p.tdEp, head: -1, cap: int32(int64(p.s.HostFree(h)) / g)}
		}
		p.candLinks[e].next, a.head = a.head, e
		nw := p.tdCap(h, a)
		gain += int64(nw - a.cap)
		a.cap = nw
	}
	return gain
}

// tdPrune takes out of V, last evicted first, each of the n evicted
// candidates the request does not need (it still gains the pods it lacks
// without it); it returns the pods V gains then. What is left is
// irreducible: feasibility only shrinks as V does.
func (p *Planner) tdPrune(n int, gain, lack int64) int64 {
	for i := n - 1; i >= 0; i-- {
		c := p.order[i]
		p.tdIn[c] = false
		if loss := p.tdLoss(i, c); gain-loss >= lack {
			gain -= loss
			p.tdRecompute(i)
			continue
		}
		p.tdIn[c] = true
	}
	return gain
}

// tdRecompute stores the capacities of the hosts of the i-th candidate in
// order, just taken out of V, that have records.
func (p *Planner) tdRecompute(i int) {
	lo, hi := p.tdPods(i)
	for e := lo; e < hi; e++ {
		if p.tdGain[e] >= 0 { // alone on its host: no record
			continue
		}
		h := p.podBuf[e].Host
		a := &p.tdAcc[h]
		a.cap = p.tdCap(h, a)
	}
}

// tdFetch reads the pods of candidates [from, to) in order into podBuf,
// noting where the i-th one's start (tdStarts[i]; tdStarts[to] is the end),
// with their links (candLinks) unchained and no gain alone (tdGain -1). The State reads all their job
// records, then all their pods (AppendJobsPods), which keeps many reads of
// scattered records in flight.
func (p *Planner) tdFetch(from, to int) {
	ids := p.idBuf[:0]
	for _, c := range p.order[from:to] {
		ids = append(ids, p.tdJobs[c].id)
	}
	p.idBuf = ids
	starts := slices.Grow(p.tdStarts[:from], to+1-from)[:to+1]
	p.tdStarts = starts
	p.podBuf = p.s.AppendJobsPods(p.podBuf, ids, starts[from:to])
	starts[to] = int32(len(p.podBuf))
	for i, c := range p.order[from:to] {
		for range starts[from+i+1] - starts[from+i] {
			p.candLinks = append(p.candLinks, podLink{next: -1, k: c})
			p.tdGain = append(p.tdGain, -1)
		}
	}
}

// tdPods is the range of podBuf holding the pods of the i-th candidate in
// order (one of those fetched).
func (p *Planner) tdPods(i int) (lo, hi int32) { return p.tdStarts[i], p.tdStarts[i+1] }
