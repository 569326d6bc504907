package placement

import (
	"github.com/blinksched/blink/topology"
)

// rejectFast rules out gangs the root aggregates already refuse, in
// O(levels + sets·models): a pod larger than any acceptable host, or more
// pods of a shape than the cluster's upper bound.
func (v *Solver) rejectFast() bool {
	if v.maxGPUs = v.largestHost(); v.maxGPUs < 0 {
		v.reason = Reason{Code: NoModel}
		return false
	}
	need, have := int64(0), int64(0)
	for si := range v.r.Sets {
		v.setCurrent(si)
		set := v.set
		if int(set.GPUs) > v.maxGPUs {
			v.reason = Reason{Code: HostTooSmall, Set: si, Have: int64(v.maxGPUs), Need: int64(set.GPUs)}
			return false
		}
		if set.Milli == 0 {
			need += int64(set.Pods) * int64(set.GPUs)
		}
		if ub := v.upper(0); ub < int64(set.Pods) {
			v.reason = Reason{Code: NotEnoughHosts, Set: si, Have: ub, Need: int64(set.Pods)}
			return false
		}
	}
	for m, ok := range v.modelOK {
		if ok {
			have += int64(v.s.FreeOfModel(0, m))
		}
	}
	if have += v.extraGPUs(0, topology.HostID(v.t.NumHosts())); need > have {
		v.reason = Reason{Code: NotEnoughGPUs, Have: have, Need: need}
		return false
	}
	return true
}

// largestHost is the GPU count of the largest host of an acceptable model
// (-1 if none), from the root histograms.
func (v *Solver) largestHost() int {
	best := -1
	for m, ok := range v.modelOK {
		if !ok {
			continue
		}
		h := v.s.Histogram(0, m)
		for k := len(h) - 1; k >= 0; k-- {
			if h[k] > 0 || k == 0 {
				best = max(best, v.modelMax(m))
				break
			}
		}
	}
	return best
}

// modelMax is the largest host of model m (a scan the first time per tree).
func (v *Solver) modelMax(m int) int {
	if v.maxByModel == nil || v.maxTree != v.t {
		v.maxTree = v.t
		v.maxByModel = make([]int, v.t.NumModels())
		for i := range v.maxByModel {
			v.maxByModel[i] = -1
		}
		for h := range v.t.NumHosts() {
			mm := v.t.HostModel(topology.HostID(h))
			v.maxByModel[mm] = max(v.maxByModel[mm], v.t.HostGPUCount(topology.HostID(h)))
		}
	}
	return v.maxByModel[m]
}

// solve chooses the required domain and lays the gang out in it.
func (v *Solver) solve() (topology.DomainID, bool) {
	r := v.r
	if r.Required <= 0 {
		v.reset()
		if v.placeAll(0, 0) {
			return 0, true
		}
		v.failReason(0, 0)
		return 0, false
	}
	v.setCurrent(v.primary())
	need := int64(v.set.Pods)
	v.seen = 0
	cs := v.candidates(0, 0, r.Required, need, v.reqCands[:0])
	v.reqCands = cs
	v.sortCands(cs)
	for _, c := range cs {
		v.reset()
		if v.placeAll(r.Required, c.idx) {
			if r.Required == v.hl {
				return v.t.HostParent(topology.HostID(c.idx)), true
			}
			return topology.DomainID(c.idx), true
		}
	}
	best := v.seen
	if len(cs) > 0 {
		v.reason = Reason{Code: GangSets}
	} else {
		v.reason = Reason{Code: RequiredLevel, Level: r.Required, Set: v.si, Have: best, Need: need}
	}
	return 0, false
}

// primary is the pod set that orders candidate domains: the most GPUs.
func (v *Solver) primary() int {
	best, bestGPUs := 0, int64(-1)
	for i := range v.r.Sets {
		s := &v.r.Sets[i]
		if g := int64(s.Pods) * int64(max(s.GPUs, 1)); g > bestGPUs {
			best, bestGPUs = i, g
		}
	}
	return best
}

// failReason explains why the gang did not fit in node (l, i).
func (v *Solver) failReason(l topology.Level, i int32) {
	for si := range v.r.Sets {
		v.reset()
		v.setCurrent(si)
		need := int64(v.set.Pods)
		if c := v.capOf(l, i); c < need {
			if v.sliceS > 1 {
				v.sliceS = 1
				if whole := v.capOf(l, i); whole >= need {
					v.reason = Reason{Code: SliceLevel, Level: v.set.SliceLevel, Set: si, Have: c, Need: need}
					return
				}
			}
			v.reason = Reason{Code: NotEnoughHosts, Set: si, Have: c, Need: need}
			return
		}
	}
	v.reason = Reason{Code: GangSets}
}

// placeAll lays every pod set out inside node (l, i); false if one fails.
func (v *Solver) placeAll(l topology.Level, i int32) bool {
	off := 0
	for si := range v.r.Sets {
		v.setCurrent(si)
		v.pos = off
		if !v.placeSet(l, i) {
			return false
		}
		off += int(v.set.Pods)
	}
	return true
}

// placeSet places the current set inside node (l, i), honouring the
// preferred level.
func (v *Solver) placeSet(l topology.Level, i int32) bool {
	need := int64(v.set.Pods)
	p := v.r.Preferred
	if p <= l || p <= 0 {
		if v.capOf(l, i) < need {
			return false
		}
		v.fill(l, i, need)
		return true
	}
	// The smallest enclosing domain that fits, spilling up one level at a time.
	for L := p; L >= l; L-- {
		cs := v.candidates(l, i, L, need, v.cands[:0])
		v.cands = cs
		if len(cs) == 0 {
			continue
		}
		v.sortCands(cs)
		if L == p {
			v.fill(L, cs[0].idx, need)
		} else {
			v.fillFewest(L, cs[0].idx, p, need)
		}
		return true
	}
	return false
}
