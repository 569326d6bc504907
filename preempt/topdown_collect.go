package preempt

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// The top-down construction's candidates (topdown.go): found through the
// State's preemptible index and put in the order they are evicted in.

// tdCollect finds q, the least priority of a preemptible job at or above
// low (the bound's priority) and below the request's — no victim set of
// lower priority fits — and lists in p.tdJobs the preemptible jobs of
// priority ≤ q of size ≥ minSize, in id order, and writes to p.order their
// indices in the construction's order (tdSort). False if there is no such q
// below the end of low's priority bucket. It reads only the jobs of the
// size classes minSize's reaches, up to q's priority bucket
// (State.PreemptibleSizeWords), not every preemptible job.
func (p *Planner) tdCollect(low int32, minSize int64) (int32, bool) {
	end := min(p.r.Priority, lowPrio(bucketOf(low)+1))
	q, ok := p.s.LeastPreemptiblePriority(low)
	if !ok || q >= end {
		return 0, false
	}
	words := p.s.PreemptibleSizeWords(p.tdWords, minSize, q)
	p.tdWords = words
	n := 0
	for _, x := range words {
		n += bits.OnesCount64(x)
	}
	sizes, prios := p.s.JobSizes(), p.prios
	jobs := resize(p.tdJobs, n+1) // room for one write past the last kept
	n = 0
	// Without branches on the jobs' values, which follow no pattern: each
	// job is written, and kept by advancing n or not.
	for w, x := range words {
		for ; x != 0; x &= x - 1 {
			j := w<<6 | bits.TrailingZeros64(x)
			prio, size := prios[j], sizes[j]
			jobs[n] = tdJob{id: topology.JobID(j), prio: prio, size: size}
			n += b2i(prio <= q) & b2i(int64(size) >= minSize)
		}
	}
	kept := jobs[:n]
	for i := range kept {
		kept[i].milli = p.milli(kept[i].id)
	}
	p.tdJobs = kept
	p.tdSort()
	p.tdIn = resize(p.tdIn, len(kept))
	clear(p.tdIn)
	return q, true
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tdSort writes to p.order the indices of p.tdJobs (in id order) by size
// descending, then milli ascending, then id: a stable radix sort of one
// packed key, or a stable comparison sort if the key does not fit 64 bits.
// The key holds, after the size, not the milli but what the job's size
// could hold and it does not (size·1000 − milli, never negative: a job
// holds at most a whole GPU for each one counted in its size), reversed: 0
// for jobs of whole GPUs, so that on a cluster of whole-GPU jobs the key is
// the size alone and one radix pass sorts it.
func (p *Planner) tdSort() {
	jobs := p.tdJobs
	maxS, maxU, minU := int64(0), int64(0), int64(0)
	for i := range jobs {
		u := unheld(&jobs[i])
		maxS, maxU, minU = max(maxS, int64(jobs[i].size)), max(maxU, u), min(minU, u)
	}
	bs, bu := bits.Len64(uint64(maxS)), bits.Len64(uint64(maxU))
	order := resize(p.order, len(jobs))
	p.order = order
	if bs+bu > 64 || minU < 0 {
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortStableFunc(order, func(a, b int32) int {
			if c := cmp3(int64(jobs[b].size), int64(jobs[a].size)); c != 0 {
				return c
			}
			return cmp3(jobs[a].milli, jobs[b].milli)
		})
		return
	}
	rk := resize(p.radixA, len(jobs))
	for i := range jobs {
		rk[i] = radixKey{k: uint64(maxS-int64(jobs[i].size))<<uint(bu) | uint64(maxU-unheld(&jobs[i])), c: int32(i)}
	}
	sorted, other := radixSort(rk, p.radixB, bs+bu)
	for i := range sorted {
		order[i] = sorted[i].c
	}
	p.radixA, p.radixB = sorted, other
}

// unheld is the milli candidate jb's size could hold and it does not.
func unheld(jb *tdJob) int64 { return int64(jb.size)*topology.FullGPU - jb.milli }
