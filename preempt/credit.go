package preempt

import (
	"math"
	"math/bits"

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
// in the domain, found by job id through the model's stamps (candEp and
// candIdx, free between builds: see creditKey), and their order by credit
// as far as it was asked for (credit_order.go).
type creditScratch struct {
	jobs []creditJob
	creditOrder
	millis []int64
	single topology.JobID // cover's one victim whose solo pods cover Δ (-1: none)
	pods   [65]int64      // pods[n]: ⌊n/g⌋, the request's pods n GPUs hold (creditHost's divisions)
	prios  int            // the cap on priorities tried (0: creditPrios; set by tests)
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
	x.jobs, x.single = x.jobs[:0], -1
	x.creditOrder.reset()
	p.nextCandEpoch() // no model is being built: creditHost stamps the candidates met
	g := p.sets[p.primary].gpus
	for n := range x.pods {
		x.pods[n] = int64(n) / g
	}
	plain := p.eligible == nil && p.anyModel
	noms := p.s.NumNominations() != 0 && p.s.NominatedIn(d)
	base := p.creditHosts(d, g, plain, noms)
	p.creditLeaves++
	need := p.sets[p.primary].pods - base
	if need <= 0 {
		return lb, true
	}
	prio, most := lb.Priority, creditPrios
	if x.prios > 0 {
		most = x.prios
	}
	for tried := 0; ; tried++ {
		next, k, milli, ok := p.cover(need, prio)
		if !ok && next != prio && tried == most {
			// Too many priorities tried: the answer's is at least next,
			// and all the candidates bound its count and milli.
			prio = next
			_, k, milli, ok = p.cover(need, math.MaxInt32)
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
// if none). Only the multiset of credits decides k and the bound, so the
// candidates are put in order of credit only when no one credit covers Δ
// alone, and then only as far as the k largest (byCredit).
func (p *Planner) cover(need int64, prio int32) (next int32, k int, milli int64, ok bool) {
	x := &p.cred
	delta := need * creditUnit
	next = prio
	sum, most, n := int64(0), int64(0), 0
	for i := range x.jobs {
		c := &x.jobs[i]
		if c.prio > prio {
			if next == prio || c.prio < next {
				next = c.prio
			}
			continue
		}
		n++
		if sum < delta { // no further: no overflow
			sum += c.w
		}
		most = max(most, c.w)
	}
	if sum < delta {
		return next, 0, 0, false
	}
	// Each of k victims has at least sMin: Δ less the k−1 largest other
	// credits.
	var sMin int64
	if most >= delta { // one victim: only a job whose solo pods cover Δ
		if m, ok := x.one(need, prio); ok {
			return next, 1, m, true
		}
		if n < 2 {
			return next, 0, 0, false
		}
		k, sMin = 2, delta-most // no one job suffices
	} else {
		k, sMin = x.fewest(delta, prio)
	}
	m := x.millis[:0]
	for i := range x.jobs {
		if c := &x.jobs[i]; c.w >= sMin && c.prio <= prio {
			m = append(m, c.milli)
		}
	}
	x.millis = m
	if len(m) < k {
		return next, k + 1, 0, true // fewer than k candidates have sMin
	}
	return next, k, sumLeast(m, k), true
}

// one is cover's answer of one victim: the least milli (lowest id first)
// of the candidates of priority up to prio whose solo pods cover need,
// left in x.single; false if none does.
func (x *creditScratch) one(need int64, prio int32) (int64, bool) {
	best := int64(-1)
	x.single = -1
	for i := range x.jobs {
		c := &x.jobs[i]
		if c.prio <= prio && c.solo >= need &&
			(best < 0 || c.milli < best || c.milli == best && c.id < x.single) {
			best, x.single = c.milli, c.id
		}
	}
	return best, best >= 0
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
	if j, held := s.HostExclusive(h); held && !p.candidate(j) {
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
	pods := &p.cred.pods
	if !s.HostHasPods(h) {
		return pods[bits.OnesCount64(usable)]
	}
	hp := s.AppendHostJobGPUs(p.jgBuf[:0], h)
	p.jgBuf = hp
	var used, fixed uint64
	for i := range hp {
		used |= hp[i].GPUs
		if !p.candidate(hp[i].Job) {
			fixed |= hp[i].GPUs
		}
	}
	f := bits.OnesCount64(usable &^ used)
	most := pods[bits.OnesCount64(usable&^fixed)] - pods[f]
	if most <= 0 {
		return pods[f]
	}
	per, top := g-(int64(f)-pods[f]*g), most*creditUnit
	for i := 0; i < len(hp); { // a job's pods on h are adjacent (by job, rank)
		j, x := hp[i].Job, 0
		for ; i < len(hp) && hp[i].Job == j; i++ {
			x += bits.OnesCount64(hp[i].GPUs & usable &^ fixed) // a GPU a job that stays shares is never freed
		}
		if x == 0 { // a job that stays has all its GPUs in fixed
			continue
		}
		c := (int64(x)*creditUnit + per - 1) / per
		// x counts a GPU once per pod of j sharing it, so f+x may pass 64;
		// most caps the solo pods below pods[64] − pods[f] anyway.
		solo := min(pods[min(f+x, 64)]-pods[f], most)
		p.credit(j, min(c, top), solo)
	}
	return pods[f]
}

// credit adds w units and solo pods to candidate j's credit, listing j on
// its first credit in the domain.
func (p *Planner) credit(j topology.JobID, w, solo int64) {
	x := &p.cred
	if p.candEp[j] != p.candEpoch {
		p.candEp[j], p.candIdx[j] = p.candEpoch, int32(len(x.jobs))
		x.jobs = append(x.jobs, creditJob{milli: p.milli(j), prio: p.prios[j], id: j})
	}
	c := &x.jobs[p.candIdx[j]]
	c.w += w
	c.solo += solo
}

// candidate reports whether job j is a candidate (isCand's modeCands).
func (p *Planner) candidate(j topology.JobID) bool {
	return p.prios[j] < p.r.Priority && p.preW[j>>6]&(1<<(uint(j)&63)) != 0
}
