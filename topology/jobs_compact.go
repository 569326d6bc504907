package topology

import (
	"fmt"
	"slices"
)

// The compact job view: per job id, the priority, pod count, milli-GPUs,
// size and first pod's host of the live job with that id, and a bit for the
// preemptible ones, in flat arrays a planner scans without touching the job
// table. A job record is
// about a hundred bytes and a cluster of a million GPUs holds hundreds of
// thousands of jobs: a scan for preemption candidates that reads every
// record streams tens of megabytes, one over these arrays four bytes a job.
//
// A job's attributes, pod count and pod shapes change only when it is added
// or removed (moves and replacements keep every pod's shape), so addJob and
// removeJob keep the view, and moveJob and replacePods the first pod's
// host, with journaled writes like every other; removeJob leaves the first
// pod's host, which means nothing once the pod count is 0. Reserve
// grows it with the job table, before any write. Ids the view does not reach
// (the table also grows outside Apply, for absent ids) are absent. Check
// compares it with the job table.

// jobView is the compact job view. Entries of absent ids are zero.
type jobView struct {
	jobPrio     []int32           // the live job's priority
	jobPods     []int32           // its pod count
	jobMilli    []uint64          // the milli-GPUs its pods hold
	jobSizes    []int32           // its size (presize.go)
	jobHost0    []HostID          // the host of its first pod (live jobs only)
	jobPre      []uint64          // bit j: job j is live and preemptible
	movHist     [movBuckets]int32 // movable preemptible jobs by GPUs touched (movable.go)
	endJobs     int32             // live jobs with an expected end (ends.go)
	preSizeHist                   // preemptible jobs by priority and size (presize.go)
	preIndex                      // preemptible jobs by priority bucket and size class, their priorities (preindex.go)
}

// JobPriorities returns, indexed by job id, the priority of each live job (0
// for absent ids); ids at or beyond its length (at most JobIDBound) are
// absent. Read-only, valid until the next Apply. O(1).
func (s *State) JobPriorities() []int32 { return s.jobPrio[:s.viewLen()] }

// JobPodCounts returns, indexed by job id, each live job's pod count (0 for
// absent ids, and only for them); ids at or beyond its length are absent.
// Read-only, valid until the next Apply. O(1).
func (s *State) JobPodCounts() []int32 { return s.jobPods[:s.viewLen()] }

// JobMilliGPUs returns, indexed by job id, the milli-GPUs each live job's
// pods hold (JobMilliGPU; 0 for absent ids); ids at or beyond its length are
// absent. Read-only, valid until the next Apply. O(1).
func (s *State) JobMilliGPUs() []uint64 { return s.jobMilli[:s.viewLen()] }

// JobSizes returns, indexed by job id, each live job's size: a bound on the
// whole GPUs evicting it frees (the GPUs its pods touch; for an exclusive
// job, its pods times the largest host), 0 for absent ids; ids at or beyond
// its length are absent. Read-only, valid until the next Apply. O(1).
func (s *State) JobSizes() []int32 { return s.jobSizes[:s.viewLen()] }

// JobFirstHosts returns, indexed by job id, the host of each live job's
// first pod (rank 0); an entry means nothing where JobPodCounts is 0 (an
// absent id). Read-only, valid until the next Apply. O(1).
func (s *State) JobFirstHosts() []HostID { return s.jobHost0[:s.viewLen()] }

// PreemptibleJobWords returns the words of a bitset over job ids: bit j is
// set when job j is live and preemptible. Ids beyond its bits are absent.
// Read-only, valid until the next Apply. O(1).
func (s *State) PreemptibleJobWords() []uint64 { return s.jobPre[:(s.viewLen()+63)/64] }

// viewLen is the number of job ids the view covers.
func (s *State) viewLen() int { return min(len(s.jobPrio), len(s.jobs)) }

// growJobView extends the view to the job table's length (before any
// journaled write: journal entries point into its arrays), and past it by
// up to viewChunk ids where the arrays have the room: a table that grows
// one id an Apply, as an Engine's does, grows the view once a chunk.
func (s *State) growJobView() {
	n := len(s.jobs)
	if len(s.jobPrio) >= n {
		return
	}
	room := min(cap(s.jobPrio), cap(s.jobPods), cap(s.jobMilli), cap(s.jobSizes), cap(s.jobHost0), 64*cap(s.jobPre))
	n = max(n, min(len(s.jobPrio)+viewChunk, room))
	s.jobPrio = growZero(s.jobPrio, n)
	s.jobPods = growZero(s.jobPods, n)
	s.jobMilli = growZero(s.jobMilli, n)
	s.jobSizes = growZero(s.jobSizes, n)
	s.jobHost0 = growZero(s.jobHost0, n)
	if w := (n + 63) / 64; len(s.jobPre) < w {
		s.jobPre = growZero(s.jobPre, w)
		s.growPreIndex(w)
	}
}

// viewChunk is how many ids past the job table growJobView extends the
// view by at most.
const viewChunk = 256

// growZero extends s to length n with zeros, within its capacity if it can.
func growZero[T any](s []T, n int) []T {
	if n <= cap(s) {
		old := len(s)
		s = s[:n]
		clear(s[old:])
		return s
	}
	return append(s, make([]T, n-len(s))...)
}

