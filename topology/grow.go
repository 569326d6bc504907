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

// setChunk is how many job records' set storage newJobRec allocates at once.
const setChunk = 1024

// newJobRec returns the record of an absent job id, with storage for one
// pod set carved from s.setRoom: adding a job of one pod set to a new id
// then allocates nothing, journaled or not (ownSets). The storage stays the
// record's for the State's life, as the record does.
func (s *State) newJobRec() jobRec {
	if len(s.setRoom) == cap(s.setRoom) {
		s.setRoom = make([]PodSet, 0, setChunk)
	}
	n := len(s.setRoom)
	s.setRoom = s.setRoom[:n+1]
	return jobRec{first: -1, last: -1, nom: -1, info: Job{Sets: s.setRoom[n : n : n+1]}}
}
