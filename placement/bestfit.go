package placement

import (
	"math"

	"github.com/blinksched/blink/topology"
)

// BestFit's scans over one level's children when capacities follow from the
// aggregates alone (bestChild's fast cases): a child's key is its capacity,
// then its free GPUs, then its index, and the smallest key with capacity at
// least need wins. The scans over plain counts compare packed keys and keep
// the best with conditional moves rather than branches: which child beats the
// best so far is data the branch predictor cannot learn, and a placement
// makes several such scans.

// bestDomainExact is bestChild for BestFit over domains [lo, hi) when the
// histograms are exact: one tight pass over the histogram rows.
func (v *Solver) bestDomainExact(lo, hi int32, need int64) (int32, bool) {
	if v.rx != nil {
		return v.bestDomainRestricted(lo, hi, need)
	}
	hist, nm, nb := v.s.HistogramData()
	free := v.s.DomainFreeData()
	g := int(v.set.GPUs)
	switch {
	case nm == 1 && g == 1: // one-GPU pods: Σ k·hist[k], the free GPUs
		return v.bestDomainByFree(free[lo:hi], lo, need)
	case nm == 1 && g == nb-1: // pods of a whole (largest) host: one count
		if hi-lo >= v.wholeFrom() {
			return v.wholeBest(lo, hi, need)
		}
		return v.bestDomainWhole(hist, free, int32(nb), lo, hi, need)
	case nm == 1 && g < nb && v.modelOK[0]:
		return v.bestDomainOne(hist, free, nb, lo, hi, need)
	}
	perK := v.perK[:nb]
	stop, sk := v.stopKey(need, need*int64(g))
	best, bestK := int32(-1), noKey
	stride := nm * nb
	for c := lo; c < hi; c++ {
		cp := int64(0)
		row := hist[int(c)*stride : (int(c)+1)*stride]
		for m := range nm {
			if !v.modelOK[m] {
				continue
			}
			for k := g; k < nb; k++ {
				cp += int64(row[m*nb+k]) * perK[k]
			}
		}
		if k := fitKey(cp, int64(free[c]), need); k < bestK {
			best, bestK = c, k
		}
		if stop && bestK <= sk {
			break
		}
	}
	return v.choseKey(best, bestK)
}

// bestDomainOne is bestDomainExact for one model: a domain's capacity is
// its one histogram row from g free GPUs up, each count times the pods a
// host of that many takes, with no model to check.
func (v *Solver) bestDomainOne(hist, free []int32, nb int, lo, hi int32, need int64) (int32, bool) {
	g := int(v.set.GPUs)
	perK := v.perK[g:nb]
	stop, sk := v.stopKey(need, need*int64(g))
	best, bestK := int32(-1), noKey
	j := int(lo)*nb + g // the row's count of g free GPUs
	for c := lo; c < hi; c, j = c+1, j+nb {
		cp := int64(0)
		for k, n := range hist[j : j+len(perK)] {
			cp += int64(n) * perK[k]
		}
		if k := fitKey(cp, int64(free[c]), need); k < bestK {
			best, bestK = c, k
		}
		if stop && bestK <= sk {
			break
		}
	}
	return v.choseKey(best, bestK)
}

// bestDomainByFree is bestDomainExact for one-GPU pods of one model:
// a domain's capacity is its free GPUs (free, the domains from lo on), so
// BestFit's order is by free GPUs, then index.
func (v *Solver) bestDomainByFree(free []int32, lo int32, need int64) (int32, bool) {
	stop, sk := v.stopKey(need, need) // a domain with need free GPUs is unbeatable
	best, bestK := int32(-1), noKey
	for i, f := range free {
		if k := fitKey(int64(f), 0, need); k < bestK {
			best, bestK = lo+int32(i), k
		}
		if stop && bestK <= sk {
			break
		}
	}
	if best < 0 {
		return v.chose(-1, 0)
	}
	v.keyOf(bestK | bestK>>32) // pathKey's: free GPUs as capacity and as free
	return v.chose(best, int64(bestK>>32))
}

// bestDomainWhole is bestDomainExact for pods of a whole largest host, one
// model (nb histogram buckets): a domain's capacity is one histogram count.
func (v *Solver) bestDomainWhole(hist, free []int32, nb, lo, hi int32, need int64) (int32, bool) {
	g := nb - 1
	stop, sk := v.stopKey(need, need*int64(g)) // capacity need, free GPUs just the pods'
	best, bestK := int32(-1), noKey
	whole := hist[int(lo)*int(nb)+int(g):] // whole[j·nb]: the j-th domain's wholly free hosts
	for j, f := range free[lo:hi] {
		k := fitKey(int64(whole[j*int(nb)]), int64(f), need)
		if k < bestK {
			best, bestK = lo+int32(j), k
		}
		if stop && bestK <= sk {
			break
		}
	}
	return v.choseKey(best, bestK)
}

