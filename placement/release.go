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

// relHost is a released host: its overlay and what it gained.
type relHost struct {
	ov        hostOv
	gainGPUs  int64 // whole GPUs free for the gang that were not before
	gainMilli int64 // milli returned on GPUs that stay partly used
}

// release builds the base overlays for jobs gone. gone must be sorted.
func (v *Solver) release(gone []topology.JobID) {
	v.rel, v.gone = v.rel[:0], gone
	if len(gone) == 0 {
		v.relSum = v.relSum[:0]
		return
	}
	v.relEpoch++
	if v.relEpoch == 0 {
		clear(v.relStamp)
		v.relEpoch = 1
	}
	var pods []topology.Pod
	for _, j := range gone {
		pods = v.s.AppendJobPods(v.relPods[:0], j)
		v.relPods = pods
		for _, p := range pods {
			v.relFor(p.Host).add(v, p)
		}
	}
	for i := range v.rel {
		v.finishRel(&v.rel[i])
	}
	v.sortRel()
	v.relSum = append(v.relSum[:0], [2]int64{})
	for i := range v.rel { // prefix sums of the gains, for relGain's range queries
		last := v.relSum[len(v.relSum)-1]
		v.relSum = append(v.relSum, [2]int64{last[0] + v.rel[i].gainGPUs, last[1] + v.rel[i].gainMilli})
	}
}

// relFor returns host h's released entry, creating it with the host's free
// milli per GPU as the State has it. O(1): entries are found through a
// per-host index stamped with the call's epoch.
func (v *Solver) relFor(h topology.HostID) *relHost {
	if v.relStamp[h] == v.relEpoch {
		return &v.rel[v.relIdx[h]]
	}
	v.relStamp[h], v.relIdx[h] = v.relEpoch, int32(len(v.rel))
	v.rel = append(v.rel, relHost{ov: hostOv{h: h, cpu: v.s.HostCPU(h), mem: v.s.HostMemory(h)}})
	r := &v.rel[len(v.rel)-1]
	lo, _ := v.t.HostGPUs(h)
	for i := range v.t.HostGPUCount(h) {
		r.ov.milli[i] = uint16(v.s.GPUMilli(lo + topology.GPUID(i)))
	}
	return r
}

// add returns pod p's resources to the entry.
func (r *relHost) add(v *Solver, p topology.Pod) {
	for m := p.GPUs; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		if p.Milli == 0 {
			r.ov.milli[i] = topology.FullGPU
		} else {
			r.ov.milli[i] += uint16(p.Milli)
		}
	}
	r.ov.cpu += p.CPUMilli
	r.ov.mem += p.MemoryMiB
}

// finishRel turns returned milli into the overlay's masks: GPUs back at a full
// 1000 are whole-free when healthy and not nominated for a job the gang may
// not displace; others keep their milli for sharing.
func (v *Solver) finishRel(r *relHost) {
	h := r.ov.h
	share := v.shareMask(h)
	before := v.s.HostFreeMask(h)
	lo, _ := v.t.HostGPUs(h)
	for i := range v.t.HostGPUCount(h) {
		bit := uint64(1) << uint(i)
		switch {
		case share&bit == 0:
			r.ov.milli[i] = 0
		case r.ov.milli[i] == topology.FullGPU:
			r.ov.mask |= bit
		default:
			r.gainMilli += int64(r.ov.milli[i]) - int64(v.s.GPUMilli(lo+topology.GPUID(i)))
		}
	}
	r.gainGPUs = int64(popcount(r.ov.mask &^ before))
	r.ov.others = false
	for _, j := range v.s.AppendHostJobs(v.relJobs[:0], h) {
		if !v.isGone(j) {
			r.ov.others = true
		}
	}
}

// isGone reports whether job j is one of the jobs placed around.
func (v *Solver) isGone(j topology.JobID) bool {
	_, ok := slices.BinarySearch(v.gone, j)
	return ok
}

// relGain sums what released hosts in [lo, hi) gained, in pods-worth terms
// for the current set: whole GPUs, and for fractions the returned milli.
func (v *Solver) relGain(lo, hi topology.HostID) (gpus, milli int64) {
	if len(v.rel) == 0 {
		return 0, 0
	}
	a := v.relSearch(lo)
	b := v.relSearch(hi)
	return v.relSum[b][0] - v.relSum[a][0], v.relSum[b][1] - v.relSum[a][1]
}

// relSearch is the number of released hosts below host h (rel is sorted).
func (v *Solver) relSearch(h topology.HostID) int {
	lo, hi := 0, len(v.rel)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if v.rel[m].ov.h < h {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// installRel puts the released overlays in place for a new attempt.
func (v *Solver) installRel() {
	for i := range v.rel {
		v.ov = append(v.ov, v.rel[i].ov)
		h := v.rel[i].ov.h
		v.ovIdx[h], v.ovStamp[h] = int32(len(v.ov)-1), v.epoch
	}
}

// sortRel orders the released hosts by host id. Entries are large (a host's
// milli per GPU), so it sorts host ids, then copies each entry once.
func (v *Solver) sortRel() {
	if slices.IsSortedFunc(v.rel, func(a, b relHost) int { return int(a.ov.h - b.ov.h) }) {
		return
	}
	v.relOrder = v.relOrder[:0]
	for i := range v.rel {
		v.relOrder = append(v.relOrder, int64(v.rel[i].ov.h)<<32|int64(i))
	}
	slices.Sort(v.relOrder)
	v.relTmp = v.relTmp[:0]
	for _, k := range v.relOrder {
		v.relTmp = append(v.relTmp, v.rel[int32(k)])
	}
	v.rel, v.relTmp = v.relTmp, v.rel
}
