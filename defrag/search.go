package defrag

import (
	"slices"

	"github.com/blinksched/blink/topology"
)

// examine searches target tg for plans no worse than the best so far, and
// reports whether the request might fit it with movable jobs moved out.
func (p *Planner) examine(tg target) bool {
	p.tg = tg
	p.targetBounds()
	if p.beyond(p.lbWhole, p.baseCap, p.s.MovableGPUsBound(p.movesLeft())) {
		return !p.beyond(p.lbWhole, p.baseCap, p.mostAll) // more moves might do
	}
	p.small = p.t.NumHosts()-int(tg.hhi-tg.hlo) <= exhaustiveHosts
	setRange(p.elig, tg.hlo, tg.hhi, false)
	defer setRange(p.elig, tg.hlo, tg.hhi, true)
	p.helpers, p.helpDone, p.helpAll = p.helpers[:0], false, false
	p.collectCands()
	if len(p.cands) == 0 {
		return false
	}
	// The jobs freeing the most, as many as moves are left, must cover what
	// the target misses; if not, no plan here beats the best (or keeps to
	// the budget).
	sum, maxM := 0, p.movesLeft()
	for i := 0; i < len(p.cands) && i < maxM; i++ {
		sum += p.cands[i].gpusInD
	}
	if int64(sum) < p.lbWhole {
		return true
	}
	if p.podBounds() {
		maxM := p.movesLeft()
		if p.baseCap+p.topUB[min(maxM, len(p.cands))] < p.need.podsPrim {
			return true // as many moves as are left cannot free room for the pods
		}
	}
	p.loadCands()
	if len(p.cands) == 0 {
		return false
	}
	p.podBounds() // of the candidates left
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
		p.podBounds()
	}
	p.deepen()
	return true
}

// movesLeft is the most moves a plan better than the best so far may have.
func (p *Planner) movesLeft() int {
	if p.best.found {
		return min(p.budget, p.best.moves)
	}
	return p.budget
}

// collectCands lists, from the pods on the target's hosts and the jobs'
// records, the jobs with pods there (p.jobsBuf, sorted) and among them the
// movable and preemptible ones with the GPUs they hold there (p.cands, most
// first). Pods are grouped by job through one sort of packed keys (packJobPod).
func (p *Planner) collectCands() {
	s, tg := p.s, &p.tg
	ent := p.entries[:0]
	for h := tg.hlo; h < tg.hhi; h++ {
		if !s.HostHasPods(h) {
			continue
		}
		p.hostPods = s.AppendHostPods(p.hostPods[:0], h)
		for _, hp := range p.hostPods {
			ent = append(ent, packJobPod(hp.Job, h, hp.NumGPUs()))
		}
	}
	slices.Sort(ent)
	p.entries = ent
	p.work += len(ent) // reading a target counts: a block at 1M GPUs holds thousands of pods
	jobs := p.jobsBuf[:0]
	p.cands, p.inD = p.cands[:0], p.inD[:0]
	for i := 0; i < len(ent); {
		j := jobOf(ent[i])
		k := i
		for k < len(ent) && jobOf(ent[k]) == j {
			k++
		}
		jobs = append(jobs, j)
		if info, _ := s.JobInfo(j); info.Movable && info.Preemptible {
			c := cand{job: j, off: len(p.inD)}
			for _, e := range ent[i:k] {
				h, g := hostGPUsOf(e)
				c.gpusInD += g
				if n := len(p.inD); n > c.off && p.inD[n-1].h == h {
					p.inD[n-1].gpus += g
				} else {
					p.inD = append(p.inD, hostGPUs{h, g})
				}
			}
			c.n = len(p.inD) - c.off
			p.cands = append(p.cands, c)
		}
		i = k
	}
	p.jobsBuf = jobs
	slices.SortFunc(p.cands, func(a, b cand) int { // cands are in job order: the same as a stable sort
		if a.gpusInD != b.gpusInD {
			return b.gpusInD - a.gpusInD
		}
		return int(a.job - b.job)
	})
}

