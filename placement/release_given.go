package placement

import (
	"fmt"

	"github.com/blinksched/blink/topology"
)

// Releasing pods the caller gathered (PlaceWithoutPods): the same overlays
// release builds from the pods it reads, built from the caller's.

// releasePods builds the base overlays for jobs gone (sorted) from pods,
// their pods. pods is only read: the general build works on a copy.
func (v *Solver) releasePods(gone []topology.JobID, pods []topology.Pod) {
	if !v.releaseStart(gone) {
		return
	}
	if len(pods)*8 >= relWords(v.t) && v.wholeApplies() { // dense and whole: one pass over them
		v.wholeBegin()
		if count, ok := v.wholeAdd(pods, 0); ok {
			v.wholeEnd(count)
			return
		}
	}
	v.relPods = append(v.relPods[:0], pods...)
	v.buildRel(v.denseRel())
}

// checkGonePods checks that pods are as many as the jobs gone have, and
// that each names a host of the tree and GPUs of it (none for a pod of CPU
// and memory only), and one GPU for a fraction of 1…999 milli.
func checkGonePods(s *topology.State, gone []topology.JobID, pods []topology.Pod) error {
	counts, n := s.JobPodCounts(), 0
	for _, j := range gone {
		if j >= 0 && int(j) < len(counts) {
			n += int(counts[j])
		}
	}
	if n != len(pods) {
		return fmt.Errorf("%w: %d pods given for jobs gone that have %d", ErrInvalid, len(pods), n)
	}
	t := s.Tree()
	uni := t.UniformHostGPUs()
	for i := range pods {
		p := &pods[i]
		if p.Host < 0 || int(p.Host) >= t.NumHosts() {
			return fmt.Errorf("%w: pod %d of the jobs gone: host %d out of range", ErrInvalid, i, p.Host)
		}
		k := uni
		if k == 0 {
			k = t.HostGPUCount(p.Host)
		}
		one := p.GPUs != 0 && p.GPUs&(p.GPUs-1) == 0
		bad := k < 64 && p.GPUs>>uint(k) != 0 || p.Milli < 0 || p.Milli >= topology.FullGPU
		if bad || p.Milli > 0 && !one {
			return fmt.Errorf("%w: pod %d of the jobs gone: GPUs %#x, milli %d on host %d of %d GPUs",
				ErrInvalid, i, p.GPUs, p.Milli, p.Host, k)
		}
	}
	return nil
}
