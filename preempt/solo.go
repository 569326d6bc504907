package preempt

import (
	"math"
	"math/bits"

	"github.com/blinksched/blink/topology"
)

// The single-victim bound. A leaf's aggregate bound (lb) says one victim,
// holding at least Milli milli-GPUs; that victim is one live preemptible
// job of lower priority, which holds at least that much in all. So the
// least milli among such jobs, of at least Milli, bounds every one-victim
// answer in the leaf, and a leaf no such job can answer alone needs two
// victims or more. When many leaves share the least bound and each is
// modelled (or has its pods read for the credit bound) to learn it cannot
// beat the best answer — a gang of fractions in a rack, where the credit
// bound does not apply, or 32 whole hosts in an SU of 144, where every SU
// lacks 128 GPUs and the least job that frees them holds 144 — this ends
// the search once the best answer is the least any leaf allows. The jobs'
// milli are summarised once per search, lazily, once the leaves have cost
// about as much as summarising them (summaryDue): per bucket (one per whole
// GPU below soloExact GPUs, one per power of two above) the least and the
// most milli of its jobs, so the bound is exact unless a bucket holds jobs
// on both sides of Milli.
// Searches over single hosts (hostMode), whose leaves cost little, do
// without it.

// soloRatio is about what counting a job costs against modelling a host,
// inverted: the summary is due once the hosts modelled reach the jobs ÷
// soloRatio.
const soloRatio = 400

// soloLeaves is how many leaves the credit bound may read before the
// summary is made regardless of their hosts: its reads cost less than a
// model's, and a search that ends within a few leaves (most) should not pay
// for the summary, but one that credits leaf after leaf of the same bound
// (32 hosts in an SU, every SU short of the same GPUs) needs it.
const soloLeaves = 8

// summaryDue reports whether the leaves have read enough that the summary
// of the jobs (or the lone-victim answer, which costs about as much) is
// worth making.
func (p *Planner) summaryDue() bool {
	return p.leafHosts*soloRatio >= int64(len(p.prios)) || p.creditLeaves >= soloLeaves
}

// soloExact is the GPUs below which the buckets are of one GPU each: job
// sizes are often near one another (64 and 72 GPUs) below it.
const soloExact = 1024

// soloBuckets is the number of buckets: soloExact of one GPU, then powers
// of two up to 2^63 milli.
const soloBuckets = soloExact + 64

// soloBucket is the bucket of a job of milli milli-GPUs.
func soloBucket(milli int64) int {
	if g := milli / topology.FullGPU; g < soloExact {
		return int(g)
	}
	x := uint64(milli / (soloExact * topology.FullGPU)) // ≥ 1
	return min(soloExact+bits.Len64(x)-1, soloBuckets-1)
}

// makeSolo summarises the live preemptible jobs of priority below the
// request's by milli: per bucket the least and the most. O(jobs).
func (p *Planner) makeSolo() {
	for b := range p.soloMin {
		p.soloMin[b], p.soloMax[b] = math.MaxInt64, -1
	}
	prios, millis, below := p.prios, p.millis[:len(p.prios)], p.r.Priority
	lo, hi := &p.soloMin, &p.soloMax
	for w, word := range p.preW {
		for ; word != 0; word &= word - 1 {
			j := w<<6 + bits.TrailingZeros64(word)
			if j < len(prios) && prios[j] < below {
				m := int64(millis[j])
				b := soloBucket(m)
				lo[b], hi[b] = min(lo[b], m), max(hi[b], m)
			}
		}
	}
	p.soloReady = true
}

// soloKey raises a one-victim bound lb to the least milli a single victim
// of at least lb.Milli can hold, or to two victims if none can. In the
// bucket of lb.Milli a job of at least lb.Milli exists only if the bucket's
// most is; the least milli of the first bucket that has one is the answer,
// unless that bucket holds less than lb.Milli too (then lb.Milli stands).
// Other bounds are returned as they are.
func (p *Planner) soloKey(lb Cost) Cost {
	if lb.Victims != 1 {
		return lb
	}
	for b := soloBucket(lb.Milli); b < soloBuckets; b++ {
		if p.soloMax[b] >= lb.Milli {
			lb.Milli = max(lb.Milli, p.soloMin[b])
			return lb
		}
	}
	return Cost{Priority: lb.Priority, Victims: 2}
}

// soloRaise is rekey's part for the single-victim bound: it makes the
// histogram when the leaves modelled have read hosts enough, and then
// raises leaf entry e's bound by it, once.
func (p *Planner) soloRaise(e entry) bool {
	if e.soloed || e.lb.Victims != 1 || p.mode == hostMode || p.noSolo {
		return false
	}
	if !p.soloReady {
		if !p.summaryDue() {
			return false
		}
		p.makeSolo()
	}
	e.soloed = true
	return p.raise(e, p.soloKey(e.lb), true)
}