// packJobPod packs one pod of a job on a host of the target into a uint64 that
// sorts by job, then host: job (< 2^24) << 35 | host (< 2^28) << 7 | GPUs
// (≤ 64).
func packJobPod(j topology.JobID, h topology.HostID, gpus int) uint64 {
	return uint64(j)<<35 | uint64(h)<<7 | uint64(gpus)
}

func jobOf(e uint64) topology.JobID { return topology.JobID(e >> 35) }

func hostGPUsOf(e uint64) (topology.HostID, int) {
	return topology.HostID(e >> 7 & (1<<28 - 1)), int(e & 0x7F)
}

// loadCands loads the candidates' movers: it drops those that cannot move
// (pods on several GPU models, a record no request can express), fills in
// their costs and orders them: most GPUs freed in the target, then fewest
// GPUs held, then job id.
func (p *Planner) loadCands() {
	kept := p.cands[:0]
	for _, c := range p.cands {
		m := p.moverOf(c.job)
		if !m.ok {
			continue
		}
		c.gpus, c.milli = m.gpus, m.milli
		kept = append(kept, c)
	}
	p.cands = kept
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
	maxM := p.movesLeft()
	p.prefix = p.prefix[:0]
	p.prefix = append(p.prefix, 0)
	for i, c := range p.cands {
		p.prefix = append(p.prefix, p.prefix[i]+c.gpusInD)
	}
	p.subIdx, p.fitting = p.subIdx[:0], p.fitting[:0]
	for m := 1; m <= maxM; m++ {
		found := false
		p.subs = p.subs[:0]
		if m <= len(p.cands) {
			p.pick = p.pick[:0]
			p.enumerate(0, m, 0, 0)
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
			if p.rehome(f, m-f.k) { // records its plans itself
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
	s, tg := p.s, &p.tg
	var free int64
	if tg.host >= 0 {
		free = int64(s.HostFree(tg.host))
	} else {
		free = int64(s.Free(tg.scope))
	}
	p.lbWhole = p.need.whole - free - p.extras.GPUs(tg.hlo, tg.hhi)
	p.baseCap = p.podCap(tg.scope, tg.host)
}

// podCap bounds how many pods of the request's primary shape host h (if ≥
// 0), else domain d, holds now: from its free GPUs, plus the extra GPUs'
// (0 without a primary shape).
func (p *Planner) podCap(d topology.DomainID, h topology.HostID) int64 {
	s, g := p.s, p.need.primary
	switch {
	case g == 0:
		return 0
	case h >= 0:
		if !p.modelOK(h) {
			return 0
		}
		return int64(s.HostFree(h)/g) + p.extras.Pods(h, h+1, g)
	}
	lo, hi := p.t.Hosts(d)
	n := p.extras.Pods(lo, hi, g)
	if len(p.r.Models) == 0 {
		return n + int64(s.PodCapacity(d, g))
	}
	for _, m := range p.r.Models {
		n += int64(s.PodCapacityOfModel(d, m, g))
	}
	return n
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
func (p *Planner) enumerate(i, k, sum int, ub int64) {
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
		if int64(sum+p.prefix[i+left]-p.prefix[i]) < p.lbWhole {
			return // the largest remaining candidates do not free enough
		}
		if len(p.topUB) > left && p.baseCap+ub+p.topUB[left] < p.need.podsPrim {
			return // nor room for enough pods, whichever are picked
		}
		if p.work >= p.cfg.MaxWork {
			p.limit = true
			return
		}
		p.pick = append(p.pick, i)
		p.enumerate(i+1, k, sum+p.cands[i].gpusInD, ub+p.cands[i].podUB)
		p.pick = p.pick[:len(p.pick)-1]
	}
}

// passes is the count filter: with the picked candidates gone, the target's
// hosts hold enough pods of the request's largest whole-GPU shape (an upper
// bound: free GPUs only, one host at a time).
func (p *Planner) passes() bool {
	n := &p.need
	if n.primary == 0 {
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
