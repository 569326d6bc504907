package defrag

import (
	"math"
	"math/bits"
	"slices"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// A mover is a running job seen as a gang to re-place: its pods, and the
// placement.Request that re-places it under its own constraints.
//
// The request is built from the job's record: its pod sets (Job.Sets, with
// slices) or, for a job recorded without sets, one set per run of
// consecutive pods of one shape (GPUs, milli, CPU, memory), so that pod i of
// the plan has pod i's shape, as topology.MoveJob requires; its required and
// preferred levels; its exclusivity; and the GPU model its pods run on now
// (a job whose pods run on several models is not moved). The request's
// priority is the lowest there is and it has no end, so a move never takes
// GPUs nominated for another job.
type mover struct {
	id    topology.JobID
	ok    bool // preemptible, movable, one model, a valid request
	info  topology.Job
	pods  []topology.Pod // current pods, rank order (the Planner's arena)
	gpus  int
	milli int64
	req   placement.Request
	model [1]int
}

// loadMover fills m for job id of s (pods appended to arena, which it
// returns).
func loadMover(s *topology.State, id topology.JobID, m *mover, arena []topology.Pod) []topology.Pod {
	t := s.Tree()
	info, _ := s.JobInfo(id)
	start := len(arena)
	arena = s.AppendJobPods(arena, id)
	pods := arena[start:]
	sets := m.req.Sets[:0]
	*m = mover{id: id, info: info, pods: pods}
	for _, p := range pods {
		m.gpus += p.NumGPUs()
		m.milli += p.MilliGPU()
	}
	m.ok = info.Preemptible && info.Movable && len(pods) > 0
	if !m.ok {
		return arena
	}
	model := t.HostModel(pods[0].Host)
	for _, p := range pods[1:] {
		if t.HostModel(p.Host) != model {
			m.ok = false
			return arena
		}
	}
	m.model[0] = model
	if len(info.Sets) > 0 {
		for _, set := range info.Sets {
			ps := placement.PodSet{Pods: set.Count, GPUs: set.GPUs, Milli: set.Milli,
				CPUMilli: set.CPUMilli, MemoryMiB: set.MemoryMiB}
			if set.SliceSize > 0 {
				ps.SliceSize, ps.SliceLevel = set.SliceSize, set.SliceLevel
			}
			if ps.Pods > 0 {
				sets = append(sets, ps)
			}
		}
	} else {
		sets = shapeRuns(sets, pods)
	}
	hl := t.HostLevel()
	req := placement.Request{Job: id, Priority: math.MinInt32, Sets: sets, Required: info.Required,
		Preferred: topology.NoLevel, Exclusive: info.Exclusive, Models: m.model[:]}
	if info.Preferred > max(info.Required, 0) && info.Preferred <= hl {
		req.Preferred = info.Preferred
	}
	m.req = req
	m.ok = req.Validate(t) == nil
	return arena
}

// shapeRuns appends one pod set per run of consecutive pods of one shape.
func shapeRuns(sets []placement.PodSet, pods []topology.Pod) []placement.PodSet {
	for i, p := range pods {
		ps := placement.PodSet{Pods: 1, GPUs: int32(bits.OnesCount64(p.GPUs)), Milli: p.Milli,
			CPUMilli: p.CPUMilli, MemoryMiB: p.MemoryMiB}
		if i > 0 {
			last := &sets[len(sets)-1]
			if last.GPUs == ps.GPUs && last.Milli == ps.Milli && last.CPUMilli == ps.CPUMilli && last.MemoryMiB == ps.MemoryMiB {
				last.Pods++
				continue
			}
		}
		sets = append(sets, ps)
	}
	return sets
}

// moverOf returns the Planner's mover of job id, loading it on first use in
// this call. The pointer stays valid until forgetMovers.
func (p *Planner) moverOf(id topology.JobID) *mover {
	if i, ok := p.jobIdx[id]; ok {
		return p.movers[i]
	}
	n := len(p.movers)
	if n < cap(p.movers) && p.movers[:n+1][n] != nil {
		p.movers = p.movers[:n+1]
	} else {
		p.movers = append(p.movers, &mover{})
	}
	m := p.movers[n]
	p.arena = loadMover(p.s, id, m, p.arena)
	p.jobIdx[id] = int32(n)
	return m
}

// forgetMovers drops the movers of the last call, keeping their buffers.
func (p *Planner) forgetMovers() {
	p.movers = p.movers[:0]
	p.arena = p.arena[:0]
	clear(p.jobIdx)
}

// sortedWith appends ids and extra (if ≥ 0) to dst[:0], sorted and without
// repeats.
func sortedWith(dst []topology.JobID, ids []topology.JobID, extra topology.JobID) []topology.JobID {
	dst = append(dst[:0], ids...)
	if extra >= 0 {
		dst = append(dst, extra)
	}
	slices.Sort(dst)
	return slices.Compact(dst)
}
