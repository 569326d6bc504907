package preempt

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// The top-down construction's evictions (topdown.go): the candidates in
// order into V until the request fits, their pods read in batches, and the
// ones not needed taken back out.

// tdEvict evicts the collected candidates into V in order until the request
// gains the pods it lacks; it returns how many it evicted (V is the first n
// in order), the pods gained and whether the request then fits. The first
// limit candidates (those the bound counts: fewer cannot fit) are read and
// added in id order, which is the order of the State's records, so the
// reads of their job records, pods and hosts go forward through memory
// instead of jumping (largest first is no order there); the others, only if
// those do not suffice, in order, one at a time. Each batch is read in one
// tight loop (tdFetch), which keeps many reads in flight at once; the pods
// of candidates of whole hosts (tdWholeHosts) are not read at all.
func (p *Planner) tdEvict(limit int, lack int64) (int, int64, bool) {
	if len(p.tdAcc) < p.t.NumHosts() {
		p.tdAcc, p.tdEp = make([]tdHost, p.t.NumHosts()), 0
	}
	if p.tdEp++; p.tdEp == 0 { // wrapped: clear the stamps
		clear(p.tdAcc)
		p.tdEp = 1
	}
	g, s := p.sets[0].gpus, p.s
	for n := range p.tdPer {
		p.tdPer[n] = int32(int64(n) / g)
	}
	p.tdPlain = s.HealthyGPUs(0) == p.t.NumGPUs() && !p.tdNom
	limit = min(limit, len(p.order))
	p.podBuf, p.candLinks, p.tdGain, p.tdFetched, p.tdUnread = p.podBuf[:0], p.candLinks[:0], p.tdGain[:0], 0, 0
	p.tdSpan, p.tdWhole = resize(p.tdSpan, len(p.tdJobs)), resize(p.tdWhole, len(p.tdJobs))
	first := p.tdByID(p.order[:limit])
	p.tdFetch(p.tdToRead(first))
	gain := int64(0)
	for _, c := range first {
		p.tdIn[c] = true
		gain += p.tdAdd(c)
	}
	if limit > 0 && gain >= lack {
		return limit, gain, true
	}
	rest := p.order[limit:]
	p.tdFetch(p.tdToRead(rest))
	for i, c := range rest {
		p.tdIn[c] = true
		gain += p.tdAdd(c)
		if gain >= lack {
			return limit + i + 1, gain, true
		}
	}
	return len(p.order), gain, false
}

// tdByID returns the candidates cands (indices of tdJobs, which is in id
// order) in ascending order, through a bitmap of tdJobs: O(len(cands) +
// len(tdJobs)/64).
func (p *Planner) tdByID(cands []int32) []int32 {
	marks := resize(p.tdMarks, (len(p.tdJobs)+63)/64)
	clear(marks)
	for _, c := range cands {
		marks[c>>6] |= 1 << uint(c&63)
	}
	ids := p.tdFirst[:0]
	for w, x := range marks {
		for ; x != 0; x &= x - 1 {
			ids = append(ids, int32(w<<6|bits.TrailingZeros64(x)))
		}
	}
	p.tdMarks, p.tdFirst = marks, ids
	return ids
}

// tdToRead returns those of cands whose pods tdAdd reads: all but the
// candidates of whole hosts, which it notes in tdWhole.
func (p *Planner) tdToRead(cands []int32) []int32 {
	read := p.tdRead[:0]
	for _, c := range cands {
		whole := p.tdWholeHostsOf(c)
		p.tdWhole[c] = whole
		if !whole {
			read = append(read, c)
		}
	}
	p.tdRead = read
	return read
}

// tdAdd recomputes the hosts of candidate c, just put in V, and returns
// the pods they gain. A candidate of whole hosts (tdWholeHosts) on a plain
// cluster gains what each pod's host holds (tdWholeGain), its pods unread.
func (p *Planner) tdAdd(c int32) int64 {
	if p.tdWholeHosts(c) {
		p.tdUnread++
		return p.tdWholeGain(c)
	}
	gain := int64(0)
	lo, hi := p.tdPods(c)
	for e := lo; e < hi; e++ { // a host of several pods is recomputed after each
		if sole, ok := p.tdSole(&p.podBuf[e]); ok {
			p.tdGain[e] = int16(sole)
			gain += sole
			continue
		}
		h := p.podBuf[e].Host
		a := &p.tdAcc[h]
		if a.ep != p.tdEp {
			*a = tdHost{ep: p.tdEp, head: -1, cap: p.tdPer[p.s.HostFree(h)]}
		}
		p.candLinks[e].next, a.head = a.head, e
		nw := p.tdCap(h, a)
		gain += int64(nw - a.cap)
		a.cap = nw
	}
	return gain
}

