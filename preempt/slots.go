package preempt

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// The slot bound: how many victims a leaf domain needs at least, from the
// candidates' pod counts. Aggregates of GPUs (bound.go) cannot tell that a
// gang of 288 four-GPU pods on hosts of four GPUs needs 288 hosts emptied,
// not 1,152 GPUs freed anywhere: on a full cluster they bound every domain
// by one victim, and the search models domain after domain to learn that
// none does with one. For a request of one pod set of g whole GPUs,
// counting in pods gives more. Let cap(V) be the pods of the request that
// domain d takes with V gone counting GPUs only (⌊usable GPUs/g⌋ per host):
// placement's capacity is at most that (CPU, memory, eligibility, models,
// exclusivity and slices only take away), so a victim set V that fits the
// request in d has pods ≤ cap(V), and:
//
//   - cap(∅) ≤ PodCapacity(d, g) (the histograms count the free GPUs that no
//     nomination holds) plus ⌈e/g⌉ per host with e GPUs nominated for jobs
//     the request may displace (extras);
//   - V adds on a host h it does not hold exclusively at most ⌈x/g⌉ pods, x
//     the GPUs it frees there (⌊(f+x)/g⌋ − ⌊f/g⌋ ≤ ⌈x/g⌉ for any f), which
//     is at most Σ ⌈k/g⌉ over its pods on h (k the pod's GPUs), each term at
//     most per = ⌈max host GPUs/g⌉. A host V holds exclusively counts
//     nothing before and at most ⌊G/g⌋ ≤ per pods after, and its owner has
//     a pod there. Either way, victim j adds at most slots(j) = per ·
//     pods(j), wherever its pods are.
//   - So the victims' slots must cover Δ = pods − cap(∅)'s bound: k victims
//     need the k largest slots to cover Δ, and the least such k bounds the
//     count. An answer with that many victims has each of them at least
//     sMin = Δ − (the k−1 largest slots) slots, so its milli is at least
//     the sum of the k least milli among the candidates with that many (the
//     bound holds for every priority: any answer of more victims costs
//     more).
//   - If the request asks for GPUs only (no CPU, memory or exclusivity),
//     every answer has a victim holding GPUs in d, so its priority is at
//     least the lowest bucket edge with preemptible GPUs in d.
//
// The candidates are summarised once per search, lazily (a scan of the
// compact job view: O(job ids / 64 + candidates)), only once the leaves
// searched hold enough hosts that the scan is cheap beside them
// (slotWork), and kept as the slotTop candidates with most slots (then
// least milli): enough for the count and, when the candidates beyond them
// have fewer slots than sMin or exactly as many, for the milli. Beyond them,
// the least milli per bucket of slot counts (over all candidates) bounds
// what a candidate with sMin slots or more holds: a block that a single
// 72-pod job could make room for is not bound by the milli of a fraction.

// slotTop is how many candidates the summary keeps.
const slotTop = 32

// slotWork: the summary is made once slotWork times the hosts of the leaves
// searched (the one about to be included) reach the number of job ids.
const slotWork = 32

// slotJob is a candidate as the slot bound sees it.
type slotJob struct {
	slots, milli int64
}

// slotSummary is the candidates' summary for the slot bound.
type slotSummary struct {
	ready  bool
	all    bool      // top holds every candidate
	per    int64     // slots per pod
	top    []slotJob // by slots descending, then milli ascending
	prefix []int64   // prefix[i]: the slots of top[:i]
	// sorted[L(L−1)/2 : L(L+1)/2] holds the milli of top[:L], ascending:
	// leastMilli's candidates of sMin slots or more are such a prefix.
	sorted []int64
	// least[b]: the least milli of the candidates whose slots fall in
	// bucket b (slotBucket) or above, over all of them; -1 none.
	least [slotBuckets]int64
	keep  int // the top's size, if > 0 (tests), else slotTop
}

// slotBuckets: slot counts below 64 exactly, then one bucket per power of
// two.
const slotBuckets = 64 + 58

// slotBucket is the bucket of a slot count.
func slotBucket(s int64) int {
	if s < 64 {
		return int(s)
	}
	return min(64+bits.Len64(uint64(s))-7, slotBuckets-1)
}

// leastFrom bounds from below the milli of any candidate with at least
// sMin slots: the least over the buckets that may hold such candidates
// (sMin's own holds some with fewer, which only lowers the bound); -1 if
// none may.
func (x *slotSummary) leastFrom(sMin int64) int64 {
	return x.least[slotBucket(max(sMin, 0))]
}

// slotAllowed reports whether the request allows the slot bound: its pods
// within a domain of the required level, its primary set (the one of most
// GPUs) of whole GPUs. The bound counts that set's pods alone: in a gang of
// several sets (a launcher and its workers, say) they must fit too, so
// what frees room for them bounds every answer, and placement still
// decides each answer for the whole gang.
func (p *Planner) slotAllowed() bool {
	set := &p.sets[p.primary]
	return p.mode == domainMode && set.gpus > 0 && set.milli == 0
}