// reserveJobView makes room for jobs more ids without reallocating (Grow).
func (s *State) reserveJobView(jobs int) {
	n := max(len(s.jobs)+jobs-len(s.jobPrio), 0) // the view may reach past the table (viewLen)
	s.jobPrio = slices.Grow(s.jobPrio, n)
	s.jobPods = slices.Grow(s.jobPods, n)
	s.jobMilli = slices.Grow(s.jobMilli, n)
	s.jobSizes = slices.Grow(s.jobSizes, n)
	s.jobHost0 = slices.Grow(s.jobHost0, n)
	s.jobPre = slices.Grow(s.jobPre, (n+63)/64+1)
	s.reservePreIndex((n+63)/64 + 1)
}

// setJobView writes live job id's entry from its record, with milli and
// size its pods' sums (podSums), journaled.
func (s *State) setJobView(id JobID, milli, size int64) {
	r := &s.jobs[id]
	if s.jr.on { // one test for the five writes below
		s.journalJobView(id)
	}
	s.jobPrio[id], s.jobPods[id], s.jobMilli[id] = r.info.Priority, r.n, uint64(milli)
	s.jobSizes[id], s.jobHost0[id] = int32(size), s.pods[r.first].Host
	s.setPreBit(id, r.info.Preemptible)
}

// journalJobView journals the old values of job id's entry, all but its
// preemptible bit (setPreBit journals that).
func (s *State) journalJobView(id JobID) {
	s.jr.i32 = append(s.jr.i32, jw[int32]{&s.jobPrio[id], s.jobPrio[id]}, jw[int32]{&s.jobPods[id], s.jobPods[id]},
		jw[int32]{&s.jobSizes[id], s.jobSizes[id]}, jw[int32]{(*int32)(&s.jobHost0[id]), int32(s.jobHost0[id])})
	s.jr.u64 = append(s.jr.u64, jw[uint64]{&s.jobMilli[id], s.jobMilli[id]})
}

// clearJobView zeroes job id's entry as the job goes, journaled; the first
// pod's host stays, meaning nothing once the pod count is 0.
func (s *State) clearJobView(id JobID) {
	s.w32(&s.jobPrio[id], 0)
	s.w32(&s.jobPods[id], 0)
	s.w64(&s.jobMilli[id], 0)
	s.w32(&s.jobSizes[id], 0)
	s.setPreBit(id, false)
}

// setPreBit sets job id's preemptible bit to pre, journaled.
func (s *State) setPreBit(id JobID, pre bool) {
	w, bit := &s.jobPre[id>>6], uint64(1)<<(uint(id)&63)
	if nw := *w&^bit | b2u(pre)*bit; nw != *w {
		s.w64(w, nw)
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// clone copies the view, keeping its spare room (see Grow).
func (v *jobView) clone() jobView {
	return jobView{jobPrio: cloneRoom(v.jobPrio), jobPods: cloneRoom(v.jobPods),
		jobMilli: cloneRoom(v.jobMilli), jobSizes: cloneRoom(v.jobSizes), jobHost0: cloneRoom(v.jobHost0),
		jobPre: cloneRoom(v.jobPre), movHist: v.movHist, endJobs: v.endJobs, preSizeHist: v.preSizeHist,
		preIndex: v.clonePreIndex()}
}

// cloneRoom copies s with its capacity.
func cloneRoom[T any](s []T) []T { return append(make([]T, 0, cap(s)), s...) }

// bytes is the view's share of MemoryBytes.
func (v *jobView) bytes() int {
	return bytesOf(v.jobPrio) + bytesOf(v.jobPods) + bytesOf(v.jobMilli) + bytesOf(v.jobSizes) + bytesOf(v.jobHost0) +
		bytesOf(v.jobPre) + v.preIndexBytes()
}

// checkJobView compares the view with the job table.
func (s *State) checkJobView() error {
	n := len(s.jobPrio)
	if len(s.jobPods) != n || len(s.jobMilli) != n || len(s.jobSizes) != n || len(s.jobHost0) != n ||
		len(s.jobPre) != (n+63)/64 {
		return fmt.Errorf("check: job view arrays of lengths %d, %d, %d, %d, %d, %d words",
			n, len(s.jobPods), len(s.jobMilli), len(s.jobSizes), len(s.jobHost0), len(s.jobPre))
	}
	for j := range max(len(s.jobs), len(s.jobPrio)) {
		var want jobEntry
		if j < len(s.jobs) && s.jobs[j].live {
			r := &s.jobs[j]
			want = jobEntry{r.info.Priority, r.n, uint64(s.JobMilliGPU(JobID(j))), int32(s.jobSize(JobID(j))),
				s.pods[r.first].Host, r.info.Preemptible}
		}
		if j >= len(s.jobPrio) {
			if want != (jobEntry{}) {
				return fmt.Errorf("check: job %d beyond the job view", j)
			}
			continue
		}
		got := jobEntry{s.jobPrio[j], s.jobPods[j], s.jobMilli[j], s.jobSizes[j], s.jobHost0[j],
			s.jobPre[j>>6]&(1<<(uint(j)&63)) != 0}
		if want.pods == 0 { // the first pod's host means nothing then
			got.host0 = 0
		}
		if got != want {
			return fmt.Errorf("check: job %d: view %+v, job table %+v", j, got, want)
		}
	}
	if n := len(s.jobPrio); n&63 != 0 && s.jobPre[n>>6]>>(uint(n)&63) != 0 {
		return fmt.Errorf("check: job view: preemptible bits past id %d", n)
	}
	return nil
}

// jobEntry is one job's view entry, for Check.
type jobEntry struct {
	prio, pods int32
	milli      uint64
	size       int32
	host0      HostID
	pre        bool
}
