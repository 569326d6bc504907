package placement

import "github.com/blinksched/blink/topology"

// Fractional pods, the common case: one tight pass over a domain's children
// instead of bestScan's general capacity per child. For a plain fractional
// set (plainFrac) a domain's bound is upper's — free GPUs × ⌊1000/milli⌋
// plus sharedCap — read from the per-domain arrays at once; a host's exact
// capacity is its free GPUs × ⌊1000/milli⌋ plus what its partly used GPUs
// take, and the second term is read GPU by GPU only when the host's shared
// milli reaches one pod and the pod's milli is not a multiple of the
// partial buckets' width (the State's per-host summary leaves out what the
// request may not use: failed and nominated GPUs, unhealthy hosts and hosts
// held exclusively). Both choose exactly as bestScan does.

// plainFrac: the current set is of fractional pods with no CPU or memory,
// BestFit, no slices, every model acceptable, and no nominated GPUs it may
// take or released jobs in play. (A Restriction's sums are subtracted, its
// closed hosts skipped.)
func (v *Solver) plainFrac() bool {
	set := v.set
	return set.Milli > 0 && set.CPUMilli == 0 && set.MemoryMiB == 0 && v.r.Policy == BestFit && v.sliceS == 1 &&
		v.anyModel && v.extra.Empty() && len(v.rel) == 0 && !v.legacy
}

// bestDomainFrac is bestScan over domains [lo, hi) for a plain fractional
// set; with v.gangAll, over those that may hold the whole gang
// (domHoldsGang), as solve's candidates.
func (v *Solver) bestDomainFrac(lo, hi int32, need int64) (int32, bool) {
	const B = topology.PartialBuckets
	free := v.s.DomainFreeData()[lo:hi]
	shared := v.s.SharedMilliData()[lo:hi]
	part := v.s.PartialGPUsData()[int(lo)*B : int(hi)*B]
	m := int64(v.set.Milli)
	k := int64(topology.FullGPU) / m
	pb := v.perB
	best, bestCap, bestFree := -1, int64(0), int64(0)
	for i, fr := range free {
		q := *(*[B]int32)(part[i*B:])
		f, sh := int64(fr), shared[i]
		if x := v.rx; x != nil {
			d := topology.DomainID(int(lo) + i)
			f, sh = f-x.freeAll(d), sh-x.dshare[d]
			for b, c := range x.partOf(d) {
				q[b] -= c
			}
		}
		n := int64(q[0])*pb[0] + int64(q[1])*pb[1] + int64(q[2])*pb[2] + int64(q[3])*pb[3]
		cp := f*k + sharedPods(n, sh, m)
		if cp < need {
			continue
		}
		if (best < 0 || cp < bestCap || cp == bestCap && f < bestFree) &&
			(!v.gangAll || v.domHoldsGang(topology.DomainID(int(lo)+i))) {
			best, bestCap, bestFree = i, cp, f
		}
	}
	if best < 0 {
		return -1, false // as bestScan: no index (lo-1 is another domain's)
	}
	v.keyOf(fitKey(bestCap, bestFree, 1))
	return lo + int32(best), true
}

// sharedPods is min(n, ⌊sh/m⌋): the fractional pods of m milli that partly
// used GPUs take, n by their buckets and at most ⌊sh/m⌋ by their shared
// milli sh ≥ 0. It divides only when the second is the smaller: n·m ≤ sh
// means n ≤ ⌊sh/m⌋. (A division takes tens of cycles; the scans need this
// once per domain.)
func sharedPods(n, sh, m int64) int64 {
	if n*m <= sh {
		return n
	}
	return sh / m
}

