package topology

import (
	"fmt"
	"math/bits"
)

// The movable-size histogram: how many live jobs that are both movable and
// preemptible touch g GPUs (the sum of their pods' GPU counts), exactly for g
// below 64 and by powers of two above. A defragmenter reads from it how much
// any k moves can free (MovableGPUsBound) without reading a single pod: a
// gang missing 231 GPUs in every block is not made room for by 4 moves when
// no movable job holds more than 4 GPUs. addJob and removeJob keep it, with
// journaled writes; Check recounts it.

// movBuckets: 64 exact sizes, then one bucket per power of two up to 2^31.
const movBuckets = 64 + 26

// movBucket is the bucket of a job touching g GPUs.
func movBucket(g int64) int {
	if g < 64 {
		return int(g)
	}
	return 64 + bits.Len64(uint64(g)) - 7 // [64,128) → 64, [128,256) → 65, …
}

// movBucketMax is the most GPUs a job in bucket b touches.
func movBucketMax(b int) int64 {
	if b < 64 {
		return int64(b)
	}
	return int64(128)<<(b-64) - 1
}

// movable reports whether a live job with info counts in the histogram.
func movable(info *Job) bool { return info.Movable && info.Preemptible }

// jobGPUsTouched is the sum of live job id's pods' GPU counts: a bound on the
// whole GPUs moving it away can free.
func (s *State) jobGPUsTouched(id JobID) int64 {
	var n int64
	for p := s.jobs[id].first; p >= 0; p = s.pods[p].jnext {
		n += int64(bits.OnesCount64(s.pods[p].GPUs))
	}
	return n
}

// countMovable adds delta (±1) for live job id, if it is movable and
// preemptible, to the histogram (journaled). The view holds its size.
func (s *State) countMovable(id JobID, delta int32) {
	info := &s.jobs[id].info
	if !movable(info) {
		return
	}
	g := int64(s.jobSizes[id]) // the view's size: the GPUs touched, unless exclusive
	if info.Exclusive {
		g = s.jobGPUsTouched(id)
	}
	b := movBucket(g)
	s.w32(&s.movHist[b], s.movHist[b]+delta)
}

// MovableGPUsBound returns an upper bound on the GPUs that any k live jobs
// that are both movable and preemptible touch together: the sum of the k
// largest such jobs' sizes (a job's size is its pods' GPU count, exact below
// 64 GPUs, else rounded up to a power of two less one). Moving k jobs frees
// at most that many whole GPUs anywhere. O(buckets).
func (s *State) MovableGPUsBound(k int) int64 {
	var sum int64
	for b := movBuckets - 1; b > 0 && k > 0; b-- {
		n := min(int(s.movHist[b]), k)
		sum += int64(n) * movBucketMax(b)
		k -= n
	}
	return sum
}

// checkMovable recounts the histogram from the job table.
func (s *State) checkMovable() error {
	var want [movBuckets]int32
	for j := range s.jobs {
		if s.jobs[j].live && movable(&s.jobs[j].info) {
			want[movBucket(s.jobGPUsTouched(JobID(j)))]++
		}
	}
	if want != s.movHist {
		return fmt.Errorf("check: movable-size histogram %v, job table counts %v", s.movHist, want)
	}
	return nil
}
