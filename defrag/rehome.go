package defrag

import (
	"encoding/binary"
	"slices"

	"github.com/blinksched/blink/topology"
)

// maxRefits bounds how often one move is re-asked after its pods collided
// with an earlier move's.
const maxRefits = 8

// rehome moves every candidate of sub out of the target, with at most
// helpers moves of other jobs making room, trying the candidates in every
// order. Without helpers every success moves the same jobs, so the first
// is kept in p.seq (and rehome reports it); with helpers the search goes on
// to the cheapest helpers, recording each better plan (p.record), and
// reports whether it recorded one.
func (p *Planner) rehome(sub subset, helpers int) bool {
	p.seq, p.seqPods, p.seqJobs = p.seq[:0], p.seqPods[:0], p.seqJobs[:0]
	clear(p.memo)
	p.all, p.recorded = helpers > 0, false
	if p.dfs(sub, uint32(1)<<uint(sub.k)-1, helpers) {
		return true
	}
	return p.recorded
}

// dfs moves the candidates of sub left in rem (and up to helpers others),
// depth first. Each move's destinations are the solver's (see placeMove),
// then, on small clusters, every other one (see enumDests). It returns true
// to stop the search with the plan in p.seq.
func (p *Planner) dfs(sub subset, rem uint32, helpers int) bool {
	if rem == 0 {
		if !p.all {
			return true
		}
		p.record()
		p.recorded = true
		return false
	}
	if p.work >= p.cfg.MaxWork {
		p.limit = true
		return false
	}
	if p.all && !p.mayImprove(sub, rem) {
		return false
	}
	if p.small && !p.visit(rem, helpers) {
		return false
	}
	for i := range sub.k {
		if rem&(1<<uint(i)) != 0 && p.tryMoves(p.cands[p.subIdx[sub.off+i]].job, sub, rem&^(1<<uint(i)), helpers) {
			return true
		}
	}
	if helpers == 0 {
		return false
	}
	p.helperPool()
	for i := 0; i < len(p.helpers); i++ {
		if j := p.helpers[i]; !slices.Contains(p.seqJobs, j) && p.tryMoves(j, sub, rem, helpers-1) {
			return true
		}
	}
	if !p.helpAll {
		p.limit = true // a helper outside the pool might have done it
	}
	return false
}

// mayImprove: the moves so far plus the candidates left in rem could still
// beat the best plan (helpers only add moves and GPUs).
func (p *Planner) mayImprove(sub subset, rem uint32) bool {
	moves, gpus, milli := len(p.seq), 0, int64(0)
	for _, mv := range p.seq {
		m := p.moverOf(mv.job)
		gpus += m.gpus
		milli += m.milli
	}
	for i := range sub.k {
		if rem&(1<<uint(i)) != 0 {
			c := &p.cands[p.subIdx[sub.off+i]]
			moves, gpus, milli = moves+1, gpus+c.gpus, milli+c.milli
		}
	}
	return p.mayBeat(moves, gpus, milli)
}

// tryMoves moves job id to each of its destinations in turn and continues
// the search from there; true when the search succeeds.
func (p *Planner) tryMoves(id topology.JobID, sub subset, rem uint32, helpers int) bool {
	placed, certain := p.placeMove(id)
	if placed {
		if p.dfs(sub, rem, helpers) {
			return true
		}
		p.popMove()
	} else if certain {
		return false // no destination at all
	}
	// The solver's destination led nowhere (or the solver could not say):
	// another one might.
	depth := len(p.seq)
	if !p.enumDests(id) {
		p.limit = true // destinations not all tried: not proven
		return false
	}
	d := &p.dests[depth]
	for k := 0; k < d.count; k++ {
		pods := d.pods[k*d.n : (k+1)*d.n]
		p.pushMove(id, pods)
		if p.dfs(sub, rem, helpers) {
			return true
		}
		p.popMove()
	}
	return false
}

// visit records the search state (moves so far, candidates left, helpers
// left); false if it was seen before.
func (p *Planner) visit(rem uint32, helpers int) bool {
	k := p.keyBuf[:0]
	k = binary.LittleEndian.AppendUint32(k, rem)
	k = binary.LittleEndian.AppendUint32(k, uint32(helpers))
	order := p.order[:0]
	for i := range p.seq {
		order = append(order, i)
	}
	slices.SortFunc(order, func(a, b int) int { return int(p.seq[a].job - p.seq[b].job) })
	p.order = order
	for _, i := range order {
		mv := p.seq[i]
		k = binary.LittleEndian.AppendUint32(k, uint32(mv.job))
		for _, pod := range p.seqPods[mv.off : mv.off+mv.n] {
			k = binary.LittleEndian.AppendUint32(k, uint32(pod.Host))
			k = binary.LittleEndian.AppendUint64(k, pod.GPUs)
		}
	}
	p.keyBuf = k
	if _, seen := p.memo[string(k)]; seen {
		return false
	}
	p.memo[string(k)] = struct{}{}
	return true
}

// placeMove finds job id a new home outside the target, in the State the
// moves so far leave (see virtual.go), and appends the move. certain
// reports, when it fails, that the job has no destination at all (the
// solver decides single pod sets exactly).
func (p *Planner) placeMove(id topology.JobID) (placed, certain bool) {
	m := p.moverOf(id)
	if !m.ok {
		return false, true
	}
	gone := sortedWith(p.moveGone, p.seqJobs, id)
	p.moveGone = gone
	m.req.Eligible = p.elig
	defer p.reopen()
	for range maxRefits {
		p.work++
		ok, _, err := p.v.PlaceWithout(p.s, &m.req, 0, gone, &p.tmp)
		if err != nil || !ok {
			// Certain when the solver saw every host: it decides one pod set
			// exactly.
			return false, len(m.req.Sets) == 1 && len(p.closed) == 0
		}
		pods := append(p.fitBuf[:0], p.tmp.Pods...)
		p.fitBuf = pods
		if bad := p.refit(pods, gone, m.info.Exclusive); bad >= 0 {
			setRange(p.elig, bad, bad+1, false)
			p.closed = append(p.closed, bad)
			continue
		}
		p.pushMove(id, pods)
		return true, false
	}
	return false, false
}