// fracBound is upper(d) for a fractional set when no nominated GPUs or
// released jobs are in play and every model is acceptable (as the root
// index asks): bestDomainFrac's bound for one domain.
func (v *Solver) fracBound(d topology.DomainID) int64 {
	const B = topology.PartialBuckets
	q := *(*[B]int32)(v.s.PartialGPUsData()[int(d)*B:])
	f, sh := int64(v.s.Free(d)), v.s.SharedMilli(d)
	if x := v.rx; x != nil {
		f, sh = f-x.freeAll(d), sh-x.dshare[d]
		for b, c := range x.partOf(d) {
			q[b] -= c
		}
	}
	m, pb := int64(v.set.Milli), &v.perB
	n := int64(q[0])*pb[0] + int64(q[1])*pb[1] + int64(q[2])*pb[2] + int64(q[3])*pb[3]
	return f*(topology.FullGPU/m) + sharedPods(n, sh, m)
}

// bestHostFrac is bestScan over hosts [lo, hi) for a plain fractional set,
// on hosts no pod of this attempt went to, with no eligibility (but a
// Restriction's) or exclusivity asked. When the pod's milli is a multiple of the partial
// buckets' width, a bucket says exactly how many pods a GPU in it takes, so
// no host is read GPU by GPU.
func (v *Solver) bestHostFrac(lo, hi int32, need int64) (int32, bool) {
	free, shared, part := v.s.HostFreeCounts(), v.s.HostSharedData(), v.s.HostPartialData()
	m := int64(v.set.Milli)
	k := int64(topology.FullGPU) / m
	byBucket := m%topology.PartialBucketMilli == 0
	pb := v.perB
	best, bestCap, bestFree := int32(-1), int64(0), int64(0)
	one := len(v.r.Sets) == 1
	for c := lo; c < hi; c++ {
		h := topology.HostID(c)
		if v.rx != nil && v.rx.closed(h) {
			continue
		}
		f := int64(free[h])
		var cp int64 // fracHostCap's count, inline: a call per host costs the first cycle 0.4M instructions
		switch sh := int64(shared[h]); {
		case sh >= m && byBucket:
			cp = f*k + bucketPods(part[h], &pb)
		case sh >= m:
			cp = v.hostCap(h) // partly used GPUs may take pods: count them
		case f > 0:
			cp = f * k
		default:
			if j, held := v.s.HostExclusive(h); !held || j != v.r.Job {
				continue // nothing usable (a host the gang itself holds: counted below)
			}
			cp = v.hostCap(h)
		}
		if cp < need {
			continue
		}
		if best < 0 || f < bestFree || f == bestFree && cp < bestCap {
			best, bestCap, bestFree = c, cp, f
			if one && cp == need && f == 0 {
				break // hostUnbeatable: no later host has fewer free GPUs or less room
			}
		}
	}
	if best >= 0 {
		v.keyOf(uint64(bestFree)<<32 | uint64(bestCap))
	}
	return best, best >= 0
}

// bucketPods is what the partly used GPUs of a host take, by its partial
// buckets p (8 bits each) at pb pods a GPU in each bucket takes: exact when
// the pod's milli is a multiple of the buckets' width.
func bucketPods(p uint32, pb *[topology.PartialBuckets]int64) int64 {
	return int64(p&0xFF)*pb[0] + int64(p>>8&0xFF)*pb[1] + int64(p>>16&0xFF)*pb[2] + int64(p>>24)*pb[3]
}

// fracHostCap is host h's capacity for the current plain fractional set as
// bestHostFrac counts it inline, with f its free GPUs (0: nothing it may
// use). The two must agree: the last descent's keys (one_path.go) compare
// hosts by this count; TestFracScan checks it against hostCap, which
// bestHostFrac's choice equals.
func (v *Solver) fracHostCap(h topology.HostID, f int64) int64 {
	m := int64(v.set.Milli)
	switch sh := v.s.HostSharedMilli(h); {
	case sh >= m && m%topology.PartialBucketMilli == 0:
		return f*(topology.FullGPU/m) + bucketPods(v.s.HostPartialData()[h], &v.perB)
	case sh >= m:
		return v.hostCap(h)
	case f > 0:
		return f * (topology.FullGPU / m)
	}
	if j, held := v.s.HostExclusive(h); held && j == v.r.Job {
		return v.hostCap(h)
	}
	return 0
}