// slotsDue reports whether the summary should be made before leaf d is
// searched: the request allows the bound, and the work of the leaves so
// far (leafHosts) with d's makes the scan cheap beside it.
func (p *Planner) slotsDue(d topology.DomainID) bool {
	if !p.slotOK || p.slots.ready || p.slotForce < 0 {
		return false
	}
	lo, hi := p.t.Hosts(d)
	return p.slotForce > 0 || slotWork*(p.leafHosts+int64(hi-lo)) >= int64(len(p.prios))
}

// makeSlots summarises the candidates (preemptible, of priority below the
// request's) for the slot bound: the least milli per bucket of every one,
// and the top, offered the candidates with at least the pods of its last
// once it is full (slotScan finds them). The top holds every candidate
// (all) unless one came after it was full: the first such is offered
// whatever its pods, and only then does the floor rise.
func (p *Planner) makeSlots() {
	x := &p.slots
	g := p.sets[p.primary].gpus
	x.per = (int64(p.t.MaxHostGPUs()) + g - 1) / g
	keep := slotTop
	if x.keep > 0 {
		keep = x.keep
	}
	for b := range x.least {
		x.least[b] = -1
	}
	scan := slotScan{words: p.preW, prios: p.prios, npods: p.npods, millis: p.millis,
		below: p.r.Priority, per: x.per, w: -1}
	top, over := x.top[:0], false
	floor := int32(-1) // once the top is full and over: the pods of its last
	for {
		pods, milli, ok := scan.next(floor, &x.least)
		if !ok {
			break
		}
		over = over || len(top) == keep
		top = x.offer(top, keep, slotJob{slots: x.per * int64(pods), milli: milli})
		if over {
			floor = int32(top[keep-1].slots / max(x.per, 1)) // per is 0 on a tree of no GPUs: all slots 0
		}
	}
	x.top, x.all, x.ready = top, !over, true
	for b := slotBuckets - 2; b >= 0; b-- { // each bucket's least, then the least from it on
		if uint64(x.least[b+1]) < uint64(x.least[b]) {
			x.least[b] = x.least[b+1]
		}
	}
	x.prefix = append(x.prefix[:0], 0)
	for _, c := range top {
		x.prefix = append(x.prefix, x.prefix[len(x.prefix)-1]+c.slots)
	}
	x.sortPrefixes()
}

// sortPrefixes fills sorted: each prefix's milli is the one before with
// the next candidate's inserted. O(top²), once per summary.
func (x *slotSummary) sortPrefixes() {
	n := len(x.top)
	s := resize(x.sorted, n*(n+1)/2)
	for l := 1; l <= n; l++ {
		prev, cur := s[(l-1)*(l-2)/2:(l-1)*l/2], s[(l-1)*l/2:l*(l+1)/2]
		v, i := x.top[l-1].milli, 0
		for ; i < l-1 && prev[i] <= v; i++ {
			cur[i] = prev[i]
		}
		cur[i] = v
		copy(cur[i+1:], prev[i:])
	}
	x.sorted = s
}

// slotScan is makeSlots' walk over the preemptible job ids of the compact
// job view: where it is (word w, its bits not yet read).
type slotScan struct {
	words  []uint64
	prios  []int32
	npods  []int32
	millis []uint64
	below  int32 // the request's priority
	per    int64 // slots per pod
	w      int
	bits   uint64
}

// next walks on to the next candidate with at least floor pods and returns
// its pods and milli, or false at the end; on the way it lowers the least
// milli of every candidate's bucket in least (where "none", -1, is the
// largest unsigned value: one comparison). It reads every preemptible job
// id, so it is a loop without calls, its state in registers (with a call in
// the loop, offer's, the compiler kept it on the stack), over the view's
// arrays cut to one length (no bounds checks).
func (s *slotScan) next(floor int32, least *[slotBuckets]int64) (pods int32, milli int64, ok bool) {
	words, prios := s.words, s.prios
	npods, millis := s.npods[:len(prios)], s.millis[:len(prios)]
	below, per, w, b := s.below, s.per, s.w, s.bits
	for {
		base := uint(w) << 6 // a word's bits in a loop of their own: fewer values live in it
		for b != 0 {
			j := base | uint(bits.TrailingZeros64(b))
			b &= b - 1
			if j >= uint(len(prios)) || prios[j] >= below {
				continue
			}
			pods, milli = npods[j], int64(millis[j])
			if k := slotBucket(per * int64(pods)); uint64(milli) < uint64(least[k]) {
				least[k] = milli
			}
			if pods >= floor {
				s.w, s.bits = w, b
				return pods, milli, true
			}
		}
		if w++; w >= len(words) {
			s.w, s.bits = w, 0
			return 0, 0, false
		}
		b = words[w]
	}
}

