package preempt

import (
	"math/bits"

	"github.com/blinksched/blink/topology"
)

// The single-victim bound. A leaf's aggregate bound (lb) says one victim,
// holding at least Milli milli-GPUs; that victim is one live preemptible
// job of lower priority, which holds at least that much in all. So the
// least milli among such jobs, of at least Milli, bounds every one-victim
// answer in the leaf, and a leaf no such job can answer alone needs two
// victims or more. When many leaves share the least bound and each is
// modelled to learn it cannot beat the best answer (a gang of fractions in
// a rack, say, where the credit bound does not apply), this ends the search
// once the best answer is the least any leaf allows. The jobs' milli are
// counted once per search, lazily, once the leaves modelled have read
// hosts enough that counting them costs about as much again (soloRatio):
// a histogram by whole GPUs below soloExact GPUs, by powers of two above.
// Searches over single hosts (hostMode), whose leaves cost little, do
// without it.

// soloRatio is about what counting a job costs against modelling a host,
// inverted: the histogram is made once the hosts modelled reach the jobs ÷
// soloRatio.
const soloRatio = 400

// soloExact is the GPUs below which the histogram is exact to a GPU.
const soloExact = 64

// soloBuckets is the number of buckets: soloExact of one GPU, then powers
// of two up to 2^63 milli.
const soloBuckets = soloExact + 64

// soloBucket is the bucket of a job of milli milli-GPUs.
func soloBucket(milli int64) int {
	if g := milli / topology.FullGPU; g < soloExact {
		return int(g)
	}
	b := soloExact
	for x := milli / (soloExact * topology.FullGPU); x > 1; x >>= 1 {
		b++
	}
	return min(b, soloBuckets-1)
}

// soloLow is the least milli of bucket b.
func soloLow(b int) int64 {
	if b < soloExact {
		return int64(b) * topology.FullGPU
	}
	return int64(soloExact*topology.FullGPU) << (b - soloExact)
}

// makeSolo counts the live preemptible jobs of priority below the
// request's by milli. O(jobs).
func (p *Planner) makeSolo() {
	p.solo = [soloBuckets]int32{}
	for w, word := range p.preW {
		for ; word != 0; word &= word - 1 {
			j := w<<6 + bits.TrailingZeros64(word)
			if j < len(p.prios) && p.prios[j] < p.r.Priority {
				p.solo[soloBucket(int64(p.millis[j]))]++
			}
		}
	}
	p.soloReady = true
}

// soloKey raises a one-victim bound lb to the least milli a single victim
// of at least lb.Milli can hold (from the histogram, to its bucket's
// floor), or to two victims if none can. Other bounds are returned as they
// are.
func (p *Planner) soloKey(lb Cost) Cost {
	if lb.Victims != 1 {
		return lb
	}
	for b := soloBucket(lb.Milli); b < soloBuckets; b++ {
		if p.solo[b] > 0 {
			lb.Milli = max(lb.Milli, soloLow(b))
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
		if p.leafHosts*soloRatio < int64(len(p.prios)) {
			return false
		}
		p.makeSolo()
	}
	e.soloed = true
	return p.raise(e, p.soloKey(e.lb), true)
}