// bestDomainRestricted is bestDomainExact for a restricted request: the
// capacities and free GPUs of the open hosts (the State's figures less the
// Restriction's sums).
func (v *Solver) bestDomainRestricted(lo, hi int32, need int64) (int32, bool) {
	hist, nm, nb := v.s.HistogramData()
	free, x := v.s.DomainFreeData(), v.rx
	g := int(v.set.GPUs)
	if nm == 1 && g == nb-1 && hi-lo >= v.wholeFrom() {
		return v.wholeBest(lo, hi, need)
	}
	best, bestCap, bestFree := int32(-1), int64(0), int64(0)
	for c := lo; c < hi; c++ {
		d := topology.DomainID(c)
		var cp int64
		switch {
		case nm == 1 && g == nb-1: // pods of a whole (largest) host: one count
			cp = int64(hist[int(c)*nb+g] - x.hist[int(c)*nb+g])
		case nm == 1 && g == 1: // one-GPU pods: the free GPUs
			cp = int64(free[c]) - x.freeAll(d)
		default:
			cp = v.histCap(d)
		}
		if cp < need || best >= 0 && cp > bestCap {
			continue
		}
		f := v.domFree(d)
		if best < 0 || cp < bestCap || f < bestFree {
			best, bestCap, bestFree = c, cp, f
			if v.unbeatable(cp, f, need) {
				break
			}
		}
	}
	return v.chose(best, bestCap)
}

// bestHostExact is bestChild for BestFit over hosts [lo, hi) when free counts
// are exact: one pass over a byte per host.
func (v *Solver) bestHostExact(lo, hi int32, need int64) (int32, bool) {
	if v.anyModel && v.rx == nil {
		return v.bestHostByFree(lo, hi, need)
	}
	g := uint8(v.set.GPUs)
	best, bestFree := int32(-1), uint8(0)
	for i, k := range v.s.HostFreeCounts()[lo:hi] {
		h := lo + int32(i)
		if k < g || !v.anyModel && !v.modelOK[v.t.HostModel(topology.HostID(h))] || v.perK[k] < need ||
			v.rx != nil && v.rx.closed(topology.HostID(h)) {
			continue
		}
		// capacity ⌊k/g⌋ grows with k, so the fewest free GPUs is the best fit
		if best < 0 || k < bestFree {
			best, bestFree = h, k
			if v.unbeatable(v.perK[k], int64(k), need) {
				break
			}
		}
	}
	return best, best >= 0
}

// bestHostByFree is bestHostExact when every host may take the pods (any
// model, none closed): the first host with the fewest free GPUs of those
// with at least need·g, the free GPUs need pods of g take (⌊k/g⌋ ≥ need).
func (v *Solver) bestHostByFree(lo, hi int32, need int64) (int32, bool) {
	lb := need * int64(v.set.GPUs) // the free GPUs need pods take
	if need > topology.MaxHostGPUs || lb > topology.MaxHostGPUs {
		return -1, false // no host has that many GPUs
	}
	least := uint32(lb)
	stop := v.unbeatable(need, lb, need) // a host with just lb free GPUs is unbeatable
	best, bestFree := int32(-1), uint32(noHostKey)
	for i, f := range v.s.HostFreeCounts()[lo:hi] {
		k := uint32(f) // 32 bits: the compiler keeps the best with conditional moves
		if k < least {
			k = noHostKey
		}
		if k < bestFree {
			best, bestFree = int32(i), k
		}
		if stop && bestFree == least {
			break
		}
	}
	if best < 0 {
		return -1, false
	}
	v.keyOf(uint64(bestFree)<<32 | uint64(v.perK[bestFree]))
	return lo + best, true
}

// noHostKey is bestHostByFree's key of a host that cannot hold the pods:
// above any host's free GPUs (at most MaxHostGPUs).
const noHostKey = 255

// noKey is fitKey's key of a child that cannot hold the pods: above every
// other key.
const noKey = ^uint64(0)

// fitKey is BestFit's key of a child of capacity cp with f free GPUs, for
// need pods: capacity, then free GPUs, as one number (both are below 2^31:
// a domain's free GPUs are an int32, and its capacity for pods of whole GPUs
// at most those), or noKey if it cannot hold them.
func fitKey(cp, f, need int64) uint64 {
	k := uint64(cp)<<32 | uint64(f)
	if cp < need {
		k = noKey
	}
	return k
}

// stopKey reports whether a scan may stop at an unbeatable child (unbeatable:
// one pod set, exact capacities) and the largest key such a child has:
// capacity need, at most lb free GPUs.
func (v *Solver) stopKey(need, lb int64) (bool, uint64) {
	if need < 0 || need > math.MaxInt32 || !v.unbeatable(need, lb, need) {
		return false, 0
	}
	return true, uint64(need)<<32 | uint64(min(lb, math.MaxUint32))
}

// choseKey is chose for the child a scan of fitKeys found (-1: none).
func (v *Solver) choseKey(best int32, k uint64) (int32, bool) {
	if best < 0 {
		return v.chose(-1, 0)
	}
	v.keyOf(k)
	return v.chose(best, int64(k>>32))
}

// keyOf records k as the pathKey of the child bestChild is about to return
// (pathSet reads it instead of counting again); only the scans of the
// descents one_path.go keeps call it, with the key pathKey would give.
func (v *Solver) keyOf(k uint64) {
	v.ckey, v.ckeyOK = k, true
}
