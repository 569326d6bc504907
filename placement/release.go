package placement

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// Placing as if some jobs were gone (PlaceWithout, for preemption): the hosts
// those jobs use get a base overlay — their GPUs, milli, CPU and memory
// returned, an exclusive hold by one of them lifted — that every attempt
// starts from (reset reinstalls it). The aggregates do not know about it, so
// capacities become upper bounds plus what the overlay returned.
//
// Building the overlays costs O(the gone jobs' pods), plus O(hosts/64) when
// they are many (release_index.go), in four passes:
//
//  1. the gone jobs' pods are gathered (relPods);
//  2. their hosts are listed in host order, one entry each (release_index.go:
//     by a bitmap of hosts when the pods are many, else by sorting the pods);
//  3. each pod's GPUs, milli, CPU and memory go back to its host's entry;
//  4. each entry becomes an overlay, its whole-free GPUs computed from the
//     State's masks (a GPU is whole-free when unused, or returned whole, or
//     when the returned fractions make it whole again), and the gains are
//     summed for relGain. The overlay's milli per GPU is written only when
//     the request has fractional pods, the only ones that read it; whether
//     jobs that stay have pods on the host, only for exclusive requests, the
//     only ones that ask.
//
// An entry is its 24-byte overlay (rel, a hostOv); its milli per GPU lives
// apart (relMilli), as does what its pods gave back while it is built
// (relGot), so that the passes over the entries read few bytes per host.
//
// When the pods are many and all of whole GPUs, every GPU is shareable and
// the request asks for no fraction and no exclusivity (the common
// preemption), passes 1 to 4 are one pass over the pods, made batch by
// batch as they are gathered, and one over the hosts, which also writes
// the overlays where the first install puts them and what relCapsQuick
// needs of each in two bytes (release_whole.go).
//
// Laying a gang out around them stays the rule's bound-and-check walk (the
// bounds order domains, so making them exact would change answers), made
// cheaper for plain pod sets — whole GPUs, nothing else asked: a host's
// capacity is its free count or its overlay's popcount (plainCap), a
// domain asked for at least its bound is filled child by child in index
// order without candidates (fill_every.go), a rack asked for at least all
// it holds host by host, from prefix sums of the released hosts' gains
// while no pod went there yet (release_fill.go), and an attempt after the
// first restores only the overlays the last one took from (installRel), or
// none when it read none (reset).

// relGot is what a released host's pods gave back, while the general build
// makes its entry (relGot, at the entry's index).
type relGot struct {
	whole uint64 // GPUs returned whole
	frac  uint64 // GPUs returned fractions (relMilli holds their sum until finishRel)
}

// release builds the base overlays for jobs gone. gone must be sorted.
func (v *Solver) release(gone []topology.JobID) {
	if !v.releaseStart(gone) {
		return
	}
	if v.gatherWhole() {
		return
	}
	v.buildRel(v.denseRel())
}

// releaseStart empties the overlays for jobs gone and readies a build,
// reporting false when there is nothing to build (no job gone).
func (v *Solver) releaseStart(gone []topology.JobID) bool {
	v.rel, v.gone, v.relSum, v.relOrder = v.rel[:0], gone, v.relSum[:0], v.relOrder[:0]
	if len(gone) == 0 {
		return false
	}
	v.relAll = v.s.NumNominations() == 0 && v.s.HealthyGPUs(0) == v.t.NumGPUs()
	v.fracs = v.fracSets()
	v.buildStart()
	return true
}

// gatherRel gathers the pods of the jobs gone (v.gone) into relPods.
func (v *Solver) gatherRel() {
	if cap(v.relStarts) < len(v.gone) {
		v.relStarts = make([]int32, len(v.gone))
	}
	v.relPods = v.s.AppendJobsPods(v.relPods[:0], v.gone, v.relStarts[:len(v.gone)])
}

