package blink_test

import (
	"github.com/blinksched/blink"
	"slices"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Simple planners for tests, standing in for the preempt and defrag
// packages: correct, not optimal.

// greedyPreempter adds preemptible lower-priority jobs, lowest priority
// first, until the request fits without them, then drops every victim the
// request does not need (so the set is irreducible).
type greedyPreempter struct {
	v    placement.Solver
	cand []topology.JobID
	out  []topology.JobID
	plan placement.Plan
}

func (g *greedyPreempter) Preempt(s *topology.State, r *placement.Request) ([]topology.JobID, *placement.Plan, bool, error) {
	out, ok, err := g.preempt(s, r, &g.plan)
	return out, &g.plan, ok, err
}

func (g *greedyPreempter) preempt(s *topology.State, r *placement.Request, plan *placement.Plan) ([]topology.JobID, bool, error) {
	g.cand = g.cand[:0]
	for id := topology.JobID(0); id < s.JobIDBound(); id++ {
		if info, ok := s.JobInfo(id); ok && s.HasJob(id) && info.Preemptible && info.Priority < r.Priority {
			g.cand = append(g.cand, id)
		}
	}
	slices.SortStableFunc(g.cand, func(a, b topology.JobID) int {
		ia, _ := s.JobInfo(a)
		ib, _ := s.JobInfo(b)
		return int(ia.Priority) - int(ib.Priority)
	})
	for n := 1; n <= len(g.cand); n++ {
		g.out = append(g.out[:0], g.cand[:n]...)
		slices.Sort(g.out)
		if ok, _, err := g.v.PlaceWithout(s, r, 0, g.out, plan); err != nil {
			return nil, false, err
		} else if !ok {
			continue
		}
		for i := len(g.out) - 1; i >= 0; i-- { // irreducible
			try := slices.Delete(slices.Clone(g.out), i, i+1)
			if ok, _, _ := g.v.PlaceWithout(s, r, 0, try, plan); ok {
				g.out = try
			}
		}
		ok, _, err := g.v.PlaceWithout(s, r, 0, g.out, plan)
		return g.out, ok, err
	}
	return nil, false, nil
}

// oneMoveDefragmenter tries moving one movable preemptible job: the request
// placed as if the job were gone, then the job placed around it.
type oneMoveDefragmenter struct {
	v    placement.Solver
	jp   placement.Plan
	pods []topology.Pod
	plan placement.Plan
}

func (d *oneMoveDefragmenter) Defrag(s *topology.State, r *placement.Request, maxMoves int) ([]blink.DefragMove, *placement.Plan, bool, error) {
	moves, ok, err := d.defrag(s, r, maxMoves, &d.plan)
	return moves, &d.plan, ok, err
}

func (d *oneMoveDefragmenter) defrag(s *topology.State, r *placement.Request, maxMoves int, plan *placement.Plan) ([]blink.DefragMove, bool, error) {
	if maxMoves < 1 {
		return nil, false, nil
	}
	for id := topology.JobID(0); id < s.JobIDBound(); id++ {
		info, ok := s.JobInfo(id)
		if !ok || !s.HasJob(id) || !info.Preemptible || !info.Movable || info.Exclusive {
			continue
		}
		if ok, _, _ := d.v.PlaceWithout(s, r, 0, []topology.JobID{id}, plan); !ok {
			continue
		}
		c := s.Clone()
		d.pods = s.AppendJobPods(d.pods[:0], id)
		if c.Apply(topology.Delta{Ops: []topology.Op{topology.RemoveJob(id)}}) != nil {
			continue
		}
		planOps := plan.Delta()
		probe := planOps.Ops[0]
		probe.Job = s.JobIDBound() + 1000 // a stand-in id for the request
		if c.Apply(topology.Delta{Ops: []topology.Op{probe}}) != nil {
			continue
		}
		jr := placement.Request{Job: id, Priority: info.Priority, Preemptible: true, Required: info.Required}
		for _, p := range d.pods {
			jr.Sets = append(jr.Sets, placement.PodSet{Pods: 1, GPUs: int32(p.NumGPUs()), Milli: p.Milli, CPUMilli: p.CPUMilli, MemoryMiB: p.MemoryMiB})
		}
		if ok, _, _ := d.v.Place(c, &jr, &d.jp); !ok {
			continue
		}
		// The moved job must not land back where the request goes.
		if ok, _, _ := d.v.PlaceWithout(s, r, 0, []topology.JobID{id}, plan); !ok {
			continue
		}
		return []blink.DefragMove{{Job: id, Pods: slices.Clone(d.jp.Pods)}}, true, nil
	}
	return nil, false, nil
}
