package placement

import (
	"math/bits"

	"github.com/blinksched/blink/topology"
)

// The capacity-loss score of a Profile (profile.go): what one host holds for
// the typical shapes, and what a pod placed on it destroys.

// hostView is a host as a one-pod request of the profile path sees it: the
// whole GPUs it may take (mask), the free milli of each GPU a fraction may
// use (0 for GPUs it may not), free CPU and memory.
type hostView struct {
	model    int
	n        int
	mask     uint64
	cpu, mem int64
	free     int64 // Σ milli: free milli-GPU, for the tie-break
	milli    [topology.MaxHostGPUs]uint16
}

// viewHost fills hv with host h as the current request sees it, from the
// State (no overlay: the profile path places one pod).
func (v *Solver) viewHost(h topology.HostID, hv *hostView) {
	hv.model, hv.n = v.t.HostModel(h), v.t.HostGPUCount(h)
	hv.mask = v.baseMask(h)
	hv.cpu, hv.mem = int64(v.s.HostCPU(h)), int64(v.s.HostMemory(h))
	hv.free = 0
	clear(hv.milli[:hv.n])
	lo, _ := v.t.HostGPUs(h)
	for u := v.shareMask(h); u != 0; u &= u - 1 {
		i := bits.TrailingZeros64(u)
		m := uint16(v.s.GPUMilli(lo + topology.GPUID(i)))
		if m == topology.FullGPU && hv.mask&(1<<uint(i)) == 0 {
			m = 0 // a whole GPU that is not free cannot be shared either
		}
		hv.milli[i] = m
		hv.free += int64(m)
	}
}

// tieKey is the tie-break of equal losses: free CPU + 16 × free milli-GPU
// (the FGD paper's BestFit score, up to a constant for a given pod).
func (hv *hostView) tieKey() int64 { return hv.cpu + 16*hv.free }

// groupCaps writes, per GPU group of p, how many pods of that GPU shape the
// host's GPUs hold (CPU and memory aside).
func (p *profile) groupCaps(hv *hostView, gc []int64) {
	u := int64(bits.OnesCount64(hv.mask))
	for g, gr := range p.groups {
		if gr.milli == 0 {
			gc[g] = u / int64(gr.num)
			continue
		}
		n := int64(0)
		for _, m := range hv.milli[:hv.n] {
			n += int64(m / uint16(gr.milli))
		}
		gc[g] = n
	}
}

// value is Σ_m W(m)·cap(m) for GPU group capacities gc and free CPU and
// memory on a host of model.
func (p *profile) value(gc []int64, model int, cpu, mem int64) int64 {
	val := int64(0)
	for _, i := range p.byM[model] {
		ty := &p.types[i]
		if n := gc[ty.g]; n > 0 {
			val += ty.w * resCap(n, cpu, mem, ty)
		}
	}
	return val
}

// profScratch holds the group capacities of the evaluations.
type profScratch struct {
	gc, after []int64
}

// size makes the scratch fit p.
func (sc *profScratch) size(p *profile) {
	if len(sc.gc) != len(p.groups) {
		sc.gc, sc.after = make([]int64, len(p.groups)), make([]int64, len(p.groups))
	}
}

// lossFrom is the capacity the current (one-pod) set destroys on the host
// hv describes, whose value before is known, with the GPU a fraction takes
// (-1 for others): the GPU of least loss, ties to least free milli, then
// lowest index. ok is false if the pod does not fit the host's GPUs.
func (v *Solver) lossFrom(hv *hostView, before int64) (loss int64, gpu int, ok bool) {
	p, sc := v.prof, &v.psc
	sc.size(p)
	p.groupCaps(hv, sc.gc)
	return v.lossWith(hv, before, nil)
}

// lossWith is lossFrom with the group capacities gc known (nil: in the
// scratch already).
func (v *Solver) lossWith(hv *hostView, before int64, gc []int32) (loss int64, gpu int, ok bool) {
	p, set, sc := v.prof, v.set, &v.psc
	sc.size(p)
	for g, c := range gc {
		sc.gc[g] = int64(c)
	}
	cpu, mem := hv.cpu-int64(set.CPUMilli), hv.mem-int64(set.MemoryMiB)
	u := int64(bits.OnesCount64(hv.mask))
	switch {
	case set.Milli > 0:
		gpu = -1
		pm := uint16(set.Milli)
		for i, x := range hv.milli[:hv.n] {
			if x < pm || seenBefore(hv.milli[:i], x) {
				continue
			}
			ui := u
			if hv.mask&(1<<uint(i)) != 0 {
				ui--
			}
			v.afterCaps(sc, ui, x, x-pm)
			l := before - p.value(sc.after, hv.model, cpu, mem)
			if gpu < 0 || l < loss || l == loss && x < hv.milli[gpu] {
				loss, gpu = l, i
			}
		}
		return loss, gpu, gpu >= 0
	case set.GPUs > 0:
		g := int64(set.GPUs)
		if u < g {
			return 0, -1, false
		}
		for k, gr := range p.groups {
			if gr.milli == 0 {
				sc.after[k] = (u - g) / int64(gr.num)
			} else {
				sc.after[k] = sc.gc[k] - g*int64(topology.FullGPU/gr.milli)
			}
		}
	default:
		copy(sc.after, sc.gc)
	}
	return before - p.value(sc.after, hv.model, cpu, mem), -1, true
}

// afterCaps writes the group capacities after one GPU's free milli goes
// from x to y, with u whole GPUs left.
func (v *Solver) afterCaps(sc *profScratch, u int64, x, y uint16) {
	for k, gr := range v.prof.groups {
		if gr.milli == 0 {
			sc.after[k] = u / int64(gr.num)
		} else {
			m := uint16(gr.milli)
			sc.after[k] = sc.gc[k] - int64(x/m) + int64(y/m)
		}
	}
}

func seenBefore(ms []uint16, x uint16) bool {
	for _, m := range ms {
		if m == x {
			return true
		}
	}
	return false
}
