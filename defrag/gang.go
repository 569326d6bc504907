package defrag

import (
	"slices"

	"github.com/blinksched/blink/topology"
)

// gangSims is how many candidate domains largestGang simulates.
const gangSims = 4

// largestGang grows the largest gang of the goal's shape at the goal's
// level: among the MaxDomains domains with the most free GPUs, it ranks them
// by what moving every movable job out would give (their potential), and
// for the best gangSims with a potential above today's largest gang,
// simulates moving jobs out host by host (hosts that cost the fewest moves
// for the most pods first) until the budget or the goal is reached. It
// keeps the simulation that gives the largest gang (then the fewest moves).
func (p *Planner) largestGang(goal Goal, plan *Plan) Outcome {
	s, t, l, g := p.s, p.t, goal.Level, goal.GPUsPerPod
	before, where := bestGang(s, l, g)
	out := Outcome{Before: before, After: before}
	plan.Target = -1
	if where >= 0 && l < t.HostLevel() {
		plan.Target = topology.DomainID(where)
	}
	if goal.Want > 0 && before >= goal.Want || p.cfg.MaxMoves == 0 {
		out.Reached = goal.Want == 0 || before >= goal.Want
		return out
	}
	p.rankGangCands(l, g)
	bestIdx, tried := p.simulateGangs(l, g, goal.Want, before, plan)
	out.Tried = tried
	if bestIdx >= 0 {
		p.replayKept(plan)
		plan.Target = -1
		if l < t.HostLevel() {
			plan.Target = topology.DomainID(bestIdx)
		}
	}
	out.After, _ = bestGang(p.c, l, g)
	out.Reached = goal.Want == 0 || out.After >= goal.Want
	return out
}

// rankGangCands fills p.gcands with the candidates for a gang of g-GPU
// pods: the MaxDomains domains (or hosts) of level l with the most free
// GPUs (ties by index), ranked by potential, highest first.
func (p *Planner) rankGangCands(l topology.Level, g int) {
	lo, hi := levelRange(p.t, l)
	p.gcands = p.gcands[:0]
	for i := lo; i < hi; i++ {
		p.gcands = append(p.gcands, gangCand{idx: i, free: p.freeOf(l, i)})
	}
	slices.SortFunc(p.gcands, func(a, b gangCand) int {
		if a.free != b.free {
			return b.free - a.free
		}
		return int(a.idx - b.idx)
	})
	p.gcands = p.gcands[:min(len(p.gcands), p.cfg.MaxDomains)]
	for k := range p.gcands {
		p.gcands[k].potential = p.potential(l, p.gcands[k].idx, g)
	}
	slices.SortStableFunc(p.gcands, func(a, b gangCand) int { return b.potential - a.potential })
}

// simulateGangs grows the gang (growGang) in each of the first gangSims
// candidates whose potential is above before, undoing the moves after each,
// and stops early once want pods fit (want > 0). It keeps the moves of the
// simulation giving the largest gang (then the fewest moves) in p.keep and
// p.keepPods, and returns its domain (-1 if none beats before) and the
// candidates simulated.
func (p *Planner) simulateGangs(l topology.Level, g, want, before int, plan *Plan) (bestIdx int32, tried int) {
	bestGangSeen, bestMoves := before, 0
	bestIdx = -1
	for k := 0; k < len(p.gcands) && k < gangSims; k++ {
		gc := p.gcands[k]
		if gc.potential <= before {
			break
		}
		tried++
		got := p.growGang(l, gc.idx, g, want, plan)
		if got > bestGangSeen || got == bestGangSeen && bestIdx >= 0 && len(plan.Moves) < bestMoves {
			bestGangSeen, bestMoves, bestIdx = got, len(plan.Moves), gc.idx
			p.keep = append(p.keep[:0], plan.Moves...)
			p.keepPods = append(p.keepPods[:0], plan.pods...)
		}
		p.undo(plan, 0)
		if want > 0 && got >= want {
			break
		}
	}
	return bestIdx, tried
}

// replayKept applies the moves kept by simulateGangs (p.keep, their pods in
// p.keepPods) to the clone again and appends them to plan.
func (p *Planner) replayKept(plan *Plan) {
	off := 0
	for _, mv := range p.keep {
		pods := p.keepPods[off : off+len(mv.Pods)]
		off += len(mv.Pods)
		p.ops = append(p.ops[:0], topology.MoveJob(mv.Job, pods...))
		if err := p.c.Apply(topology.Delta{Ops: p.ops}); err != nil {
			panic("defrag: replaying the best compaction: " + err.Error())
		}
		plan.add(mv.Job, pods, mv.GPUs, mv.Milli)
	}
}

type gangCand struct {
	idx       int32
	free      int
	potential int
}

