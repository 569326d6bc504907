package preempt

import (
	"math"
	"math/bits"

	"github.com/blinksched/blink/topology"
)

// Lower bounds from aggregates. For a domain d and the request (needing
// W whole GPUs and F milli of fractions, M = 1000·W + F milli in all), with
// A = free GPUs of acceptable models plus GPUs nominated for jobs the
// request may displace, and S = free milli on partly used GPUs:
//
//   - priority: victims of priority below q free at most
//     PreemptibleBelow(d, q) GPUs (exact at the State's bucket edges, the
//     powers of two: see bucketOf), so if 1000·(A + that) + S < M, every
//     victim set that fits the request inside d has a victim of priority ≥ q.
//     The bound is the largest bucket edge q for which this holds; if even
//     all preemptible GPUs below the request's priority do not cover M, d is
//     infeasible.
//   - count: 1 (the request does not fit as the cluster is).
//   - milli: victims' pods return at most 1000 milli per GPU, except GPUs of
//     a host held exclusively, which come free with their owner whatever it
//     holds; so the victims hold at least M − 1000·(A + X) − S milli, where
//     X counts the GPUs of exclusively held hosts in d (State.ExclusiveGPUs).
//
// A child's bound is never below its parent's (its aggregates are parts of
// the parent's), which the best-first search relies on.

// bucketOf mirrors the State's grouping of priorities for PreemptibleBelow:
// negative priorities in bucket 0, p ≥ 0 in bucket 1+bits.Len32(p). A test
// checks the mirror against the State.
func bucketOf(p int32) int {
	if p < 0 {
		return 0
	}
	return 1 + bits.Len32(uint32(p))
}

// lowPrio is the lowest priority of bucket b.
func lowPrio(b int) int32 {
	switch b {
	case 0:
		return math.MinInt32
	case 1:
		return 0
	}
	return 1 << uint(b-2)
}

// lb is the lower bound of the cost of making the request fit inside domain
// d, and false if no victim set can (from aggregates alone). O(log buckets).
func (p *Planner) lb(d topology.DomainID) (Cost, bool) {
	s := p.s
	need := p.needMilli
	if p.eligible != nil && 1000*p.eligibleGPUs(d) < need {
		return Cost{}, false // whatever goes, d's eligible hosts are too few
	}
	avail := p.freeIn(d) + p.extraIn(d)
	have := 1000*avail + s.SharedMilli(d)
	c := Cost{Priority: NoPriority, Victims: 1}
	if have >= need {
		return c, true
	}
	if _, hi := s.PreemptibleBelow(d, p.r.Priority); have+1000*int64(hi) < need {
		return Cost{}, false
	}
	// Smallest bucket b ≥ 1 whose lower edge's preemptible GPUs (exactly
	// those below the edge) cover the rest; victims below lowPrio(b-1) do
	// not suffice. Bucket pb+1 stands for "below the request's priority".
	lo, hi := 1, p.pb+1
	for lo < hi {
		mid := (lo + hi) / 2
		if below, _ := s.PreemptibleBelow(d, lowPrio(mid)); have+1000*int64(below) >= need {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	c.Priority = lowPrio(lo - 1)
	c.Milli = max(0, need-1000*(avail+s.ExclusiveGPUs(d))-s.SharedMilli(d))
	return c, true
}

// freeIn counts the free GPUs of acceptable models in d.
func (p *Planner) freeIn(d topology.DomainID) int64 {
	if p.anyModel {
		return int64(p.s.Free(d))
	}
	n := 0
	for m, ok := range p.modelOK {
		if ok {
			n += p.s.FreeOfModel(d, m)
		}
	}
	return int64(n)
}

// eligibleGPUs bounds the GPUs of d's eligible hosts: the eligible hosts
// times the tree's largest host. O(hosts of d / 64).
func (p *Planner) eligibleGPUs(d topology.DomainID) int64 {
	lo, hi := p.t.Hosts(d)
	return int64(onesIn(p.eligible, int(lo), int(hi))) * int64(p.t.MaxHostGPUs())
}

// onesIn counts the bits [lo, hi) of words set: the first and last words
// masked, whole words between (a rack's hosts are one or two words).
func onesIn(words []uint64, lo, hi int) int {
	if hi <= lo {
		return 0
	}
	a, b := lo>>6, (hi-1)>>6
	first, last := ^uint64(0)<<(uint(lo)&63), ^uint64(0)>>(63-uint(hi-1)&63)
	if a == b {
		return bits.OnesCount64(words[a] & first & last)
	}
	n := bits.OnesCount64(words[a]&first) + bits.OnesCount64(words[b]&last)
	for _, w := range words[a+1 : b] {
		n += bits.OnesCount64(w)
	}
	return n
}

// moreVictims raises leaf d's bound lb by a bound of k victims holding
// milli or more. A bound's milli holds for its number of victims only (a
// lone victim of 8,000 milli says nothing of two of 2,500 each): where k
// raises the count, the milli is k's, with the aggregate one (lb of d),
// which holds for every count; where the counts are equal, the larger.
func (p *Planner) moreVictims(d topology.DomainID, lb Cost, k int, milli int64) Cost {
	switch {
	case k > lb.Victims:
		agg, _ := p.lb(d)
		lb.Victims, lb.Milli = k, max(milli, agg.Milli)
	case k == lb.Victims:
		lb.Milli = max(lb.Milli, milli)
	}
	return lb
}
