package topology

import "unsafe"

// MemoryBytes reports the heap bytes the State's own tables hold, in two
// parts, each the sum of cap·element size of its slices (the Tree, shared by
// every State built on it, is not counted; neither are slice headers nor the
// undo journal's scratch buffers, which are bounded by the largest Delta
// applied):
//
//   - topo: the per-GPU, per-host and per-domain arrays — the free-mask, the
//     unused, partly used, failed and nominated bits, free milli-GPU, host
//     flags, CPU, memory, generations, pod list heads, free counts, idle bits,
//     and every per-domain aggregate. It depends only on the Tree: divide it by
//     Tree.NumGPUs() for bytes per GPU.
//   - jobs: the job table (sized to the largest job id seen), the pod arena
//     (live pods plus free slots, which it keeps after jobs leave), the pod
//     sets copied from Job.Sets (and room for new records' sets), and the nominations with their GPU lists.
//
// O(jobs + nominations): it visits each record for its pod sets and GPUs.
func (s *State) MemoryBytes() (topo, jobs int) {
	topo = bytesOf(s.unused) + bytesOf(s.partial) + bytesOf(s.failed) + bytesOf(s.nominated) +
		bytesOf(s.milli) +
		bytesOf(s.hostFlags) + bytesOf(s.hostCPU) + bytesOf(s.hostMem) + bytesOf(s.hostGen) +
		bytesOf(s.hostPods)
	a := &s.agg
	topo += bytesOf(a.freeW) + bytesOf(a.hostFree) + bytesOf(a.hostCap) + bytesOf(a.hostShared) + bytesOf(a.hostPart) + bytesOf(a.idleHostW) +
		bytesOf(a.domFree) + bytesOf(a.domCap) + bytesOf(a.domIdle) + bytesOf(a.domModel) +
		bytesOf(a.domHist) + bytesOf(a.domPre) + bytesOf(a.domExcl) + bytesOf(a.domShared) + bytesOf(a.domPart)
	for _, w := range a.idleW {
		topo += bytesOf(w)
	}

	jobs = bytesOf(s.jobs) + bytesOf(s.pods) + bytesOf(s.noms) + s.jobView.bytes() +
		bytesOf(s.setRoom[len(s.setRoom):]) // the records own what was carved from it
	for i := range s.jobs {
		jobs += bytesOf(s.jobs[i].info.Sets)
	}
	for i := range s.noms {
		jobs += bytesOf(s.noms[i].GPUs)
	}
	return topo, jobs
}

// bytesOf is the size of a slice's backing array: cap·element size.
func bytesOf[T any](s []T) int {
	var zero T
	return cap(s) * int(unsafe.Sizeof(zero))
}
