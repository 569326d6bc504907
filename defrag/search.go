package defrag

import (
	"encoding/binary"
	"slices"

	"github.com/blinksched/blink/topology"
)

// maxRefits bounds how often one move is re-asked after its pods collided
// with an earlier move's.
const maxRefits = 8

// selectTargets finds the MaxDomains domains of level l (hosts at the host
// level) with the fewest GPUs missing for the request, sorted, among those
// with enough healthy GPUs. For whole-GPU requests it visits the children
// of the root best first (freeIndex) and skips those whose best domain
// cannot beat the targets held; fractional requests scan every domain.
// p.truncated records whether a domain was left out.
func (p *Planner) selectTargets(l topology.Level) {
	t := p.t
	p.heap, p.hpos, p.truncated = p.heap[:0], 0, false
	if p.need.frac > 0 || t.HostLevel() <= 1 {
		if l == t.HostLevel() {
			p.scanHosts(0, topology.HostID(t.NumHosts()))
		} else {
			lo, hi := t.LevelDomains(l)
			p.scanDomains(lo, hi)
		}
	} else {
		p.idx.update(p.s)
		groups := p.idx.groups(p.s, l)
		for _, g := range groups {
			if p.full() && max(p.need.whole-g.bound, 0) >= p.heap[0].key {
				p.truncated = true // no domain in it beats the targets held
				continue
			}
			switch {
			case l == t.HostLevel():
				p.scanHosts(t.Hosts(g.d))
			default:
				p.scanDomains(t.Descendants(g.d, l))
			}
		}
	}
	slices.SortFunc(p.heap, func(a, b target) int {
		if a.key != b.key {
			return cmpInt(a.key, b.key)
		}
		return int(a.hlo - b.hlo)
	})
}

// scanDomains offers domains [lo, hi) as targets.
func (p *Planner) scanDomains(lo, hi topology.DomainID) {
	s, t := p.s, p.t
	free := s.DomainFreeData()[lo:hi]
	need := p.need.whole*topology.FullGPU + p.need.frac
	for i, f := range free {
		d := lo + topology.DomainID(i)
		var key int64
		if p.need.frac > 0 {
			key = p.missing(int64(f), s.SharedMilli(d))
		} else {
			key = max(p.need.whole-int64(f), 0)
		}
		if p.full() && key >= p.heap[0].key {
			p.truncated = true
			continue
		}
		if int64(s.HealthyGPUs(d))*topology.FullGPU < need {
			continue // cannot hold it whatever moves
		}
		hlo, hhi := t.Hosts(d)
		p.pushTarget(target{key: key, scope: d, host: -1, hlo: hlo, hhi: hhi})
	}
}

// scanHosts offers hosts [lo, hi) as targets.
func (p *Planner) scanHosts(lo, hi topology.HostID) {
	s, t := p.s, p.t
	need := p.need.whole*topology.FullGPU + p.need.frac
	for h := lo; h < hi; h++ {
		var key int64
		if p.need.frac > 0 {
			key = p.missing(int64(s.HostFree(h)), p.hostShared(h))
		} else {
			key = max(p.need.whole-int64(s.HostFree(h)), 0)
		}
		if p.full() && key >= p.heap[0].key {
			p.truncated = true
			continue
		}
		if s.HostHealth(h) != topology.Healthy {
			continue
		}
		if e := p.r.Eligible; e != nil && e[h>>6]&(1<<(uint(h)&63)) == 0 {
			continue
		}
		if int64(t.HostGPUCount(h)-popcount(s.HostFailedMask(h)))*topology.FullGPU < need {
			continue
		}
		p.pushTarget(target{key: key, scope: t.HostParent(h), host: h, hlo: h, hhi: h + 1})
	}
}