// tdWholeHosts reports whether candidate c, fetched or not (tdToRead), has
// every pod take all the GPUs of its host (tdWholeHostsOf).
func (p *Planner) tdWholeHosts(c int32) bool { return p.tdWhole[c] }

// tdWholeHostsOf reports whether candidate c has every pod take all the
// GPUs of its host, as tdSole's plain case, from the job view alone: on a
// plain cluster (tdPlain) of hosts of k GPUs, a job of whole GPUs (milli =
// size·1000) of n pods whose size is n·k has k GPUs in each pod, as no pod
// holds more than its host. Its pods are then never read, nor recorded.
func (p *Planner) tdWholeHostsOf(c int32) bool {
	jb, k := &p.tdJobs[c], int64(p.t.UniformHostGPUs())
	n := int64(p.npods[jb.id])
	return p.tdPlain && k > 0 && jb.milli == int64(jb.size)*topology.FullGPU && int64(jb.size) == n*k
}

// tdWholeGain is what candidate c of whole hosts gains the request (or
// loses it, taken out of V): each of its pods' hosts, all of whose GPUs it
// frees.
func (p *Planner) tdWholeGain(c int32) int64 {
	return int64(p.npods[p.tdJobs[c].id]) * int64(p.tdPer[p.t.UniformHostGPUs()])
}

// tdPrune takes out of V, last evicted first, each of the n evicted
// candidates the request does not need (it still gains the pods it lacks
// without it); it returns the pods V gains then. What is left is
// irreducible: feasibility only shrinks as V does.
func (p *Planner) tdPrune(n int, gain, lack int64) int64 {
	for i := n - 1; i >= 0; i-- {
		c := p.order[i]
		p.tdIn[c] = false
		if loss := p.tdLoss(c); gain-loss >= lack {
			gain -= loss
			p.tdRecompute(c)
			p.tdUnread -= b2i(p.tdWholeHosts(c))
			continue
		}
		p.tdIn[c] = true
	}
	return gain
}

// tdRecompute stores the capacities of the hosts of candidate c, just taken
// out of V, that have records.
func (p *Planner) tdRecompute(c int32) {
	if p.tdWholeHosts(c) {
		return // no records
	}
	lo, hi := p.tdPods(c)
	for e := lo; e < hi; e++ {
		if p.tdGain[e] >= 0 { // alone on its host: no record
			continue
		}
		h := p.podBuf[e].Host
		a := &p.tdAcc[h]
		a.cap = p.tdCap(h, a)
	}
}

// tdFetch appends the pods of candidates cands, in that order, to podBuf,
// noting each one's range (tdSpan), with their links (candLinks) unchained
// and no gain alone (tdGain -1). The State reads all their first pod slots,
// then all their pods (AppendJobsPods), which keeps many reads of scattered
// records in flight.
func (p *Planner) tdFetch(cands []int32) {
	ids := p.idBuf[:0]
	for _, c := range cands {
		ids = append(ids, p.tdJobs[c].id)
	}
	p.idBuf = ids
	starts := resize(p.tdStarts, len(cands)+1)
	p.tdStarts = starts
	p.podBuf = p.s.AppendJobsPods(p.podBuf, ids, starts[:len(cands)])
	p.tdFetched += len(cands)
	starts[len(cands)] = int32(len(p.podBuf))
	links := slices.Grow(p.candLinks, len(p.podBuf)-len(p.candLinks))[:len(p.podBuf)]
	gains := slices.Grow(p.tdGain, len(p.podBuf)-len(p.tdGain))[:len(p.podBuf)]
	for i, c := range cands {
		lo, hi := starts[i], starts[i+1]
		p.tdSpan[c] = [2]int32{lo, hi}
		for e := lo; e < hi; e++ {
			links[e], gains[e] = podLink{next: -1, k: c}, -1
		}
	}
	p.candLinks, p.tdGain = links, gains
}

// tdPods is the range of podBuf holding the pods of candidate c (one of
// those fetched).
func (p *Planner) tdPods(c int32) (lo, hi int32) { return p.tdSpan[c][0], p.tdSpan[c][1] }
