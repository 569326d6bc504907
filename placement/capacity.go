package placement

import (
	"math/bits"

	"github.com/blinksched/blink/topology"
)

func popcount(m uint64) int { return bits.OnesCount64(m) }

// hostOK: host h may take pods of this gang at all — healthy, eligible, of an
// acceptable model, not held exclusively by another job, and for an
// exclusive gang free of other jobs' pods and of nominations it may not take.
func (v *Solver) hostOK(h topology.HostID) bool {
	s := v.s
	if s.HostHealth(h) != topology.Healthy || !v.modelOK[v.t.HostModel(h)] {
		return false
	}
	if e := v.r.Eligible; e != nil && e[h>>6]&(1<<(uint(h)&63)) == 0 {
		return false
	}
	if j, held := s.HostExclusive(h); held && j != v.r.Job && !v.isGone(j) {
		return false
	}
	if v.r.Exclusive {
		if o := v.ovAt(h); o >= 0 && v.ov[o].others || o < 0 && s.HostHasPods(h) {
			return false
		}
		if s.NominatedAgainst(h, &v.extra) != 0 {
			return false
		}
	}
	return true
}

// baseMask is host h's whole GPUs free for this gang before this attempt:
// the free-mask plus takeable nominated GPUs that are unused and healthy.
func (v *Solver) baseMask(h topology.HostID) uint64 {
	s := v.s
	m := s.HostFreeMask(h)
	if v.extra.Empty() || s.HostNominatedMask(h) == 0 { // admitted GPUs are nominated ones
		return m
	}
	if x := v.extra.Mask(h); x != 0 {
		m |= x & s.HostUnusedMask(h) &^ s.HostFailedMask(h)
	}
	return m
}

// shareMask is host h's GPUs a fractional pod of this gang may use: healthy,
// and not nominated for a job it may not displace.
func (v *Solver) shareMask(h topology.HostID) uint64 {
	s := v.s
	n := v.t.HostGPUCount(h)
	all := uint64(1)<<uint(n) - 1
	if n == 64 {
		all = ^uint64(0)
	}
	return all &^ s.HostFailedMask(h) &^ s.NominatedAgainst(h, &v.extra)
}

// hostCap is how many pods of the current set host h can still take.
func (v *Solver) hostCap(h topology.HostID) int64 {
	if v.exact { // whole GPUs only, and no overlay: the free count says it all
		if !v.modelOK[v.t.HostModel(h)] || v.rx != nil && v.rx.closed(h) {
			return 0
		}
		return v.perK[v.s.HostFree(h)]
	}
	if v.plain && !v.legacy {
		return v.plainCap(h)
	}
	set := v.set
	var mask uint64
	var cpu, mem int32
	o := v.ovAt(h)
	if o >= 0 {
		cpu, mem = v.ov[o].cpu, v.ov[o].mem
	} else {
		cpu, mem = v.s.HostCPU(h), v.s.HostMemory(h)
	}
	if cpu < set.CPUMilli || mem < set.MemoryMiB || !v.hostOK(h) { // CPU and memory first: scans of CPU-bound pods
		return 0
	}
	if o >= 0 {
		mask = v.ov[o].mask
	} else {
		mask = v.baseMask(h)
	}
	c := int64(inf)
	switch {
	case set.Milli > 0:
		c = v.fracCap(h, o)
	case set.GPUs > 0:
		c = int64(popcount(mask)) / int64(set.GPUs)
	}
	if set.CPUMilli > 0 {
		c = min(c, int64(cpu/set.CPUMilli))
	}
	if set.MemoryMiB > 0 {
		c = min(c, int64(mem/set.MemoryMiB))
	}
	return c
}

// fracCap counts fractional pods host h takes: Σ over usable GPUs of
// ⌊free milli / pod milli⌋.
func (v *Solver) fracCap(h topology.HostID, o int32) int64 {
	m := int64(v.set.Milli)
	n := int64(0)
	if o >= 0 {
		ms := &v.ovMilli[o]
		for i := range v.t.HostGPUCount(h) {
			n += int64(ms[i]) / m
		}
		return n
	}
	lo, _ := v.t.HostGPUs(h)
	for u := v.shareMask(h); u != 0; u &= u - 1 {
		n += int64(v.s.GPUMilli(lo+topology.GPUID(bits.TrailingZeros64(u)))) / m
	}
	return n
}

// upper bounds the current set's pods in domain d from aggregates alone.
func (v *Solver) upper(d topology.DomainID) int64 {
	set := v.set
	if set.GPUs == 0 {
		return inf
	}
	s, t := v.s, v.t
	hlo, hhi := t.Hosts(d)
	extra := v.extra.GPUs(hlo, hhi)
	gainGPUs, gainMilli := v.relGain(hlo, hhi)
	extra += gainGPUs
	if set.Milli > 0 {
		free := extra
		for m, ok := range v.modelOK {
			if ok {
				free += int64(s.FreeOfModel(d, m))
				if v.rx != nil {
					free -= v.rx.freeOf(d, m)
				}
			}
		}
		return free*int64(topology.FullGPU/set.Milli) + v.sharedCap(d, gainMilli)
	}
	return extra + v.histCap(d)
}

// sharedCap bounds the fractional pods of the current set that d's partly
// used GPUs take: by their free milli in all, and — when no job gone returns
// milli to them — by each GPU's bucket, at most ⌊(bucket's top)/milli⌋ pods
// a GPU (topology.PartialGPUs).
func (v *Solver) sharedCap(d topology.DomainID, gainMilli int64) int64 {
	m := int64(v.set.Milli)
	shared, part := v.s.SharedMilli(d), v.s.PartialGPUs(d)
	if v.rx != nil {
		shared -= v.rx.dshare[d]
		for b, c := range v.rx.partOf(d) {
			part[b] -= c
		}
	}
	if gainMilli != 0 {
		return (shared + gainMilli) / m
	}
	n := int64(0)
	for b, c := range part {
		n += int64(c) * v.perB[b]
	}
	return sharedPods(n, shared, m)
}

