package defrag

import (
	"math/bits"

	"github.com/blinksched/blink/topology"
)

// Moves are planned without copying the State: a move's new pods are found
// by Solver.PlaceWithout on the State as it is, as if the jobs moved so far
// (and the one being moved) were gone. The solver does not see the new pods
// of the earlier moves, so the planner keeps them itself, per host, and
// re-fits a new move's pods on every host an earlier move landed on: the pods
// keep their host (so the job's required level and slices still hold) and
// take GPUs free in the State the earlier moves leave — the solver's GPUs
// when still free, else the lowest free ones (a fraction: the GPU with the
// least free milli that holds it). A host that cannot take them is closed to
// this move and the solver asked again.

// vhost is one host as the moves planned so far leave it.
type vhost struct {
	milli  [topology.MaxHostGPUs]int32 // free milli per GPU
	usable uint64                      // healthy and not nominated GPUs
	cpu    int32
	mem    int32
	others bool // pods of jobs other than the one being re-fitted
	excl   bool // held exclusively by a job (moved there, or staying)
}

// buildVHost computes host h as the State leaves it once the jobs gone have
// released their pods and the moves land their new pods (moves[i] for i <
// upto).
func (p *Planner) buildVHost(h topology.HostID, gone []topology.JobID, upto int, vh *vhost) {
	s, t := p.s, p.t
	lo, _ := t.HostGPUs(h)
	n := t.HostGPUCount(h)
	*vh = vhost{cpu: s.HostCPU(h), mem: s.HostMemory(h)}
	all := uint64(1)<<uint(n) - 1
	if n == 64 {
		all = ^uint64(0)
	}
	vh.usable = all &^ s.HostFailedMask(h) &^ s.HostNominatedMask(h)
	for i := range n {
		vh.milli[i] = int32(s.GPUMilli(lo + topology.GPUID(i)))
	}
	p.hostPods = s.AppendHostPods(p.hostPods[:0], h)
	for _, hp := range p.hostPods {
		if isIn(gone, hp.Job) {
			vh.release(&hp.Pod)
			continue
		}
		vh.others = true
		if info, _ := s.JobInfo(hp.Job); info.Exclusive {
			vh.excl = true
		}
	}
	for i := range upto {
		mv := &p.seq[i]
		for _, pod := range p.seqPods[mv.off : mv.off+mv.n] {
			if pod.Host == h {
				vh.take(&pod)
				vh.others = true
				vh.excl = vh.excl || p.moverOf(mv.job).info.Exclusive
			}
		}
	}
}

func (vh *vhost) release(pod *topology.Pod) {
	for m := pod.GPUs; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		if pod.Milli == 0 {
			vh.milli[i] = topology.FullGPU
		} else {
			vh.milli[i] += pod.Milli
		}
	}
	vh.cpu += pod.CPUMilli
	vh.mem += pod.MemoryMiB
}

func (vh *vhost) take(pod *topology.Pod) {
	for m := pod.GPUs; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		if pod.Milli == 0 {
			vh.milli[i] = 0
		} else {
			vh.milli[i] -= pod.Milli
		}
	}
	vh.cpu -= pod.CPUMilli
	vh.mem -= pod.MemoryMiB
}

// wholeFree is the mask of GPUs free for whole-GPU pods.
func (vh *vhost) wholeFree(n int) uint64 {
	var m uint64
	for i := range n {
		if vh.milli[i] == topology.FullGPU {
			m |= 1 << uint(i)
		}
	}
	return m & vh.usable
}

// fit re-fits pod (of a job with attribute exclusive) on vh, changing its
// GPUs if needed, and takes it; false if it cannot fit.
func (vh *vhost) fit(pod *topology.Pod, n int, exclusive bool) bool {
	if vh.excl || exclusive && vh.others || pod.CPUMilli > vh.cpu || pod.MemoryMiB > vh.mem {
		return false
	}
	if pod.Milli == 0 {
		free := vh.wholeFree(n)
		if pod.GPUs&^free != 0 {
			k := bits.OnesCount64(pod.GPUs)
			if bits.OnesCount64(free) < k {
				return false
			}
			var m uint64
			for range k {
				m |= free & -free
				free &= free - 1
			}
			pod.GPUs = m
		}
	} else {
		i := bits.TrailingZeros64(pod.GPUs)
		if vh.usable&pod.GPUs == 0 || vh.milli[i] < pod.Milli {
			best := -1
			for u := vh.usable; u != 0; u &= u - 1 {
				j := bits.TrailingZeros64(u)
				if vh.milli[j] >= pod.Milli && (best < 0 || vh.milli[j] < vh.milli[best]) {
					best = j
				}
			}
			if best < 0 {
				return false
			}
			pod.GPUs = 1 << uint(best)
		}
	}
	vh.take(pod)
	return true
}

// isIn reports whether id is in the sorted list ids.
func isIn(ids []topology.JobID, id topology.JobID) bool {
	lo, hi := 0, len(ids)
	for lo < hi {
		m := (lo + hi) / 2
		if ids[m] < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(ids) && ids[lo] == id
}

func popcount(m uint64) int { return bits.OnesCount64(m) }

func trailing(m uint64) int { return bits.TrailingZeros64(m) }
