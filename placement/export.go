package placement

import (
	"math/bits"

	"github.com/blinksched/blink/topology"
)

// Assignment is one pod of a Plan as a binder needs it: the host by name and
// the host's GPU indices (device i of the host is GPU i, as the Tree numbers
// them), in rank order.
type Assignment struct {
	Rank int // position in the gang, 0…len(Plan.Pods)-1
	Set  int // index of the pod set (Request.Sets) the pod belongs to
	Host string
	GPUs []int // ascending; empty for a CPU-only pod
	// Milli is 0 for whole GPUs, else the pod's 1…999 milli-GPU share of
	// its one GPU.
	Milli               int32
	CPUMilli, MemoryMiB int32
}

// Assignments returns the plan's pods in rank order by host name and GPU
// index, for binding; t is the Tree the plan was made on. The GPU slices
// share one backing array. O(pods + GPUs); it allocates the result.
func (p *Plan) Assignments(t *topology.Tree) []Assignment {
	out := make([]Assignment, len(p.Pods))
	n := 0
	for i := range p.Pods {
		n += bits.OnesCount64(p.Pods[i].GPUs)
	}
	gpus := make([]int, 0, n)
	set, left := 0, -1
	if len(p.Info.Sets) > 0 {
		left = int(p.Info.Sets[0].Count)
	}
	for i := range p.Pods {
		pod := &p.Pods[i]
		for left == 0 && set+1 < len(p.Info.Sets) {
			set++
			left = int(p.Info.Sets[set].Count)
		}
		left--
		start := len(gpus)
		for m := pod.GPUs; m != 0; m &= m - 1 {
			gpus = append(gpus, bits.TrailingZeros64(m))
		}
		out[i] = Assignment{Rank: i, Set: set, Host: t.HostName(pod.Host), GPUs: gpus[start:len(gpus):len(gpus)],
			Milli: pod.Milli, CPUMilli: pod.CPUMilli, MemoryMiB: pod.MemoryMiB}
	}
	return out
}
