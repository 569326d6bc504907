package preempt

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// The top-down answer for a gang that may go anywhere. A request of one pod
// set of whole GPUs and nothing else (tdAllowed) with no required level has
// the whole cluster as its one scope, and on a full cluster of a million
// GPUs a model of it reads every candidate's pods. Its optimum can often be
// named, and proven, from aggregates and the pods of the victims alone:
//
//   - priority: no victim set below lb.Priority fits (bound.go), so a set of
//     candidates of priority at most q, the least priority of a candidate
//     at or above lb.Priority, that fits has the least priority;
//   - count: a victim set frees at least the whole GPUs missing (the set's
//     GPUs less the cluster's free ones), and a victim frees at most its
//     size (State.JobSizes); State.PreemptibleCover gives k, the fewest
//     candidates of q's priority bucket or below whose sizes reach that
//     (the State groups priorities by powers of two), so a set of k that
//     fits has the fewest victims — and is irreducible (a smaller one would
//     fit too);
//   - milli: lb.Milli, from aggregates.
//
// The construction takes the candidates of priority ≤ q that the cover
// counts (size at least its minSize), largest first (then least milli,
// then by id), and evicts them one by one into V, keeping per host it
// touches the capacity for the request with V gone (what the model computes
// for that host), until the request fits. If that takes more than k — the
// largest do not tile hosts: half-host jobs whose other half stays — it
// takes back out, last evicted first, every candidate the request does not
// need, which leaves V irreducible. If V then has k victims and the milli
// bound, it is offered as proven optimal, once more checked irreducible
// victim by victim; otherwise the model's search decides (an answer that
// fits is offered to it as the one to beat). O(jobs/64 + preemptible jobs
// of priority ≤ q + the pods of those evicted): on a full cluster where
// large jobs tile hosts, a fraction of the model's cost.

// tdHost is what the construction keeps per host V touches, stamped with
// the construction's epoch (tdEp).
type tdHost struct {
	ep   uint32
	seen uint32 // the last tdLoss that counted this host (tdSeen)
	head int32  // V's pods on the host, chained through candLinks
	cap  int32  // the host's capacity for the request with V gone
}

// tdJob is a candidate of the construction.
type tdJob struct {
	id    topology.JobID
	prio  int32
	size  int32
	milli int64
}

// topDown tries the construction above and returns true if it offered an
// answer proven optimal (p.irreducible is then set: verify has nothing to
// do).
func (p *Planner) topDown() bool {
	if p.noTopDown || p.unfolded || p.mode != rootMode || !p.modelExact || !p.tdAllowed() {
		return false
	}
	lb, ok := p.lb(0)
	if !ok || lb.Priority == NoPriority || lb.Priority >= p.r.Priority {
		return false
	}
	s, set := p.s, &p.sets[0]
	k, minSize := s.PreemptibleCover(lb.Priority, set.pods*set.gpus-int64(s.Free(0)))
	if k < 0 {
		return false
	}
	k = max(k, 1)
	q, ok := p.tdCollect(lb.Priority, minSize)
	if !ok {
		return false
	}
	lack := set.pods - int64(s.PodCapacity(0, int(set.gpus)))
	n, gain, fits := p.tdEvict(k, lack)
	if !fits {
		return false
	}
	pruned := n > k
	if pruned { // more than the bound: the first ones may not be needed
		gain = p.tdPrune(n, gain, lack)
	}
	v, cost := p.tdVictims()
	bound := Cost{Priority: q, Victims: k, Milli: lb.Milli}
	proven := !bound.Less(cost) && p.tdIrreducible(n, gain, lack)
	if !p.offerSet(v, cost) {
		return false
	}
	p.irreducible = proven
	if proven {
		p.topDowns++
		p.topDownsPruned += b2i(pruned)
	}
	return proven
}

// tdVictims lists V in id order (tdJobs' order), with its cost.
func (p *Planner) tdVictims() ([]topology.JobID, Cost) {
	v, cost := p.gone[:0], Cost{Priority: NoPriority}
	for c := range p.tdJobs {
		if p.tdIn[c] {
			jb := &p.tdJobs[c]
			v = append(v, jb.id)
			cost.Priority = max(cost.Priority, jb.prio)
			cost.Milli += jb.milli
		}
	}
	p.gone = v
	cost.Victims = len(v)
	return v, cost
}

