package placement

import (
	"fmt"

	"github.com/blinksched/blink/topology"
)

// Releasing pods the caller gathered (PlaceWithoutPods): the same overlays
// release builds from the pods it reads, built from the caller's.

// releasePods builds the base overlays for jobs gone (sorted) from pods,
// their pods, checking each (podOK) in the pass that reads it. pods is only
// read: the general build works on a copy.
func (v *Solver) releasePods(gone []topology.JobID, pods []topology.Pod) error {
	if !v.releaseStart(gone) {
		return nil
	}
	v.relBad = -1
	if len(pods)*8 >= relWords(v.t) && v.wholeApplies() { // dense and whole: one pass over them
		v.wholeBegin()
		count, ok := v.wholeAdd(pods, 0, true)
		if ok {
			v.wholeEnd(count)
			return nil
		}
		if v.relBad >= 0 {
			return v.podErr(v.relBad, &pods[v.relBad])
		}
	}
	for i := range pods {
		if !v.podOK(&pods[i]) {
			return v.podErr(i, &pods[i])
		}
	}
	v.relPods = append(v.relPods[:0], pods...)
	v.buildRel(v.denseRel())
	return nil
}

// checkGoneCount checks that pods are as many as the jobs gone have.
func checkGoneCount(s *topology.State, gone []topology.JobID, pods []topology.Pod) error {
	counts, n := s.JobPodCounts(), 0
	for _, j := range gone {
		if j >= 0 && int(j) < len(counts) {
			n += int(counts[j])
		}
	}
	if n != len(pods) {
		return fmt.Errorf("%w: %d pods given for jobs gone that have %d", ErrInvalid, len(pods), n)
	}
	return nil
}

// podOK reports whether pod p names a host of the tree and GPUs of it (none
// for a pod of CPU and memory only), and one GPU for a fraction of 1…999
// milli.
func (v *Solver) podOK(p *topology.Pod) bool {
	if p.Host < 0 || int(p.Host) >= v.t.NumHosts() {
		return false
	}
	k := v.uniGPUs
	if k == 0 {
		k = v.t.HostGPUCount(p.Host)
	}
	one := p.GPUs != 0 && p.GPUs&(p.GPUs-1) == 0
	return (k >= 64 || p.GPUs>>uint(k) == 0) && p.Milli >= 0 && p.Milli < topology.FullGPU && (p.Milli == 0 || one)
}

// podErr is the error for pod i of the jobs gone, p, which is not podOK.
func (v *Solver) podErr(i int, p *topology.Pod) error {
	if p.Host < 0 || int(p.Host) >= v.t.NumHosts() {
		return fmt.Errorf("%w: pod %d of the jobs gone: host %d out of range", ErrInvalid, i, p.Host)
	}
	return fmt.Errorf("%w: pod %d of the jobs gone: GPUs %#x, milli %d on host %d of %d GPUs",
		ErrInvalid, i, p.GPUs, p.Milli, p.Host, v.t.HostGPUCount(p.Host))
}