// buildRel turns relPods into the released hosts' overlays, in host order,
// with prefix sums of their gains; dense chooses how the hosts are listed
// (see release_index.go).
func (v *Solver) buildRel(dense bool) {
	v.rel, v.relSum, v.relOrder, v.relKept = v.rel[:0], v.relSum[:0], v.relOrder[:0], false
	v.relGot = v.relGot[:0]
	if len(v.relPods) == 0 {
		return
	}
	v.fracs = v.fracSets()
	v.buildStart()
	if dense && v.buildWhole() {
		return // v.relDirty is false: no milli per GPU written
	}
	if dense {
		v.relHostsDense()
	} else {
		v.relHostsSparse()
	}
	for _, p := range v.relPods {
		v.addRel(v.relIdx[p.Host], p)
	}
	v.relDirty = v.fracs
	v.finishAll()
}

// buildStart readies what reads the entries built: relCaps computes afresh
// (from relKeys only if wholeEntries writes them), installRel writes every
// overlay, rackStamp is sized, and relMilli is left zero for newRel.
func (v *Solver) buildStart() {
	v.relCapG, v.relKept, v.relPlaced, v.relKeys = 0, false, false, v.relKeys[:0]
	v.relSumM = v.relSumM[:0] // finishAll writes it; wholeEntries leaves it empty
	if n := v.t.NumDomains(); len(v.rackStamp) != n {
		v.rackStamp = make([]uint32, n) // once per tree
	}
	if v.relDirty { // an earlier build wrote milli per GPU: newRel expects zeros
		clear(v.relMilli)
		v.relDirty = false
	}
}

// finishAll finishes every entry (finishWhole where it applies, else
// finishRel) and sums their gains into relSum and relSumM.
func (v *Solver) finishAll() {
	fracs := v.fracs
	sum := slices.Grow(v.relSum[:0], len(v.rel)+1)[:len(v.rel)+1]
	sumM := slices.Grow(v.relSumM[:0], len(v.rel)+1)[:len(v.rel)+1]
	sum[0], sumM[0] = 0, 0
	free := v.s.HostFreeCounts()
	whole := v.relAll && !fracs && !v.r.Exclusive && !v.legacy // finishWhole applies to entries without fractions
	gpus, milli := int64(0), int64(0)
	for i := range v.rel {
		o, got := &v.rel[i], v.relGot[i]
		if whole && got.frac == 0 {
			gpus += v.finishWhole(o, got.whole, free)
		} else {
			g, m := v.finishRel(o, got, &v.relMilli[i], fracs)
			gpus, milli = gpus+g, milli+m
		}
		sum[i+1], sumM[i+1] = gpus, milli
	}
	v.relSum, v.relSumM = sum, sumM
}

// finishWhole is finishRel for an entry that got only whole GPUs back, on
// a State where the gang may share every GPU (v.relAll), for a request
// without fractional pods (no milli per GPU to write) that is not
// exclusive (others unasked): its whole-free GPUs are the unused ones and
// those returned (whole), and it gained those of them that were not free
// (the free-mask holds only unused GPUs, so all of it is among them: the
// difference of the counts). An entry that got every GPU back (a
// whole-host pod gone) needs no mask read. It returns the GPUs gained.
func (v *Solver) finishWhole(o *hostOv, whole uint64, free []uint8) int64 {
	h := o.h
	if n := v.t.HostGPUCount(h); n < 64 && whole == 1<<uint(n)-1 {
		o.mask = whole
	} else {
		o.mask = v.s.HostUnusedMask(h) | whole
	}
	o.others = false
	return int64(popcount(o.mask) - int(free[h]))
}

// newRel appends host h's entry, nothing returned yet: the State's free CPU
// and memory. Its milli per GPU (relMilli) is a slot of an earlier build,
// not rewritten: every build leaves them at zero unless the request had
// fractional pods (v.relDirty: buildRel then clears them first), or a new
// zero slot.
func (v *Solver) newRel(h topology.HostID) {
	n := len(v.rel)
	v.relIdx[h] = int32(n)
	if len(v.relMilli) == n {
		v.relMilli = append(v.relMilli, gpuMilli{})
	}
	v.rel = append(v.rel, hostOv{h: h, cpu: v.s.HostCPU(h), mem: v.s.HostMemory(h)})
	v.relGot = append(v.relGot, relGot{})
}