func (p *Planner) pushMove(id topology.JobID, pods []topology.Pod) {
	p.seq = append(p.seq, seqMove{job: id, off: len(p.seqPods), n: len(pods)})
	p.seqPods = append(p.seqPods, pods...)
	p.seqJobs = append(p.seqJobs, id)
}

// reopen gives back the hosts closed to the last move.
func (p *Planner) reopen() {
	for _, h := range p.closed {
		setRange(p.elig, h, h+1, true)
	}
	p.closed = p.closed[:0]
}

func (p *Planner) popMove() {
	last := p.seq[len(p.seq)-1]
	p.seq = p.seq[:len(p.seq)-1]
	p.seqPods = p.seqPods[:last.off]
	p.seqJobs = p.seqJobs[:len(p.seqJobs)-1]
}

// refit re-fits pods on the hosts earlier moves landed on; it returns the
// first host that cannot take its pods, or -1.
func (p *Planner) refit(pods []topology.Pod, gone []topology.JobID, exclusive bool) topology.HostID {
	if len(p.seq) == 0 {
		return -1
	}
	for i := range pods {
		h := pods[i].Host
		if !p.landed(h) || p.firstOn(pods, h) != i {
			continue
		}
		var vh vhost
		p.buildVHost(h, gone, len(p.seq), &vh)
		n := p.t.HostGPUCount(h)
		for k := i; k < len(pods); k++ {
			if pods[k].Host == h && !vh.fit(&pods[k], n, exclusive) {
				return h
			}
		}
	}
	return -1
}

// landed reports whether an earlier move put pods on host h.
func (p *Planner) landed(h topology.HostID) bool {
	for _, pod := range p.seqPods {
		if pod.Host == h {
			return true
		}
	}
	return false
}

func (p *Planner) firstOn(pods []topology.Pod, h topology.HostID) int {
	for i := range pods {
		if pods[i].Host == h {
			return i
		}
	}
	return -1
}

// record keeps the moves in p.seq as the best plan if they beat it.
func (p *Planner) record() {
	gpus, milli := 0, int64(0)
	for _, mv := range p.seq {
		m := p.moverOf(mv.job)
		gpus += m.gpus
		milli += m.milli
	}
	if !p.mayBeat(len(p.seq), gpus, milli) {
		return
	}
	b := &p.best
	b.found, b.moves, b.gpus, b.milli, b.target = true, len(p.seq), gpus, milli, p.tg
	b.seq = append(b.seq[:0], p.seq...)
	b.pods = append(b.pods[:0], p.seqPods...)
}

// helperPool lists, once per target, movable jobs without pods in the
// target, nearest first (the hosts of the target's parent, then of its
// parent's parent, …), at most MaxHelpers of them, cheapest first.
func (p *Planner) helperPool() {
	if p.helpDone {
		return
	}
	p.helpDone = true
	t, tg := p.t, &p.tg
	slo, shi := tg.hlo, tg.hhi
	d := tg.scope // a host target's scope is its parent domain
	if tg.host < 0 {
		d = t.Parent(d)
	}
	for ; d >= 0 && len(p.helpers) < p.cfg.MaxHelpers; d = t.Parent(d) {
		lo, hi := t.Hosts(d)
		p.scanHelpers(lo, slo)
		p.scanHelpers(shi, hi)
		slo, shi = lo, hi
	}
	p.helpAll = d < 0 && len(p.helpers) <= p.cfg.MaxHelpers
	if len(p.helpers) > p.cfg.MaxHelpers {
		p.helpers = p.helpers[:p.cfg.MaxHelpers]
	}
	slices.SortFunc(p.helpers, func(a, b topology.JobID) int {
		ma, mb := p.moverOf(a), p.moverOf(b)
		if ma.gpus != mb.gpus {
			return ma.gpus - mb.gpus
		}
		return int(a - b)
	})
}

// scanHelpers adds the movable jobs of hosts [lo, hi) that have no pods in
// the target.
func (p *Planner) scanHelpers(lo, hi topology.HostID) {
	s := p.s
	for h := lo; h < hi && len(p.helpers) <= p.cfg.MaxHelpers; h++ {
		if !s.HostHasPods(h) {
			continue
		}
		p.hjobs = s.AppendHostJobs(p.hjobs[:0], h)
		for _, j := range p.hjobs {
			if _, in := slices.BinarySearch(p.jobsBuf, j); in || slices.Contains(p.helpers, j) {
				continue
			}
			if p.moverOf(j).ok {
				p.helpers = append(p.helpers, j)
			}
		}
	}
}

// setRange sets or clears bits [lo, hi) of words.
func setRange(words []uint64, lo, hi topology.HostID, on bool) {
	for h := lo; h < hi; {
		w := int(h >> 6)
		b := uint(h) & 63
		n := min(64-int(b), int(hi-h))
		mask := ^uint64(0)
		if n < 64 {
			mask = (uint64(1)<<uint(n) - 1) << b
		}
		if on {
			words[w] |= mask
		} else {
			words[w] &^= mask
		}
		h += topology.HostID(n)
	}
}