// offer puts candidate c into top (at most keep, in summary order) if it is
// among the best keep so far, and returns top.
func (x *slotSummary) offer(top []slotJob, keep int, c slotJob) []slotJob {
	if len(top) == keep && !c.better(top[keep-1]) {
		return top
	}
	if len(top) < keep {
		top = append(top, c)
	} else {
		top[keep-1] = c
	}
	for i := len(top) - 1; i > 0 && top[i].better(top[i-1]); i-- {
		top[i], top[i-1] = top[i-1], top[i]
	}
	return top
}

// better orders the summary: more slots, then less milli.
func (a slotJob) better(b slotJob) bool {
	if a.slots != b.slots {
		return a.slots > b.slots
	}
	return a.milli < b.milli
}

// slotKey raises lb, the aggregate bound of leaf domain d, by the slot
// bound; false if no victim set can make the request fit in d.
func (p *Planner) slotKey(d topology.DomainID, lb Cost) (Cost, bool) {
	x := &p.slots
	set := &p.sets[p.primary]
	g := set.gpus
	lo, hi := p.t.Hosts(d)
	// Nominated GPUs the request may take add ⌈e/g⌉ pods on a host with e.
	delta := set.pods - int64(p.s.PodCapacity(d, int(g))) - p.extras.Pods(lo, hi, int(g))
	if delta <= 0 {
		return lb, true
	}
	if len(p.r.Sets) == 1 && set.cpu == 0 && set.mem == 0 && !p.r.Exclusive {
		lb.Priority = max(lb.Priority, p.lowestPrio(d))
	}
	k := 1
	for k <= len(x.top) && x.prefix[k] < delta {
		k++
	}
	if k > len(x.top) {
		if x.all {
			return Cost{}, false // all the candidates together do not cover Δ
		}
		last := x.top[len(x.top)-1].slots // the others have no more each
		k = len(x.top) + int((delta-x.prefix[len(x.top)]+last-1)/last)
		return p.moreVictims(d, lb, k, 0), true
	}
	sMin := delta - x.prefix[k-1]
	milli, ok := x.leastMilli(k, sMin)
	if !ok {
		k++ // fewer than k candidates have sMin slots: no k of them cover Δ
		milli = 0
	}
	return p.moreVictims(d, lb, k, milli), true
}

// leastMilli is a lower bound on the milli of k candidates of sMin slots or
// more each, and false if fewer than k candidates have that many. The top
// ones are a prefix of the summary; the others, if any, hold at least as
// much milli as the last kept when they have as many slots, and any when
// they may have more.
func (x *slotSummary) leastMilli(k int, sMin int64) (int64, bool) {
	lo, hi := 0, len(x.top) // the top's candidates of sMin slots or more: top[:lo]
	for lo < hi {
		if mid := (lo + hi) / 2; x.top[mid].slots >= sMin {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	pad := int64(-1) // what a candidate beyond the summary may hold at least
	if last := x.top[len(x.top)-1]; !x.all && last.slots >= sMin {
		pad = max(x.leastFrom(sMin), 0)
		if last.slots == sMin {
			pad = max(pad, last.milli)
		}
	}
	if pad < 0 && lo < k {
		return 0, false
	}
	// The k least of those and k candidates beyond holding pad each.
	sorted, sum, i := x.sorted[lo*(lo-1)/2:lo*(lo+1)/2], int64(0), 0
	for range k {
		if i < lo && (pad < 0 || sorted[i] <= pad) {
			sum += sorted[i]
			i++
		} else {
			sum += pad
		}
	}
	return sum, true
}

// sumLeast is the sum of the k least values of m (0 < k ≤ len(m)), which
// it overwrites. A bound's k is a few victims, so for k up to 8 the k least
// are kept in order at m's front in one pass over the rest; else m is
// sorted.
func sumLeast(m []int64, k int) int64 {
	if k > 8 {
		slices.Sort(m)
	} else {
		for i := 1; i < len(m); i++ {
			v, j := m[i], min(i, k)
			if j == k && v >= m[k-1] {
				continue
			}
			if j == k { // v takes m[k-1]'s place in the front
				j = k - 1
			}
			for ; j > 0 && m[j-1] > v; j-- {
				m[j] = m[j-1]
			}
			m[j] = v
		}
	}
	sum := int64(0)
	for _, v := range m[:k] {
		sum += v
	}
	return sum
}

// lowestPrio is the lower edge of the lowest priority bucket with
// preemptible GPUs in d: no candidate holding a GPU in d has less.
func (p *Planner) lowestPrio(d topology.DomainID) int32 {
	for b := 0; b < p.pb; b++ {
		if lo, _ := p.s.PreemptibleBelow(d, lowPrio(b+1)); lo > 0 {
			return lowPrio(b)
		}
	}
	return lowPrio(p.pb)
}