// addRel returns pod p's resources to entry i.
func (v *Solver) addRel(i int32, p topology.Pod) {
	o, got := &v.rel[i], &v.relGot[i]
	if p.Milli == 0 {
		got.whole |= p.GPUs
	} else {
		ms := &v.relMilli[i]
		for m := p.GPUs; m != 0; m &= m - 1 {
			k := bits.TrailingZeros64(m)
			got.frac |= 1 << uint(k)
			ms[k] += uint16(p.Milli)
		}
	}
	o.cpu += p.CPUMilli
	o.mem += p.MemoryMiB
}

// finishRel turns what entry o got back into its overlay: GPUs back at a
// full 1000 are whole-free when healthy and not nominated for a job the gang
// may not displace (shareMask); others keep their milli for sharing (written
// to ms when fracs: the request has fractional pods; else ms is zeroed). It
// returns the whole GPUs gained and the milli returned on GPUs that stay
// partly used.
func (v *Solver) finishRel(o *hostOv, got relGot, ms *gpuMilli, fracs bool) (gpus, milli int64) {
	s := v.s
	h := o.h
	share := v.relShare(h)
	full := s.HostUnusedMask(h) | got.whole
	lo, _ := v.t.HostGPUs(h)
	for u := got.frac; u != 0; u &= u - 1 {
		i := bits.TrailingZeros64(u)
		back := ms[i]
		switch {
		case int(back)+s.GPUMilli(lo+topology.GPUID(i)) == topology.FullGPU:
			full |= 1 << uint(i)
		case share&(1<<uint(i)) != 0:
			milli += int64(back)
		}
	}
	o.mask = full & share
	if fracs {
		v.finishMilli(o, ms, share)
	} else {
		for u := got.frac; u != 0; u &= u - 1 {
			ms[bits.TrailingZeros64(u)] = 0
		}
	}
	o.others = v.r.Exclusive && v.othersStay(h)
	return int64(popcount(o.mask &^ s.HostFreeMask(h))), milli
}

// relShare is shareMask for a released host, or, when the State has no
// failed GPU, no unhealthy host and no nomination (v.relAll, checked once
// per release), every bit: finishRel and finishMilli only test it on the
// host's GPUs, which the host's GPUs all pass then.
func (v *Solver) relShare(h topology.HostID) uint64 {
	if !v.relAll || v.legacy {
		return v.shareMask(h)
	}
	return ^uint64(0)
}

// finishMilli writes entry o's free milli per GPU to ms: none on GPUs the
// gang may not use, a full GPU on whole-free ones, else the State's plus
// what came back.
func (v *Solver) finishMilli(o *hostOv, ms *gpuMilli, share uint64) {
	lo, _ := v.t.HostGPUs(o.h)
	for i := range v.t.HostGPUCount(o.h) {
		bit := uint64(1) << uint(i)
		switch {
		case share&bit == 0:
			ms[i] = 0
		case o.mask&bit != 0:
			ms[i] = topology.FullGPU
		default: // ms[i] is what came back (0 off frac)
			ms[i] += uint16(v.s.GPUMilli(lo + topology.GPUID(i)))
		}
	}
}

// fracSets reports whether a pod set of the request asks for a GPU fraction.
func (v *Solver) fracSets() bool {
	for i := range v.r.Sets {
		if v.r.Sets[i].Milli > 0 {
			return true
		}
	}
	return false
}

// resSets reports whether a pod set of the request asks for CPU or memory,
// the only reason to read an overlay's cpu and mem.
func (v *Solver) resSets() bool {
	for i := range v.r.Sets {
		if v.r.Sets[i].CPUMilli > 0 || v.r.Sets[i].MemoryMiB > 0 {
			return true
		}
	}
	return false
}

// othersStay reports whether a job that is not gone has pods on host h.
func (v *Solver) othersStay(h topology.HostID) bool {
	v.relJobs = v.s.AppendHostJobs(v.relJobs[:0], h)
	for _, j := range v.relJobs {
		if !v.isGone(j) {
			return true
		}
	}
	return false
}