// missing is the lower bound on the GPUs to move out of a domain with free
// whole GPUs and shared free milli: whole GPUs the request needs beyond the
// free ones, and GPUs' worth of milli beyond all free milli.
func (p *Planner) missing(free, shared int64) int64 {
	n := &p.need
	whole := n.whole - free
	all := n.whole*topology.FullGPU + n.frac - free*topology.FullGPU - shared
	all = (all + topology.FullGPU - 1) / topology.FullGPU
	return max(whole, all, 0)
}

// hostShared is the free milli on host h's partly used usable GPUs.
func (p *Planner) hostShared(h topology.HostID) int64 {
	s, t := p.s, p.t
	lo, _ := t.HostGPUs(h)
	usable := ^(s.HostFailedMask(h) | s.HostNominatedMask(h))
	var n int64
	for i := range t.HostGPUCount(h) {
		if m := s.GPUMilli(lo + topology.GPUID(i)); m < topology.FullGPU && usable&(1<<uint(i)) != 0 {
			n += int64(m)
		}
	}
	return n
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// The target heap is a max-heap on (key, first host) of at most MaxDomains
// entries while scanning; selectTargets then sorts it ascending.

func (p *Planner) full() bool { return len(p.heap) >= p.cfg.MaxDomains }

func less(a, b *target) bool { return a.key < b.key || a.key == b.key && a.hlo < b.hlo }

func (p *Planner) pushTarget(tg target) {
	h := p.heap
	if len(h) >= p.cfg.MaxDomains {
		p.truncated = true
		if !less(&tg, &h[0]) {
			return
		}
		h[0] = tg
		down(h)
		return
	}
	h = append(h, tg)
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !less(&h[parent], &h[i]) {
			break
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
	p.heap = h
}

func down(h []target) {
	for i := 0; ; {
		l, big := 2*i+1, i
		if l < len(h) && less(&h[big], &h[l]) {
			big = l
		}
		if r := l + 1; r < len(h) && less(&h[big], &h[r]) {
			big = r
		}
		if big == i {
			return
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}

// examine searches target tg for plans no worse than the best so far, and
// reports whether the request fits it once every movable job is moved out.
func (p *Planner) examine(tg target) bool {
	p.tg = tg
	p.small = p.t.NumHosts()-int(tg.hhi-tg.hlo) <= exhaustiveHosts
	setRange(p.elig, tg.hlo, tg.hhi, false)
	defer setRange(p.elig, tg.hlo, tg.hhi, true)
	p.helpers, p.helpDone, p.helpAll = p.helpers[:0], false, false
	p.collectCands()
	if len(p.cands) == 0 {
		return false
	}
	all := p.goneBuf[:0]
	for _, c := range p.cands {
		all = append(all, c.job)
	}
	slices.Sort(all)
	p.goneBuf = all
	if !p.fitsWithout(all) {
		return false
	}
	if len(p.cands) > p.cfg.MaxCandidates {
		p.cands = p.cands[:p.cfg.MaxCandidates]
		p.limit = true
	}
	p.deepen()
	return true
}

// collectCands lists the movable jobs with pods in the target, those
// freeing the most GPUs in it first.
func (p *Planner) collectCands() {
	s, tg := p.s, &p.tg
	jobs := p.jobsBuf[:0]
	for h := tg.hlo; h < tg.hhi; h++ {
		if s.HostHasPods(h) {
			jobs = s.AppendHostJobs(jobs, h)
		}
	}
	slices.Sort(jobs)
	jobs = slices.Compact(jobs)
	p.jobsBuf = jobs
	p.cands, p.inD = p.cands[:0], p.inD[:0]
	for _, j := range jobs {
		m := p.moverOf(j)
		if !m.ok {
			continue
		}
		c := cand{job: j, gpus: m.gpus, milli: m.milli, off: len(p.inD)}
		for _, pod := range m.pods {
			if pod.Host < tg.hlo || pod.Host >= tg.hhi {
				continue
			}
			n := pod.NumGPUs()
			c.gpusInD += n
			if k := len(p.inD); k > c.off && p.inD[k-1].h == pod.Host {
				p.inD[k-1].gpus += n
			} else {
				p.inD = append(p.inD, hostGPUs{pod.Host, n})
			}
		}
		c.n = len(p.inD) - c.off
		p.cands = append(p.cands, c)
	}
	slices.SortStableFunc(p.cands, func(a, b cand) int {
		switch {
		case a.gpusInD != b.gpusInD:
			return b.gpusInD - a.gpusInD
		case a.gpus != b.gpus:
			return a.gpus - b.gpus
		}
		return int(a.job - b.job)
	})
	for i := range p.cands {
		p.cands[i].position = i
	}
}

// deepen searches plans of 1, 2, … moves in the target: sets of candidates
// whose absence lets the request fit, cheapest first, each then moved out
// (with helpers when a candidate finds no home).
func (p *Planner) deepen() {
	maxM := p.budget
	if p.best.found {
		maxM = min(maxM, p.best.moves)
	}
	p.prefix = p.prefix[:0]
	p.prefix = append(p.prefix, 0)
	for i, c := range p.cands {
		p.prefix = append(p.prefix, p.prefix[i]+c.gpusInD)
	}
	p.targetBounds()
	p.subIdx, p.fitting = p.subIdx[:0], p.fitting[:0]
	for m := 1; m <= maxM; m++ {
		found := false
		p.subs = p.subs[:0]
		if m <= len(p.cands) {
			p.pick = p.pick[:0]
			p.enumerate(0, m, 0)
		}
		slices.SortStableFunc(p.subs, func(a, b subset) int {
			if a.gpus != b.gpus {
				return a.gpus - b.gpus
			}
			return cmpInt(a.milli, b.milli)
		})
		for _, sub := range p.subs {
			if !p.mayBeat(m, sub.gpus, sub.milli) {
				break
			}
			if p.work >= p.cfg.MaxWork {
				p.limit = true
				return
			}
			if !p.fitsWithout(p.subJobs(sub)) {
				continue
			}
			if p.rehome(sub, 0) {
				p.record()
				found = true
				break
			}
			p.fitting = append(p.fitting, sub)
		}
		for _, f := range p.fitting {
			if f.k >= m || !p.mayBeat(m, f.gpus, f.milli) {
				continue
			}
			if p.rehome(f, m-f.k) {
				p.record()
				found = true
			}
		}
		if found {
			return
		}
		if p.best.found && p.best.moves <= m {
			return
		}
	}
}

// mayBeat: a plan of m moves costing at least gpus and milli could beat the
// best so far and keep to the GPU budget.
func (p *Planner) mayBeat(m, gpus int, milli int64) bool {
	if g := p.cfg.MaxGPUsMoved; g > 0 && int64(gpus) > g {
		return false
	}
	b := &p.best
	if !b.found || m < b.moves {
		return true
	}
	return m == b.moves && (gpus < b.gpus || gpus == b.gpus && milli < b.milli)
}

// targetBounds computes the target's whole GPUs missing and pod capacity
// for the count filter.
func (p *Planner) targetBounds() {
	s, tg, n := p.s, &p.tg, &p.need
	var free int64
	if tg.host >= 0 {
		free = int64(s.HostFree(tg.host))
	} else {
		free = int64(s.Free(tg.scope))
	}
	p.lbWhole = n.whole - free
	p.baseCap = 0
	if n.primary == 0 {
		return
	}
	if tg.host >= 0 {
		if p.modelOK(tg.host) {
			p.baseCap = int64(s.HostFree(tg.host) / n.primary)
		}
		return
	}
	if len(p.r.Models) == 0 {
		p.baseCap = int64(s.PodCapacity(tg.scope, n.primary))
		return
	}
	for _, m := range p.r.Models {
		p.baseCap += int64(s.PodCapacityOfModel(tg.scope, m, n.primary))
	}
}

func (p *Planner) modelOK(h topology.HostID) bool {
	if len(p.r.Models) == 0 {
		return true
	}
	return slices.Contains(p.r.Models, p.t.HostModel(h))
}

// enumerate appends to p.subs the k-subsets of candidates from position i on
// (with p.pick chosen, freeing sum GPUs in the target) that pass the count
// filter. Candidates are sorted by GPUs freed, so the next ones bound what
// the rest of a subset can free.
func (p *Planner) enumerate(i, k, sum int) {
	if len(p.pick) == k {
		p.work++
		if p.passes() {
			sub := subset{off: len(p.subIdx), k: k}
			for _, c := range p.pick {
				p.subIdx = append(p.subIdx, int16(c))
				sub.gpus += p.cands[c].gpus
				sub.milli += p.cands[c].milli
			}
			p.subs = append(p.subs, sub)
		}
		return
	}
	left := k - len(p.pick)
	for ; i+left <= len(p.cands); i++ {
		if p.need.lbValid && int64(sum+p.prefix[i+left]-p.prefix[i]) < p.lbWhole {
			return // the largest remaining candidates do not free enough
		}
		if p.work >= p.cfg.MaxWork {
			p.limit = true
			return
		}
		p.pick = append(p.pick, i)
		p.enumerate(i+1, k, sum+p.cands[i].gpusInD)
		p.pick = p.pick[:len(p.pick)-1]
	}
}

// passes is the count filter: with the picked candidates gone, the target's
// hosts hold enough pods of the request's largest whole-GPU shape (an upper
// bound: free GPUs only, one host at a time).
func (p *Planner) passes() bool {
	n := &p.need
	if !n.lbValid || n.primary == 0 {
		return true
	}
	hs := p.mergeBuf[:0]
	for _, c := range p.pick {
		cd := &p.cands[c]
		hs = append(hs, p.inD[cd.off:cd.off+cd.n]...)
	}
	slices.SortFunc(hs, func(a, b hostGPUs) int { return int(a.h - b.h) })
	p.mergeBuf = hs
	capUB := p.baseCap
	g := n.primary
	for i := 0; i < len(hs); {
		h, add := hs[i].h, 0
		for ; i < len(hs) && hs[i].h == h; i++ {
			add += hs[i].gpus
		}
		if p.s.HostHealth(h) != topology.Healthy || !p.modelOK(h) {
			continue
		}
		free := p.s.HostFree(h)
		after := min(free+add, p.t.HostGPUCount(h))
		capUB += int64(after/g - free/g)
	}
	return capUB >= n.podsPrim
}

// subJobs returns the jobs of sub, sorted, in a scratch buffer.
func (p *Planner) subJobs(sub subset) []topology.JobID {
	ids := p.goneBuf[:0]
	for _, c := range p.subIdx[sub.off : sub.off+sub.k] {
		ids = append(ids, p.cands[c].job)
	}
	slices.Sort(ids)
	p.goneBuf = ids
	return ids
}

// fitsWithout reports whether the request fits the target with jobs gone.
func (p *Planner) fitsWithout(gone []topology.JobID) bool {
	p.work++
	ok, _, err := p.v.PlaceWithout(p.s, p.requestFor(p.tg), p.tg.scope, gone, &p.reqTmp)
	return err == nil && ok
}

// rehome moves every candidate of sub out of the target, with at most
// helpers moves of other jobs making room, trying the candidates in every
// order; on success p.seq holds the moves.
func (p *Planner) rehome(sub subset, helpers int) bool {
	p.seq, p.seqPods, p.seqJobs = p.seq[:0], p.seqPods[:0], p.seqJobs[:0]
	clear(p.memo)
	return p.dfs(sub, uint32(1)<<uint(sub.k)-1, helpers)
}

// dfs moves the candidates of sub left in rem (and up to helpers others),
// depth first. Each move's destinations are the solver's (see placeMove),
// then, on small clusters, every other one (see enumDests).
func (p *Planner) dfs(sub subset, rem uint32, helpers int) bool {
	if rem == 0 {
		return true
	}
	if p.work >= p.cfg.MaxWork {
		p.limit = true
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
