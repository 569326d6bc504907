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
		if room := cap(s.setRoom) - len(s.setRoom); room < jobs {
			s.setRoom = make([]PodSet, 0, max(jobs, 2*cap(s.setRoom)))
		}
	}
}

// setChunk is how many job records' set storage appendJobRecs allocates at
// once.
const setChunk = 1024

// appendJobRecs appends n records of absent job ids, each with storage for
// one pod set carved from s.setRoom: adding a job of one pod set to a new
// id then allocates nothing, journaled or not (ownSets). The storage stays
// the record's for the State's life, as the record does. The records are
// written in place, the set storage carved a run at a time: an Engine's
// first cycle appends thousands, one new id after another.
func (s *State) appendJobRecs(n int) {
	jobs := slices.Grow(s.jobs, n)
	for i, hi := len(jobs), len(jobs)+n; i < hi; {
		if len(s.setRoom) == cap(s.setRoom) {
			s.setRoom = make([]PodSet, 0, setChunk)
		}
		lo := len(s.setRoom)
		k := min(hi-i, cap(s.setRoom)-lo)
		room := s.setRoom[lo : lo+k]
		s.setRoom = s.setRoom[:lo+k]
		jobs = jobs[:i+k]
		for j := range room {
			jobs[i+j] = jobRec{first: -1, last: -1, nom: -1, info: Job{Sets: room[j : j : j+1]}}
		}
		i += k
	}
	s.jobs = jobs
}
