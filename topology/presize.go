package topology

import (
	"fmt"
	"math/bits"
)

// The preemptible-size histogram: per priority bucket (prioBucket, the
// grouping PreemptibleBelow uses), how many live preemptible jobs have each
// size, by the movable histogram's size buckets (exact below 64 GPUs, one
// per power of two above), and the sum of their sizes per bucket. A job's
// size bounds the whole GPUs evicting it can free anywhere: the GPUs its
// pods touch, or, for an exclusive job, its pods times the tree's largest
// host (the hosts it holds come free whole, unused GPUs included). Neither
// changes while the job lives (moves and replacements keep every pod's
// shape), so addJob and removeJob keep the histogram, with journaled writes,
// and the compact job view keeps each job's size (JobSizes); Check recounts
// both. A preemption planner reads from it how few victims below a priority
// can free g GPUs (PreemptibleCover) without reading a job.

// preSizeHist is the histogram: entry prioBucket·movBuckets + movBucket.
// Sums are kept for the buckets of 64 GPUs and more only.
type preSizeHist struct {
	preN   [prioBuckets * movBuckets]int32
	preSum [prioBuckets * movBuckets]uint64
}

// jobSize is live job id's size (see above), from its pods.
func (s *State) jobSize(id JobID) int64 {
	_, size := s.jobSums(id)
	return size
}

// jobSums is live job id's milli-GPUs and size, in one walk of its pods.
func (s *State) jobSums(id JobID) (milli, size int64) {
	r := &s.jobs[id]
	for p := r.first; p >= 0; p = s.pods[p].jnext {
		q := &s.pods[p].Pod
		n := int64(bits.OnesCount64(q.GPUs))
		size += n
		milli += podMilli(n, q.Milli)
	}
	if r.info.Exclusive {
		size = int64(r.n) * int64(s.t.maxGPUs)
	}
	return milli, size
}

// podSums is jobSums for a job with attributes info added with pods, which
// validateJob accepted: a job with pod sets sums them per set (its pods
// have their sets' shapes), in O(sets) however large its gang.
func (s *State) podSums(info *Job, pods []Pod) (milli, size int64) {
	if len(info.Sets) == 0 {
		for i := range pods {
			n := int64(bits.OnesCount64(pods[i].GPUs))
			size += n
			milli += podMilli(n, pods[i].Milli)
		}
	}
	for _, set := range info.Sets {
		c, n := int64(set.Count), int64(set.GPUs)
		size += c * n
		milli += c * podMilli(n, set.Milli)
	}
	if info.Exclusive {
		size = int64(len(pods)) * int64(s.t.maxGPUs)
	}
	return milli, size
}

// podMilli is the milli-GPUs a pod of n GPUs and milli holds.
func podMilli(n int64, milli int32) int64 {
	if milli > 0 {
		return int64(milli)
	}
	return n * FullGPU
}

// countPreSize adds delta (±1) for live job id, if it is preemptible, to
// the histogram and to the preemptible index (preindex.go), journaled. The
// view holds its size already.
func (s *State) countPreSize(id JobID, delta int32) {
	r := &s.jobs[id]
	if !r.info.Preemptible {
		return
	}
	size := int64(s.jobSizes[id])
	pb, b := prioBucket(r.info.Priority), movBucket(size)
	i := pb*movBuckets + b
	s.w32(&s.preN[i], s.preN[i]+delta)
	if b >= 64 { // below, a bucket's sum is its count times its size
		s.w64(&s.preSum[i], uint64(int64(s.preSum[i])+int64(delta)*size))
	}
	s.countPreIndex(id, r.info.Priority, size, pb, delta)
}

// PreemptibleCover returns a lower bound k on the number of live preemptible
// jobs of priority at most prio that can free gpus whole GPUs between them
// (gpus ≤ 0: 0), and -1 if all of them cannot; and minSize, the least size
// among the k largest of them by the histogram (jobs smaller than that are
// not needed for the bound). Sizes are summed exactly per bucket; the k
// largest of a bucket taken in part count its largest possible size each.
// Priorities are grouped like PreemptibleBelow's, so jobs up to the end of
// prio's bucket count: k is a bound, never above the truth. O(buckets).
func (s *State) PreemptibleCover(prio int32, gpus int64) (k int, minSize int64) {
	if gpus <= 0 {
		return 0, 0
	}
	top := prioBucket(prio)
	for b := movBuckets - 1; b > 0; b-- { // bucket 0's jobs free nothing
		var n, sum int64
		for pb := 0; pb <= top; pb++ {
			n += int64(s.preN[pb*movBuckets+b])
			sum += int64(s.preSum[pb*movBuckets+b])
		}
		if b < 64 {
			sum = n * int64(b)
		}
		if n == 0 {
			continue
		}
		if sum < gpus {
			gpus -= sum
			k += int(n)
			continue
		}
		// Part of this bucket: each of its jobs holds at most its edge.
		edge := movBucketMax(b)
		take := (gpus + edge - 1) / edge
		return k + int(take), movBucketMin(b)
	}
	return -1, 0
}

// movBucketMin is the least size of a job in bucket b.
func movBucketMin(b int) int64 {
	if b < 64 {
		return int64(b)
	}
	return int64(64) << (b - 64)
}

// checkPreSize recounts the histogram from the job table (checkJobView
// compares the view's sizes).
func (s *State) checkPreSize() error {
	var want preSizeHist
	for j := range s.jobs {
		r := &s.jobs[j]
		if !r.live {
			continue
		}
		if r.info.Preemptible {
			size := s.jobSize(JobID(j))
			i := prioBucket(r.info.Priority)*movBuckets + movBucket(size)
			want.preN[i]++
			if size >= 64 {
				want.preSum[i] += uint64(size)
			}
		}
	}
	if want != s.preSizeHist {
		return fmt.Errorf("check: preemptible-size histogram differs from the job table's")
	}
	return nil
}