// isGone reports whether job j is one of the jobs placed around.
// O(log gone); only exclusive holds and exclusive requests ask.
func (v *Solver) isGone(j topology.JobID) bool {
	_, ok := slices.BinarySearch(v.gone, j)
	return ok
}

// relGain sums what released hosts in [lo, hi) gained, in pods-worth terms
// for the current set: whole GPUs, and for fractions the returned milli.
// O(1) for many released hosts, else O(log released hosts).
func (v *Solver) relGain(lo, hi topology.HostID) (gpus, milli int64) {
	if len(v.rel) == 0 {
		return 0, 0
	}
	a := v.relSearch(lo)
	b := v.relSearch(hi)
	if len(v.relSumM) != 0 {
		milli = v.relSumM[b] - v.relSumM[a]
	}
	return v.relSum[b] - v.relSum[a], milli
}

// installRel puts the released overlays in place for a new attempt, at the
// front of v.ov (and, for requests with fractional pods, their milli per GPU
// at the front of v.ovMilli). Slots there that already hold the overlay (the
// last install left it, and the last attempt did not take from it, or an
// earlier call released the same host alike) are not rewritten. Within a
// call (v.relKept) for a request without fractional pods an attempt changes
// a released overlay only by taking GPUs, CPU or memory from it, so
// comparing those suffices; otherwise slots are compared whole.
func (v *Solver) installRel() {
	if len(v.rel) != 0 { // small enough to inline into reset: most calls release nothing
		v.installRelHosts()
	}
}

// installRelHosts is installRel for one released host or more.
func (v *Solver) installRelHosts() {
	n := len(v.rel)
	if v.milli && len(v.ovMilli) < n { // never shorter than ov
		v.ovMilli = slices.Grow(v.ovMilli, n-len(v.ovMilli))[:n]
	}
	if v.legacy || cap(v.ov) < n {
		v.ov = slices.Grow(v.ov, n)
		for i := range v.rel {
			v.ov = append(v.ov, v.rel[i])
			h := v.rel[i].h
			v.ovIdx[h], v.ovStamp[h] = int32(len(v.ov)-1), v.epoch
		}
		if v.fracs { // else relMilli may be short, and no pod reads milli
			copy(v.ovMilli, v.relMilli[:n])
		}
		v.relKept = true
		return
	}
	v.ov = v.ov[:n]
	if !v.fracs {
		v.installRelWhole()
		return
	}
	for i := range v.rel {
		o, r := &v.ov[i], &v.rel[i]
		if *o != *r || v.ovMilli[i] != v.relMilli[i] {
			*o, v.ovMilli[i] = *r, v.relMilli[i]
		}
		v.ovIdx[r.h], v.ovStamp[r.h] = int32(i), v.epoch
	}
	v.relKept = true
}

// installRelWhole is installRelHosts for a request without fractional pods:
// nothing reads an overlay's milli per GPU then (only fractional pods do),
// so only the overlays are written, and within a call (v.relKept) only
// those whose GPUs, CPU or memory an attempt took.
func (v *Solver) installRelWhole() {
	if v.relPlaced {
		v.installPlaced()
		return
	}
	kept, stamp := v.relKept, len(v.relOrder) == 0 // a dense release's hosts are found by its bitmap (ovAt)
	for i := range v.rel {
		o, r := &v.ov[i], &v.rel[i]
		if !kept || o.mask != r.mask || o.cpu != r.cpu || o.mem != r.mem {
			*o = *r
		}
		if stamp {
			v.ovIdx[r.h], v.ovStamp[r.h] = int32(i), v.epoch
		}
	}
	v.relKept = true
}

// installPlaced is installRelWhole when wholeEntries already wrote the
// overlays to v.ov (relPlaced, consumed here): nothing is left to write,
// ovAt finding them by the bitmap of released hosts (relOrder) wholeEntries
// built.
func (v *Solver) installPlaced() {
	v.relPlaced, v.relKept = false, true
}