// freeOf is the free GPUs of domain (or host) i of level l in s.
func (p *Planner) freeOf(l topology.Level, i int32) int {
	if l == p.t.HostLevel() {
		return p.s.HostFree(topology.HostID(i))
	}
	return p.s.Free(topology.DomainID(i))
}

// potential is the pods of g GPUs domain i could take if every movable job
// left it: one host at a time, its free GPUs plus those of movable jobs.
func (p *Planner) potential(l topology.Level, i int32, g int) int {
	hlo, hhi := domainHosts(p.t, l, i)
	n := 0
	for h := hlo; h < hhi; h++ {
		if p.s.HostHealth(h) != topology.Healthy {
			continue
		}
		free, _ := p.hostMovable(h)
		n += free / g
	}
	return n
}

// hostMovable returns host h's free GPUs in the clone plus the whole GPUs
// of its movable jobs (not moved yet), and how many such jobs there are.
func (p *Planner) hostMovable(h topology.HostID) (gpus, jobs int) {
	c := p.c
	gpus = c.HostFree(h)
	if !c.HostHasPods(h) {
		return gpus, 0
	}
	p.hostPods = c.AppendHostPods(p.hostPods[:0], h)
	last := topology.JobID(-1)
	for _, hp := range p.hostPods {
		m := p.moverOf(hp.Job)
		if !m.ok || slices.Contains(p.moved, hp.Job) {
			continue
		}
		if hp.Milli == 0 {
			gpus += hp.NumGPUs()
		}
		if hp.Job != last {
			jobs++
			last = hp.Job
		}
	}
	return min(gpus, p.t.HostGPUCount(h)-popcount(c.HostFailedMask(h))), jobs
}

// growGang moves jobs out of domain i host by host, cheapest hosts first,
// while the budget lasts or until want pods fit; it returns the pods of g
// GPUs the domain then takes. Moves go to plan and the clone.
func (p *Planner) growGang(l topology.Level, i int32, g, want int, plan *Plan) int {
	c, t := p.c, p.t
	hlo, hhi := domainHosts(t, l, i)
	setRange(p.elig, hlo, hhi, false)
	defer setRange(p.elig, hlo, hhi, true)
	p.ghosts = p.ghosts[:0]
	for h := hlo; h < hhi; h++ {
		if c.HostHealth(h) != topology.Healthy {
			continue
		}
		after, jobs := p.hostMovable(h)
		if gain := after/g - c.HostFree(h)/g; gain > 0 {
			p.ghosts = append(p.ghosts, gangHost{h: h, gain: gain, jobs: jobs})
		}
	}
	slices.SortFunc(p.ghosts, func(a, b gangHost) int {
		switch {
		case a.jobs != b.jobs:
			return a.jobs - b.jobs
		case a.gain != b.gain:
			return b.gain - a.gain
		}
		return int(a.h - b.h)
	})
	capOf := func() int {
		if l == t.HostLevel() {
			return c.HostFree(topology.HostID(i)) / g
		}
		return c.PodCapacity(topology.DomainID(i), g)
	}
	for _, gh := range p.ghosts {
		if want > 0 && capOf() >= want {
			break
		}
		start := len(plan.Moves)
		p.hostPods = c.AppendHostPods(p.hostPods[:0], gh.h)
		p.gjobs = p.gjobs[:0]
		for _, hp := range p.hostPods {
			if m := p.moverOf(hp.Job); m.ok && !slices.Contains(p.moved, hp.Job) && !slices.Contains(p.gjobs, hp.Job) {
				p.gjobs = append(p.gjobs, hp.Job)
			}
		}
		ok := true
		for _, j := range p.gjobs {
			m := p.moverOf(j)
			if len(plan.Moves) >= p.cfg.MaxMoves || p.cfg.MaxGPUsMoved > 0 && int64(plan.GPUs+m.gpus) > p.cfg.MaxGPUsMoved ||
				!p.moveInClone(j, plan) {
				ok = false
				break
			}
		}
		if !ok {
			p.undo(plan, start)
			if len(plan.Moves) >= p.cfg.MaxMoves {
				break
			}
		}
	}
	return capOf()
}

type gangHost struct {
	h    topology.HostID
	gain int
	jobs int
}

// bestGang is the largest gang of g-GPU pods one domain (or host) of level l
// takes in s, and where (-1 if none takes any). O(domains of the level).
func bestGang(s *topology.State, l topology.Level, g int) (int, int32) {
	t := s.Tree()
	best, where := 0, int32(-1)
	if l == t.HostLevel() {
		for h := range topology.HostID(t.NumHosts()) {
			if n := s.HostFree(h) / g; n > best {
				best, where = n, int32(h)
			}
		}
		return best, where
	}
	lo, hi := t.LevelDomains(l)
	for d := lo; d < hi; d++ {
		if int(s.Free(d))/g <= best {
			continue // cannot beat it
		}
		if n := s.PodCapacity(d, g); n > best {
			best, where = n, int32(d)
		}
	}
	return best, where
}