// tdAllowed reports whether the request is one the construction answers:
// one pod set of whole GPUs and nothing else, any host, any model, not
// exclusive, and no nominated GPU it may take. GPUs nominated for others
// then simply take nothing (tdNom masks them), as the State's free counts
// already say.
func (p *Planner) tdAllowed() bool {
	r := p.r
	if len(p.sets) != 1 || r.Exclusive || p.eligible != nil || !p.anyModel || !p.extras.Empty() {
		return false
	}
	set := &p.sets[0]
	p.tdNom = p.s.NumNominations() > 0
	return set.gpus > 0 && set.milli == 0 && set.cpu == 0 && set.mem == 0
}

// tdCollect finds q, the least priority of a preemptible job at or above
// low (the bound's priority) and below the request's — no victim set of
// lower priority fits — and lists in p.tdJobs the preemptible jobs of
// priority ≤ q of size ≥ minSize, in id order, and writes to p.order their
// indices in the construction's order (tdSort). False if there is no such q
// below the end of low's priority bucket.
func (p *Planner) tdCollect(low int32, minSize int64) (int32, bool) {
	end := min(p.r.Priority, lowPrio(bucketOf(low)+1))
	sizes, prios := p.s.JobSizes(), p.prios
	jobs := resize(p.tdJobs, len(prios)+1) // room for one write past the last kept
	n, q := 0, end
	// Without branches on the jobs' values, which follow no pattern: each
	// job is written, and kept by advancing n or not.
	for w, x := range p.preW {
		for ; x != 0; x &= x - 1 {
			j := w<<6 | bits.TrailingZeros64(x)
			prio, size := prios[j], sizes[j]
			atLow := end
			if prio >= low {
				atLow = prio
			}
			q = min(q, atLow)
			jobs[n] = tdJob{id: topology.JobID(j), prio: prio, size: size}
			n += b2i(prio < end) & b2i(int64(size) >= minSize)
		}
	}
	if q == end {
		return 0, false
	}
	kept := jobs[:0]
	for _, jb := range jobs[:n] {
		if jb.prio <= q {
			jb.milli = p.milli(jb.id)
			kept = append(kept, jb)
		}
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
func (p *Planner) tdSort() {
	jobs := p.tdJobs
	maxS, maxM := int64(0), int64(0)
	for i := range jobs {
		maxS, maxM = max(maxS, int64(jobs[i].size)), max(maxM, jobs[i].milli)
	}
	bs, bm := bits.Len64(uint64(maxS)), bits.Len64(uint64(maxM))
	order := resize(p.order, len(jobs))
	p.order = order
	if bs+bm > 64 {
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
		rk[i] = radixKey{k: uint64(maxS-int64(jobs[i].size))<<uint(bm) | uint64(jobs[i].milli), c: int32(i)}
	}
	sorted, other := radixSort(rk, p.radixB, bs+bm)
	for i := range sorted {
		order[i] = sorted[i].c
	}
	p.radixA, p.radixB = sorted, other
}

// tdEvict evicts the collected candidates into V in order until the request
// gains the pods it lacks; it returns how many it evicted (V is the first n
// in order), the pods gained and whether the request then fits. The pods of
// the first limit candidates (those the bound counts) are read first, the
// others only if those do not suffice, each time in one tight loop
// (tdFetch), which keeps many reads of the State's scattered records in
// flight at once.
func (p *Planner) tdEvict(limit int, lack int64) (int, int64, bool) {
	if len(p.tdAcc) < p.t.NumHosts() {
		p.tdAcc, p.tdEp = make([]tdHost, p.t.NumHosts()), 0
	}
	if p.tdEp++; p.tdEp == 0 { // wrapped: clear the stamps
		clear(p.tdAcc)
		p.tdEp = 1
	}
	limit = min(limit, len(p.order))
	p.podBuf, p.candLinks, p.tdGain = p.podBuf[:0], p.candLinks[:0], p.tdGain[:0]
	p.tdStarts = append(p.tdStarts[:0], 0)
	p.tdFetch(0, limit)
	gain := int64(0)
	for n, c := range p.order {
		if n == limit {
			p.tdFetch(limit, len(p.order))
		}
		p.tdIn[c] = true
		gain += p.tdAdd(n)
		if gain >= lack {
			return n + 1, gain, true
		}
	}
	return len(p.order), gain, false
}

// tdAdd recomputes the hosts of the n-th candidate in order, just put in V,
// and returns the pods they gain.
func (p *Planner) tdAdd(n int) int64 {
	g, gain := p.sets[0].gpus, int64(0)
	lo, hi := p.tdPods(n)
	for e := lo; e < hi; e++ { // a host of several pods is recomputed after each
		if sole, ok := p.tdSole(&p.podBuf[e]); ok {
			p.tdGain[e] = int16(sole)
			gain += sole
			continue
		}
		h := p.podBuf[e].Host
		a := &p.tdAcc[h]
		if a.ep != p.tdEp {
			*a = tdHost{ep: p.tdEp, head: -1, cap: int32(int64(p.s.HostFree(h)) / g)}
		}
		p.candLinks[e].next, a.head = a.head, e
		nw := p.tdCap(h, a)
		gain += int64(nw - a.cap)
		a.cap = nw
	}
	return gain
}

// tdPrune takes out of V, last evicted first, each of the n evicted
// candidates the request does not need (it still gains the pods it lacks
// without it); it returns the pods V gains then. What is left is
// irreducible: feasibility only shrinks as V does.
func (p *Planner) tdPrune(n int, gain, lack int64) int64 {
	for i := n - 1; i >= 0; i-- {
		c := p.order[i]
		p.tdIn[c] = false
		if loss := p.tdLoss(i, c); gain-loss >= lack {
			gain -= loss
			p.tdRecompute(i)
			continue
		}
		p.tdIn[c] = true
	}
	return gain
}

// tdRecompute stores the capacities of the hosts of the i-th candidate in
// order, just taken out of V, that have records.
func (p *Planner) tdRecompute(i int) {
	lo, hi := p.tdPods(i)
	for e := lo; e < hi; e++ {
		if p.tdGain[e] >= 0 { // alone on its host: no record
			continue
		}
		h := p.podBuf[e].Host
		a := &p.tdAcc[h]
		a.cap = p.tdCap(h, a)
	}
}

// tdFetch reads the pods of candidates [from, to) in order into podBuf,
// noting where the i-th one's start (tdStarts[i]; tdStarts[to] is the end),
// with their links (candLinks) unchained and no gain alone (tdGain -1). The State reads all their job
// records, then all their pods (AppendJobsPods), which keeps many reads of
// scattered records in flight.
func (p *Planner) tdFetch(from, to int) {
	ids := p.idBuf[:0]
	for _, c := range p.order[from:to] {
		ids = append(ids, p.tdJobs[c].id)
	}
	p.idBuf = ids
	starts := slices.Grow(p.tdStarts[:from], to+1-from)[:to+1]
	p.tdStarts = starts
	p.podBuf = p.s.AppendJobsPods(p.podBuf, ids, starts[from:to])
	starts[to] = int32(len(p.podBuf))
	for i, c := range p.order[from:to] {
		for range starts[from+i+1] - starts[from+i] {
			p.candLinks = append(p.candLinks, podLink{next: -1, k: c})
			p.tdGain = append(p.tdGain, -1)
		}
	}
}

// tdPods is the range of podBuf holding the pods of the i-th candidate in
// order (one of those fetched).
func (p *Planner) tdPods(i int) (lo, hi int32) { return p.tdStarts[i], p.tdStarts[i+1] }

// tdAlone reports whether candidate c's are the only pods of V on a's host.
func (p *Planner) tdAlone(a *tdHost, c int32) bool {
	for e := a.head; e >= 0; e = p.candLinks[e].next {
		if k := p.candLinks[e].k; k != c && p.tdIn[k] {
			return false
		}
	}
	return true
}

// tdSole returns what evicting pod q's job adds to the request on q's host
// when q is the only pod there (whole GPUs, every other GPU unused): the
// host's healthy GPUs in pods less what the histograms count for it. No
// other pod of V can be on that host, so it needs no record (tdHost).
func (p *Planner) tdSole(q *topology.Pod) (int64, bool) {
	s, h := p.s, q.Host
	n := p.t.HostGPUCount(h)
	all := uint64(1)<<uint(n) - 1
	if n == 64 {
		all = ^uint64(0)
	}
	if q.Milli != 0 || q.GPUs|s.HostUnusedMask(h) != all {
		return 0, false
	}
	g := p.sets[0].gpus
	base := int64(s.HostFree(h)) / g
	if s.HostHealth(h) != topology.Healthy {
		return -base, true // base is 0: an unhealthy host has nothing free
	}
	usable := all
	if s.HostHealthyGPUs(h) < n {
		usable &^= s.HostFailedMask(h)
	}
	if p.tdNom {
		usable &^= s.HostNominatedMask(h)
	}
	return int64(bits.OnesCount64(usable))/g - base, true
}

// tdEvicted reports whether job j is in V: a binary search of the
// collected candidates, which are in id order.
func (p *Planner) tdEvicted(j topology.JobID) bool {
	c, ok := slices.BinarySearchFunc(p.tdJobs, j, func(jb tdJob, j topology.JobID) int { return cmp3(int64(jb.id), int64(j)) })
	return ok && p.tdIn[c]
}

// tdCap is host h's capacity for the request with V gone (a: V's pods on
// it): model.hostCap's figure for requests tdAllowed takes. On a healthy
// host no one holds exclusively, with no fraction of V, the GPUs it takes
// are its free ones (unused, healthy, not nominated) and those V's whole
// pods return, less failed and nominated ones.
func (p *Planner) tdCap(h topology.HostID, a *tdHost) int32 {
	s := p.s
	if s.HostHealth(h) != topology.Healthy {
		return 0
	}
	j, held := s.HostExclusive(h)
	if held && !p.tdEvicted(j) {
		return 0 // held by a job that stays
	}
	var whole, frac uint64
	for e := a.head; e >= 0; e = p.candLinks[e].next {
		if q := &p.podBuf[e]; p.tdIn[p.candLinks[e].k] {
			if q.Milli == 0 {
				whole |= q.GPUs
			} else {
				frac |= q.GPUs
			}
		}
	}
	n := p.t.HostGPUCount(h)
	if !held && frac == 0 {
		usable := s.HostFreeMask(h) | whole
		if s.HostHealthyGPUs(h) < n {
			usable &^= s.HostFailedMask(h)
		}
		if p.tdNom {
			usable &^= s.HostNominatedMask(h)
		}
		return int32(int64(bits.OnesCount64(usable)) / p.sets[0].gpus)
	}
	all := uint64(1)<<uint(n) - 1
	if n == 64 {
		all = ^uint64(0)
	}
	fixed := all &^ s.HostUnusedMask(h) &^ whole
	if fixed&frac != 0 {
		fixed = p.explain(h, a.head, p.tdIn, fixed)
	}
	share := all &^ s.HostFailedMask(h)
	if p.tdNom {
		share &^= s.HostNominatedMask(h)
	}
	return int32(int64(bits.OnesCount64(share&^fixed)) / p.sets[0].gpus)
}

// tdIrreducible checks that without any one of the candidates in V (among
// the first n in order; V's capacities gain pods, lack needed) the request
// would lack pods again.
func (p *Planner) tdIrreducible(n int, gain, lack int64) bool {
	for i, c := range p.order[:n] {
		if !p.tdIn[c] {
			continue
		}
		p.tdIn[c] = false
		loss := p.tdLoss(i, c)
		p.tdIn[c] = true
		if gain-loss >= lack {
			return false
		}
	}
	return true
}

// tdLoss is what the request loses on the hosts of c, the i-th candidate in
// order, just taken out of V (their records keep the capacities with c in
// V). A host where no other pod of V is goes back to what the State's
// histograms count for it.
func (p *Planner) tdLoss(i int, c int32) int64 {
	g, loss := p.sets[0].gpus, int64(0)
	if p.tdSeen++; p.tdSeen == 0 { // wrapped: clear the stamps
		for h := range p.tdAcc {
			p.tdAcc[h].seen = 0
		}
		p.tdSeen = 1
	}
	lo, hi := p.tdPods(i)
	for e := lo; e < hi; e++ {
		if sole := p.tdGain[e]; sole >= 0 {
			loss += int64(sole)
			continue
		}
		h := p.podBuf[e].Host
		a := &p.tdAcc[h]
		if a.seen == p.tdSeen {
			continue
		}
		a.seen = p.tdSeen
		if p.tdAlone(a, c) {
			loss += int64(a.cap) - int64(p.s.HostFree(h))/g
		} else {
			loss += int64(a.cap - p.tdCap(h, a))
		}
	}
	return loss
}
