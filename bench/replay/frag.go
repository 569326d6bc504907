package replay

import (
	"github.com/blinksched/blink/bench/openb"
	"github.com/blinksched/blink/topology"
)

// frag keeps the fragmentation metric incrementally: per host its free
// milli-GPU and the part of it pods of the common request cannot use,
// recomputed for the hosts a placement or a departure touches.
type frag struct {
	s           *topology.State
	t           *topology.Tree
	gpus, milli int32   // the common request: g whole GPUs, or m milli
	free, frag  []int64 // per host
	totFree     int64
	totFrag     int64
}

func (f *frag) init(c *openb.Cluster, s *topology.State, gpus, milli int32) {
	f.s, f.t, f.gpus, f.milli = s, c.Tree, gpus, milli
	n := c.Tree.NumHosts()
	f.free, f.frag = make([]int64, n), make([]int64, n)
	for h := range n {
		f.host(topology.HostID(h))
	}
}

// host recomputes host h's share.
func (f *frag) host(h topology.HostID) {
	f.totFree -= f.free[h]
	f.totFrag -= f.frag[h]
	var free, usable int64
	unused := 0
	if f.s.HostHealth(h) == topology.Healthy {
		lo, hi := f.t.HostGPUs(h)
		for g := lo; g < hi; g++ {
			if f.s.GPUFailed(g) {
				continue
			}
			m := int64(f.s.GPUMilli(g))
			free += m
			if m == topology.FullGPU {
				unused++
			}
			if f.milli > 0 {
				usable += m / int64(f.milli) * int64(f.milli)
			}
		}
		if f.milli == 0 {
			usable = int64(unused/int(f.gpus)*int(f.gpus)) * topology.FullGPU
		}
	}
	f.free[h], f.frag[h] = free, free-usable
	f.totFree += free
	f.totFrag += free - usable
}

// update recomputes the hosts of pods.
func (f *frag) update(pods []topology.Pod) {
	for _, p := range pods {
		f.host(p.Host)
	}
}

// percent is the fragmentation now: unusable over free milli-GPU, in
// percent (0 when nothing is free).
func (f *frag) percent() float64 {
	if f.totFree == 0 {
		return 0
	}
	return float64(f.totFrag) * 100 / float64(f.totFree)
}
