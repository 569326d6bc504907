package topology

import "slices"

// Grow makes room for at least pods more pods and jobs more job ids (beyond
// JobIDBound) without reallocating: Apply grows its tables by half their
// size when they are full, copying them, which at a million GPUs is a
// pause of milliseconds. An embedder that knows its peak (after restoring a
// snapshot, say) calls Grow once. Negative counts are treated as 0; Grow
// changes nothing Apply, Check or MarshalBinary can see.
func (s *State) Grow(pods, jobs int) {
	if free := len(s.pods) - int(s.nPods); pods > free {
		s.growPods(pods - free)
	}
	if jobs > 0 {
		s.jobs = slices.Grow(s.jobs, jobs)
		s.reserveJobView(jobs)
	}
}
