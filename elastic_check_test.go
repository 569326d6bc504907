package blink_test

import (
	"slices"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// The random loops check every elastic bind for its size the way
// checkNoFit checks "does not fit": an elastic job is placed at the largest
// size that fits at its turn, so its next size on the growth path (every
// set one pod more above its minimum, capped at the set's size, rounded
// down to the set's slices) must not fit on the State the cycle leaves with
// the job removed, placed as the engine places (placement.Solver.Place).
// Capacity only shrinks within a cycle that releases no nomination and moves
// nothing, so a fit at the end would have fitted at the job's turn. The
// sizes a bind reports must also lie on the growth path. (PlaceWithout,
// counting the job's pods free instead, is not the engine's algorithm: for a
// gang of several sets, whose placement is a heuristic, it found [3 3] where
// Place, on the same State with the job removed, did not: FuzzLoop's input
// 3556288384c8c62f.)

// checkElastic fails if an elastic job d binds could have had a larger size
// (see above); before is the nominations before the cycle.
func (l *loop) checkElastic(step int, d blink.Decisions, before nomSnap) {
	e := l.h.e
	s := e.State()
	if len(d.Moves) > 0 || before.released(s) {
		return // counted by checkNoFit
	}
	var v placement.Solver
	var plan placement.Plan
	for _, b := range d.Binds {
		spec, _ := e.Spec(b.Job)
		if spec.MinPods == nil || !s.HasJob(b.Job.Slot()) {
			continue
		}
		next, larger := nextSize(spec, b.Sizes)
		if next == nil {
			l.t.Fatalf("step %d: elastic job %v (%+v) bound at sizes %v, not on its growth path", step, b.Job, spec, b.Sizes)
		}
		if !larger {
			l.n["elastic-largest"]++
			continue
		}
		l.n["elastic-checked"]++
		r := l.smallest(b.Job)
		for i := range r.Sets {
			r.Sets[i].Pods = next[i]
		}
		c := s.Clone() // the job gone, placed the way the engine placed it (Place)
		if err := c.Apply(topology.Delta{Ops: []topology.Op{topology.RemoveJob(b.Job.Slot())}}); err != nil {
			l.t.Fatalf("step %d: job %v: %v", step, b.Job, err)
		}
		ok, _, err := v.Place(c, r, &plan)
		if err != nil {
			l.t.Fatalf("step %d: job %v: %v", step, b.Job, err)
		}
		if ok {
			l.t.Fatalf("step %d: elastic job %v (%+v) bound at sizes %v, but sizes %v fit at the end of the cycle: pods %v",
				step, b.Job, spec, b.Sizes, next, plan.Pods)
		}
	}
}

// nextSize returns the sizes one step of growth above sizes on spec's growth
// path and true, or sizes and false when sizes are the largest; nil when
// sizes are not on the path.
func nextSize(spec blink.JobSpec, sizes []int32) ([]int32, bool) {
	grow := int32(0)
	for i, set := range spec.Sets {
		grow = max(grow, set.Pods-minPods(spec, i))
	}
	at := func(x int32) []int32 {
		out := make([]int32, len(spec.Sets))
		for i, set := range spec.Sets {
			n := min(set.Pods, minPods(spec, i)+x)
			if set.SliceSize > 0 {
				n -= n % set.SliceSize
			}
			out[i] = n
		}
		return out
	}
	found := false
	for x := int32(0); x <= grow; x++ {
		cur := at(x)
		switch {
		case slices.Equal(cur, sizes):
			found = true
		case found:
			return cur, true
		}
	}
	if !found {
		return nil, false
	}
	return sizes, false
}

// minPods is set i's smallest size (MinPods 0: the set's size).
func minPods(spec blink.JobSpec, i int) int32 {
	if m := spec.MinPods[i]; m > 0 {
		return m
	}
	return spec.Sets[i].Pods
}
