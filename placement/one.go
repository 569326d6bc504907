package placement

import (
	"slices"

	"github.com/blinksched/blink/topology"
)

// placeOne is PlaceWithout's path for the commonest request, one pod of one
// set anywhere: no slices, no level required or preferred below the root,
// the root as scope and no jobs gone. For one pod, fill's descent is
// bestChild at every level from the root down to a host, then that host
// takes the pod; placeOne makes the same calls without the general path's
// set-up (rejectFast, setOrder, placeAll and fill's other cases), and so
// gives its answer whenever it finds a host.
//
// It returns false, having written nothing the general path reads, when
// the request is not such a request or a level's best child turns out to
// hold no pod (capacities of fractions, CPU or memory are upper bounds):
// the general path then places the request or says why not. Where the two
// could take different routes they agree: fill hands a domain of exact
// capacity 1 to fillAll, whose only host that holds the pod is the one the
// descent reaches (the only child with capacity at every level), and the
// pod takes the same GPUs there (assignWhole's free-mask or pickGPUs).
func (v *Solver) placeOne(plan *Plan) bool {
	r := v.r
	if v.legacy || v.noOne || len(r.Sets) != 1 || v.scope != 0 || len(v.gone) != 0 ||
		r.Required > 0 || r.Preferred > 0 {
		return false
	}
	if set := &r.Sets[0]; set.Pods != 1 || set.SliceSize > 1 {
		return false
	}
	if v.maxGPUs = v.largestHost(); v.maxGPUs < 0 { // bestChild's noHostHolds reads it
		return false
	}
	v.setCurrent(0)
	v.last, v.pos, v.start = true, 0, 0
	i, known, ok := v.descendOne()
	if !ok {
		return false
	}
	h := topology.HostID(i)
	if !known && v.capOf(v.hl, i) < 1 {
		return false
	}
	// sizeOut for one pod, without its call and its sum over the sets
	if cap(plan.Pods) < 1 {
		plan.Pods = make([]topology.Pod, 1)
	}
	plan.Pods = plan.Pods[:1]
	v.out = plan.Pods
	if need := len(v.rel) + 1; cap(v.ov) < need {
		v.ov = slices.Grow(v.ov, need-len(v.ov))
	}
	v.touchRack(h)
	if v.set.Milli > 0 && len(v.forced) == 0 && v.profAt != h {
		v.assignOneFrac(h)
	} else {
		v.assign(h, 1)
	}
	v.writePlan(plan, 0)
	return true
}

// descendOne is placeOne's descent: bestChild at every level from the root
// down to a host, from the level where the last descent for this pod shape
// stops being the answer (one_path.go) when it may use one. known reports
// that the host's capacity is at least one pod: the path's key for it, up
// to date, says so (pathKey counts a host's capacity exactly).
func (v *Solver) descendOne() (_ int32, known, ok bool) {
	var p *onePath
	from := topology.Level(1)
	if v.pathOK() {
		p = v.pathFor()
		from = v.pathFrom(p)
	}
	l, i := topology.Level(0), int32(0)
	if from > 1 {
		l, i = from-1, p.node[from-1]
	}
	if from > v.hl {
		v.known = knownCap{level: v.hl, idx: -1} // as bestChild's host scan leaves it
	}
	for ; l != v.hl; l++ { // a domain's children are one level down (hosts below the last named level)
		var c int32
		var ok bool
		if p != nil {
			c, ok = v.pathChild(topology.DomainID(i), l+1)
		} else {
			c, ok = v.bestChild(topology.DomainID(i), l+1, 1)
		}
		if !ok {
			if p != nil {
				p.valid = false
			}
			return -1, false, false
		}
		i = c
		if p != nil {
			v.pathSet(p, l+1, c)
		}
	}
	if p != nil {
		p.s, p.seq, p.valid, p.rx = v.s, v.s.TouchSeq(), true, v.rx
		if v.rx != nil {
			p.rxGen = v.rx.gen
		}
		return i, p.key[v.hl] != noKey, true
	}
	return i, false, true
}

// pathChild is bestChild for one pod in a descent that keeps a path: the
// scan bestChild picks when pathOK holds (BestFit, every model, no
// nominated or released GPUs and no profile in play, whole GPUs with exact
// capacities or a plain fraction) and placeOne's own terms do (no slices),
// without testing all that again at every level.
func (v *Solver) pathChild(d topology.DomainID, cl topology.Level) (int32, bool) {
	v.known = knownCap{level: cl, idx: -1}
	v.ckeyOK = false
	lo, hi := v.childRange(d, cl)
	wide := d == 0 && hi-lo > wideFanout
	switch {
	case v.set.Milli == 0 && cl == v.hl:
		return v.bestHostExact(lo, hi, 1)
	case cl == v.hl:
		return v.bestHostFrac(lo, hi, 1)
	case wide:
		return v.wideBest(1)
	case v.set.Milli == 0:
		return v.bestDomainExact(lo, hi, 1)
	}
	return v.bestDomainFrac(lo, hi, 1)
}
