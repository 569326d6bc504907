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
	slices.SortFunc(v.rel, func(a, b relHost) int { return int(a.ov.h - b.ov.h) })
}

// relFor returns host h's released entry, creating it with the host's free
// milli per GPU as the State has it.
func (v *Solver) relFor(h topology.HostID) *relHost {
	for i := range v.rel {
		if v.rel[i].ov.h == h {
			return &v.rel[i]
		}
	}
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
	for i := range v.rel {
		if h := v.rel[i].ov.h; h >= lo && h < hi {
			gpus += v.rel[i].gainGPUs
			milli += v.rel[i].gainMilli
		}
	}
	return gpus, milli
}

// installRel puts the released overlays in place for a new attempt.
func (v *Solver) installRel() {
	for i := range v.rel {
		v.ov = append(v.ov, v.rel[i].ov)
		h := v.rel[i].ov.h
		v.ovIdx[h], v.ovStamp[h] = int32(len(v.ov)-1), v.epoch
	}
}
