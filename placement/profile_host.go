package placement

import (
	"math/bits"

	"github.com/blinksched/blink/topology"
)

// usesProfile reports whether the current choice among hosts follows the
// profile's capacity-loss rule: a profile for this tree, and a request of one
// pod in one set with the default policy, no slices, not exclusive, and no
// nominated, released or already taken GPUs in play.
func (v *Solver) usesProfile(need int64) bool {
	p := v.prof
	return p != nil && p.t == v.t && need == 1 && len(v.r.Sets) == 1 && v.set.Pods == 1 &&
		v.r.Policy == BestFit && v.sliceS == 1 && !v.r.Exclusive &&
		v.extra.Empty() && len(v.rel) == 0 && len(v.ov) == 0
}

// profHost returns the host of [lo, hi) the profile's rule chooses for the
// current one-pod set, and records the GPU a fraction takes there. Hosts
// come from the index (profile_index.go): cached views, and losses memoised
// by host state and pod shape.
func (v *Solver) profHost(lo, hi int32) (int32, bool) {
	ix := &v.pidx
	ix.sync(v, lo, hi)
	ix.setShape(v.set)
	best, prev := int32(-1), int32(-1)
	var bestLoss, bestKey, l int64
	cand := ix.candidates(v.set)
	elig := v.r.Eligible
	for w := int(lo) >> 6; w < len(cand) && w<<6 < int(hi); w++ {
		for x := cand[w]; x != 0; x &= x - 1 {
			h := int32(w<<6 + bits.TrailingZeros64(x))
			if h < lo || h >= hi || !ix.fits(v, h) {
				continue
			}
			if ix.clean[h] {
				if elig != nil && elig[h>>6]&(1<<(uint(h)&63)) == 0 {
					continue
				}
			} else if !v.hostOK(topology.HostID(h)) {
				continue
			}
			if prev < 0 || ix.key[h][1] == 0 || ix.key[h] != ix.key[prev] { // neighbours often share a state
				l = ix.lossOf(v, h)
			}
			prev = h
			if k := ix.tie[h]; best < 0 || l < bestLoss || l == bestLoss && k < bestKey {
				best, bestLoss, bestKey = h, l, k
			}
		}
	}
	v.profAt, v.profGPU = topology.HostID(best), -1
	if best >= 0 && v.set.Milli > 0 {
		v.viewHost(topology.HostID(best), &v.phv)
		_, v.profGPU, _ = v.lossFrom(&v.phv, ix.before[best])
	}
	return best, best >= 0
}

// shareGPU is the GPU of host h a fractional pod takes: the one the profile
// chose, else the tightest fit (bestShare).
func (v *Solver) shareGPU(ms *gpuMilli, h topology.HostID) int {
	if len(v.forced) > 0 { // the exhaustive search's packing (exhaustive_frac.go)
		i := int(v.forced[0])
		v.forced = v.forced[1:]
		return i
	}
	if v.profGPU >= 0 && v.profAt == h {
		return v.profGPU
	}
	return bestShare(ms, v.t.HostGPUCount(h), uint16(v.set.Milli))
}