// histCap is Σ_k hist[k]·⌊k/g⌋ over d's acceptable models: the pods of g
// whole GPUs d's free GPUs hold, one host at a time.
func (v *Solver) histCap(d topology.DomainID) int64 {
	hist, nm, nb := v.s.HistogramData()
	g := int(v.set.GPUs)
	base := int(d) * nm * nb
	n := int64(0)
	for m := range nm {
		if !v.modelOK[m] {
			continue
		}
		h := hist[base+m*nb : base+m*nb+nb]
		for k := g; k < nb; k++ {
			n += int64(h[k]) * v.perK[k]
		}
	}
	if v.rx != nil {
		n -= v.rx.histCap(d, g, v.modelOK, v.perK[:nb])
	}
	return n
}

// capOf is how many pods of the current set node (level l, index i) can
// take, counting only whole slices at and above the slice level. Exact for
// hosts, and for domains when v.exact, except above the slice level; otherwise
// an upper bound from the aggregates (fill then checks hosts, and counts
// slices exactly at the slice level).
func (v *Solver) capOf(l topology.Level, i int32) int64 {
	var c int64
	switch {
	case l == v.hl:
		c = v.hostCap(topology.HostID(i))
	case v.exact && v.sliceS > 1 && l == v.sliceL:
		c = v.scanCap(topology.DomainID(i))
	default:
		c = v.upper(topology.DomainID(i))
	}
	if v.sliceS > 1 && l <= v.sliceL {
		c -= c % v.sliceS
	}
	return c
}

// scanCap is d's exact capacity, host by host.
func (v *Solver) scanCap(d topology.DomainID) int64 {
	if v.upper(d) == 0 {
		return 0
	}
	c := int64(0)
	lo, hi := v.t.Hosts(d)
	for h := lo; h < hi && c < inf; h++ {
		c = min(c+v.hostCap(h), inf) // CPU-only pods with no CPU or memory: unbounded
	}
	return c
}

// freeOf is the tie-break measure: free GPUs of a node.
func (v *Solver) freeOf(l topology.Level, i int32) int64 {
	if l == v.hl {
		if o := v.ovAt(topology.HostID(i)); o >= 0 {
			return int64(popcount(v.ov[o].mask))
		}
		return int64(popcount(v.baseMask(topology.HostID(i))))
	}
	return v.domFree(topology.DomainID(i))
}

// domFree is domain d's free GPUs the request may see: on open hosts only
// if it is restricted.
func (v *Solver) domFree(d topology.DomainID) int64 {
	if v.rx != nil {
		return int64(v.s.Free(d)) - v.rx.freeAll(d)
	}
	return int64(v.s.Free(d))
}

// setCurrent selects pod set si and decides whether aggregates are exact for it.
func (v *Solver) setCurrent(si int) {
	v.si = si
	if si < len(v.offs) { // where its pods go (capacities known before the first, knowCap, say so)
		v.pos = v.offs[si]
	}
	v.set = &v.r.Sets[si]
	v.tracked = false
	set, r := v.set, v.r
	v.sliceS, v.sliceL = 1, topology.NoLevel
	if set.SliceSize > 1 {
		v.sliceS, v.sliceL = int64(set.SliceSize), set.SliceLevel
	}
	if set.GPUs > 0 && set.GPUs != v.perKFor { // kept from the last set of as many GPUs (Prepare resets it)
		v.perKFor = set.GPUs
		n := v.t.MaxHostGPUs() + 1 // GPUs > n-1 leaves perK all zero: such a pod fits no host
		if g := int(set.GPUs); g < n {
			row, perK := v.perKRows[g*n:(g+1)*n], v.perK[:n]
			for k := range row { // a few words: cheaper than copy's call
				perK[k] = row[k]
			}
		} else {
			clear(v.perK[:n])
		}
	}
	if set.Milli > 0 && set.Milli != v.perBFor {
		v.perBFor = set.Milli
		for b := range v.perB {
			v.perB[b] = (int64(b+1)*topology.PartialBucketMilli - 1) / int64(set.Milli)
		}
	}
	v.plain = set.GPUs > 0 && set.Milli == 0 && set.CPUMilli == 0 && set.MemoryMiB == 0 &&
		(r.Eligible == nil || v.rx != nil && len(v.rel) == 0) && !r.Exclusive && v.extra.Empty()
	v.exact = v.plain && len(v.ov) == 0 && len(v.rel) == 0
}

// plainCap is hostCap for a plain set (whole GPUs only; no CPU, memory,
// eligibility, exclusivity or takeable nominations) once overlays are in
// play (released hosts, or pods this attempt took): a host without an
// overlay holds ⌊free count / GPUs⌋ if its model is acceptable (the
// free-mask already leaves out unhealthy hosts, exclusive holds, failed and
// nominated GPUs, so hostOK adds nothing); a host with one, ⌊its overlay's
// whole GPUs / GPUs⌋ if hostOK admits it (a released host may be draining,
// or held exclusively by a job that stays). The same value as the general
// path, without reading masks, CPU or memory.
func (v *Solver) plainCap(h topology.HostID) int64 {
	if o := v.ovAt(h); o >= 0 {
		if c := v.perK[popcount(v.ov[o].mask)]; c > 0 && v.hostOK(h) {
			return c
		}
		return 0
	}
	if !v.anyModel && !v.modelOK[v.t.HostModel(h)] || v.rx != nil && v.rx.closed(h) {
		return 0
	}
	return v.perK[v.s.HostFree(h)]
}
