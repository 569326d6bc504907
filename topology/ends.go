package topology

import "fmt"

// The count of live jobs with an expected end (Job.HasEnd). A reader that
// ranks hosts by when their jobs end (an engine's reservation) learns from
// it, in O(1), that no job has one, and need not read the jobs' records. addJob and
// removeJob keep it, with journaled writes; Check recounts it.

// countEnd adds delta (±1) for live job id, if it has an expected end.
func (s *State) countEnd(id JobID, delta int32) {
	if s.jobs[id].info.HasEnd {
		s.w32(&s.endJobs, s.endJobs+delta)
	}
}

// JobsWithEnd returns how many live jobs have an expected end (Job.HasEnd).
// O(1).
func (s *State) JobsWithEnd() int { return int(s.endJobs) }

// checkEnds recounts the live jobs with an expected end.
func (s *State) checkEnds() error {
	var want int32
	for j := range s.jobs {
		if s.jobs[j].live && s.jobs[j].info.HasEnd {
			want++
		}
	}
	if want != s.endJobs {
		return fmt.Errorf("check: %d jobs with an expected end counted, job table has %d", s.endJobs, want)
	}
	return nil
}
