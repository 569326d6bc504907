package preempt

import (
	"math"
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// The credit bound: how many victims leaf domain d needs at least, from the
// pods on its own hosts. The slot bound (slots.go) credits every candidate
// with the pods it could free anywhere; in a block where no one job holds
// many hosts alone, the search would still model block after block to
// learn that none does with that few. Reading d's pods (about half of what
// modelling d costs, done once per leaf popped: see rekey) bounds d alone,
// and finds the one victim that answers d when one does (search.go's
// single), for a request of one pod set of g whole GPUs. Counting GPUs only
// (CPU, memory and exclusivity only take away; failed GPUs and those
// nominated against the request are left out as the models leave them
// out), host h holds at most ⌊(f+X)/g⌋ pods with V gone, f its usable GPUs
// no pod holds and X those V's pods hold there; with r = f mod g,
//
//	⌊(f+X)/g⌋ − ⌊f/g⌋ = ⌊(r+X)/g⌋ ≤ X/(g−r)
//
// (zero below X = g−r; above it (r+X)(g−r) ≤ X·g since r(g−r−X) ≤ 0), and
// never more than M, the pods with every candidate gone less ⌊f/g⌋. So
// victim j earns on h the credit min(M, x/(g−r)), x its GPUs there, the
// request's pods in d with V gone are at most Σ⌊f/g⌋ + Σ_{j∈V} w_j (w_j
// its credits over d's hosts), and, as for slots, the k largest credits
// must cover Δ = pods − Σ⌊f/g⌋: the least such k bounds the count, and the
// k least milli among candidates of at least Δ less the k−1 largest other
// credits bound the milli. On a host of g GPUs (one pod), the credit is the
// share of the GPUs still to free that the job holds: a host two jobs
// share needs both.
//
// Credits are kept in units of 1/creditUnit pod, rounded up (a bound may
// only be lowered), so sums are exact integers.

// creditUnit is one pod in credit units.
const creditUnit = 1 << 20

// creditPrios caps the victims' priorities creditKey tries one by one.
const creditPrios = 32

// creditJob is a candidate as the credit bound of one domain sees it: its
// credit w, the pods it alone adds (solo: evicting it and nothing else, on
// each host ⌊(f+x)/g⌋ − ⌊f/g⌋), its milli, priority and id.
type creditJob struct {
	w, solo, milli int64
	prio           int32
	id             topology.JobID
}

// creditScratch is the credit bound's working memory: the candidates met
// in the domain (at[j] their index in jobs when stamp[j] is the epoch).
type creditScratch struct {
	stamp  []uint32
	at     []int32
	epoch  uint32
	jobs   []creditJob
	millis []int64
	single topology.JobID // cover's one victim whose solo pods cover Δ (-1: none)
	prios  int            // the cap on priorities tried (0: creditPrios; set by tests)
}

// begin readies the scratch for a domain, over n job ids.
func (x *creditScratch) begin(n int) {
	if len(x.stamp) < n {
		n += n / 4 // room for the job table to grow
		x.stamp, x.at, x.epoch = make([]uint32, n), make([]int32, n), 0
	}
	x.epoch++
	if x.epoch == 0 { // wrapped: clear once every 2^32 domains
		clear(x.stamp)
		x.epoch = 1
	}
	x.jobs = x.jobs[:0]
}

// add credits candidate j with w units and solo pods.
func (x *creditScratch) add(j topology.JobID, w, solo, milli int64, prio int32) {
	if x.stamp[j] != x.epoch {
		x.stamp[j], x.at[j] = x.epoch, int32(len(x.jobs))
		x.jobs = append(x.jobs, creditJob{milli: milli, prio: prio, id: j})
	}
	c := &x.jobs[x.at[j]]
	c.w += w
	c.solo += solo
}

// creditKey raises lb, the bound of leaf domain d, by the credit bound;
// false if no victim set can make the request fit in d. Only for requests
// the slot bound allows (one pod set of whole GPUs, domainMode).
//
// An optimal answer in d holds only candidates with pods in d (one without
// changes nothing there), so its priority is that of one of them: the
// victims' priorities present are tried in ascending order from lb's, and
// at the first P whose candidates of priority P or less cover Δ the answer
// costs at least (P, their k, their milli). One victim is tried exactly:
// a single job suffices only if its solo pods cover Δ (and when the bound
// is one victim, p.cred.single is the least milli such job, lowest id
// first).
func (p *Planner) creditKey(d topology.DomainID, lb Cost) (Cost, bool) {
	x := &p.cred
	x.begin(len(p.prios))
	x.single = -1
	g := p.sets[p.primary].gpus
	lo, hi := p.t.Hosts(d)
	plain := p.eligible == nil && p.anyModel
	noms := p.s.NumNominations() != 0 && p.s.NominatedIn(d)
	base := int64(0)
	for h := lo; h < hi; h++ {
		base += p.creditHost(h, g, plain, noms)
	}
	p.creditLeaves++
	need := p.sets[p.primary].pods - base
	if need <= 0 {
		return lb, true
	}
	jobs := x.jobs
	slices.SortFunc(jobs, func(a, b creditJob) int { // most credit first, then least milli
		if a.w != b.w {
			return cmp3(b.w, a.w)
		}
		return cmp3(a.milli, b.milli)
	})
	prio, most := lb.Priority, creditPrios
	if x.prios > 0 {
		most = x.prios
	}
	for tried := 0; ; tried++ {
		next, k, milli, ok := x.cover(need, prio)
		if !ok && next != prio && tried == most {
			// Too many priorities tried: the answer's is at least next,
			// and all the candidates bound its count and milli.
			prio = next
			_, k, milli, ok = x.cover(need, math.MaxInt32)
		}
		switch {
		case ok:
			if prio > lb.Priority {
				lb.Priority = prio
			}
			return p.moreVictims(d, lb, k, milli), true
		case next == prio || tried == most:
			return Cost{}, false // all the candidates together do not cover Δ
		}
		prio = next
	}
}

// cover finds the fewest candidates of priority up to prio whose credits
// cover need pods (k, and a lower bound on their milli; ok false if they do
// not), and next, the least priority above prio among the others (or prio
// if none).
func (x *creditScratch) cover(need int64, prio int32) (next int32, k int, milli int64, ok bool) {
	delta := need * creditUnit
	next = prio
	sum, n := int64(0), 0
	for _, c := range x.jobs {
		if c.prio > prio {
			if next == prio || c.prio < next {
				next = c.prio
			}
			continue
		}
		n++
		if sum < delta {
			sum += c.w
			k++
		}
	}
	if sum < delta {
		return next, 0, 0, false
	}
	if k == 1 { // one victim: only a job whose solo pods cover Δ
		best := int64(-1)
		x.single = -1
		for _, c := range x.jobs {
			if c.prio <= prio && c.solo >= need &&
				(best < 0 || c.milli < best || c.milli == best && c.id < x.single) {
				best, x.single = c.milli, c.id
			}
		}
		if best >= 0 {
			return next, 1, best, true
		}
		if n < 2 {
			return next, 0, 0, false
		}
		k = 2 // no one job suffices
	}
	// Each of k victims has at least Δ less the k−1 largest other credits.
	sMin := delta - x.largest(k-1, prio)
	m := x.millis[:0]
	for _, c := range x.jobs {
		if c.w < sMin {
			break
		}
		if c.prio <= prio {
			m = append(m, c.milli)
		}
	}
	x.millis = m
	if len(m) < k {
		return next, k + 1, 0, true // fewer than k candidates have sMin
	}
	slices.Sort(m)
	for _, v := range m[:k] {
		milli += v
	}
	return next, k, milli, true
}

// largest is the sum of the n largest credits of candidates of priority up
// to prio.
func (x *creditScratch) largest(n int, prio int32) int64 {
	sum := int64(0)
	for _, c := range x.jobs {
		if n == 0 {
			break
		}
		if c.prio <= prio {
			sum += c.w
			n--
		}
	}
	return sum
}

// creditHost credits the candidates on host h (pods of g GPUs) and returns
// ⌊f/g⌋, the pods h may take with no victim. Its GPUs are those hostBase
// leaves usable (not failed, not nominated against the request); plain:
// no eligibility or model to check, so that a healthy host with no failed
// or nominated GPU has them all (noms: the domain has nominated GPUs).
func (p *Planner) creditHost(h topology.HostID, g int64, plain, noms bool) int64 {
	s := p.s
	n := p.t.HostGPUCount(h)
	if int64(n) < g {
		return 0
	}
	if j, held := s.HostExclusive(h); held && !p.isCand(j, modeCands) {
		return 0 // held by a job that stays: takes nothing
	}
	usable := uint64(1)<<uint(n) - 1
	if n == 64 {
		usable = ^uint64(0)
	}
	if !plain || s.HostHealthyGPUs(h) != n || noms && s.HostNominatedMask(h) != 0 {
		rec, ok := p.hostBase(h)
		if !ok {
			return 0
		}
		usable = rec.share
	}
	if !s.HostHasPods(h) {
		return int64(bits.OnesCount64(usable)) / g
	}
	hp := s.AppendHostPods(p.hpBuf[:0], h)
	p.hpBuf = hp
	var used, fixed uint64
	for i := range hp {
		used |= hp[i].GPUs
		if !p.isCand(hp[i].Job, modeCands) {
			fixed |= hp[i].GPUs
		}
	}
	f := int64(bits.OnesCount64(usable &^ used))
	most := int64(bits.OnesCount64(usable&^fixed))/g - f/g
	if most <= 0 {
		return f / g
	}
	per, top := g-f%g, most*creditUnit
	cr := &p.cred
	for i := 0; i < len(hp); { // a job's pods on h are adjacent (by job, rank)
		j, x := hp[i].Job, int64(0)
		for ; i < len(hp) && hp[i].Job == j; i++ {
			x += int64(bits.OnesCount64(hp[i].GPUs & usable &^ fixed)) // a GPU a job that stays shares is never freed
		}
		if x == 0 { // a job that stays has all its GPUs in fixed
			continue
		}
		c := (x*creditUnit + per - 1) / per
		solo := min((f+x)/g-f/g, most)
		cr.add(j, min(c, top), solo, p.milli(j), p.prios[j])
	}
	return f / g
}
