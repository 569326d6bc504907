package blink

import (
	"math"
	"math/bits"
	"slices"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Spares. Each SparePolicy keeps Hosts spare hosts in every domain of its
// level. A spare is a healthy host with no failed or nominated GPU that holds
// only preemptible work (filler) or nothing; non-preemptible jobs never land
// on one, because their placement requests carry the restriction kept here
// (placement.Restriction: the spares closed, with per-domain sums of what
// they hold free, so that restricted placement reads exact capacities from
// the aggregates). A fault under a running gang
// takes a spare in the gang's domain first, evicting its filler.
//
// The bookkeeping is incremental: a bitset of spare hosts, the restriction,
// and per policy a count of spares per domain. A host that fails, drains,
// loses a GPU or is taken by a repair stops being a spare, and its domains
// are marked dirty; so are domains where a job left hosts (they may hold a
// new candidate) or a host recovered. Each Cycle rescans only dirty domains
// that are short of spares, last host first, in order of preference (see
// spareFull), in one pass over the domain's hosts. A domain with no candidate
// stays short until something in it changes.

type spares struct {
	pol     []SparePolicy          // deepest level first
	isSpare []uint64               // bit h: host h is a spare
	rx      *placement.Restriction // the spares closed; nil without policies
	count   [][]int32              // per policy, spares per domain of its level (index d - lo)
	lo      []topology.DomainID
	isDirty [][]bool
	dirty   []spareRef
	jobs    []topology.JobID   // scratch
	best    []ratedHost        // scratch of designateBest
	pods    []topology.HostPod // scratch of preemptibleOn
	changed bool               // the spare set changed since the engine last looked
	gpuless bool               // the tree has hosts without GPUs (noCandidate cannot see them)
}

type spareRef struct {
	p int32
	d topology.DomainID
}

func (sp *spares) on() bool { return sp.rx != nil }

func (sp *spares) init(e *Engine) {
	t := e.t
	for _, p := range e.cfg.Spares {
		if p.Hosts > 0 {
			sp.pol = append(sp.pol, p)
		}
	}
	if len(sp.pol) == 0 {
		return
	}
	slices.SortStableFunc(sp.pol, func(a, b SparePolicy) int { return int(b.Level) - int(a.Level) })
	words := (t.NumHosts() + 63) / 64
	sp.isSpare = make([]uint64, words)
	sp.rx = placement.NewRestriction(t)
	for h := 0; h < t.NumHosts(); h++ {
		sp.gpuless = sp.gpuless || t.HostGPUCount(topology.HostID(h)) == 0
	}
	for i, p := range sp.pol {
		lo, hi := t.LevelDomains(p.Level)
		sp.lo = append(sp.lo, lo)
		sp.count = append(sp.count, make([]int32, hi-lo))
		sp.isDirty = append(sp.isDirty, make([]bool, hi-lo))
		for d := lo; d < hi; d++ {
			sp.markDirty(int32(i), d)
		}
	}
	sp.refill(e)
	sp.rx.Sync(e.s) // the spares' sums counted now, not at the first cycle
}

// IsSpare reports whether host h is a spare.
func (e *Engine) IsSpare(h topology.HostID) bool {
	return e.sp.on() && h >= 0 && int(h) < e.t.NumHosts() && e.sp.spare(h)
}

// SpareCount returns the spare hosts in domain d.
func (e *Engine) SpareCount(d topology.DomainID) int {
	if !e.sp.on() {
		return 0
	}
	lo, hi := e.t.Hosts(d)
	n := 0
	for h := lo; h < hi; h++ {
		if e.sp.spare(h) {
			n++
		}
	}
	return n
}

func (sp *spares) spare(h topology.HostID) bool { return sp.isSpare[h>>6]&(1<<(uint(h)&63)) != 0 }

func (sp *spares) markDirty(p int32, d topology.DomainID) {
	i := d - sp.lo[p]
	if !sp.isDirty[p][i] {
		sp.isDirty[p][i] = true
		sp.dirty = append(sp.dirty, spareRef{p, d})
	}
}

func (sp *spares) designate(t *topology.Tree, h topology.HostID) {
	sp.changed = true
	sp.isSpare[h>>6] |= 1 << (uint(h) & 63)
	_ = sp.rx.Close(h) // h is a host of the tree
	for i, p := range sp.pol {
		d := t.HostDomain(h, p.Level)
		sp.count[i][d-sp.lo[i]]++
	}
}

func (sp *spares) undesignate(t *topology.Tree, h topology.HostID) {
	sp.changed = true
	sp.isSpare[h>>6] &^= 1 << (uint(h) & 63)
	_ = sp.rx.Open(h)
	for i, p := range sp.pol {
		d := t.HostDomain(h, p.Level)
		sp.count[i][d-sp.lo[i]]--
		sp.markDirty(int32(i), d)
	}
}

// touch marks host h's domains dirty where they are short of spares.
func (sp *spares) touch(t *topology.Tree, h topology.HostID) {
	for i, p := range sp.pol {
		d := t.HostDomain(h, p.Level)
		if int(sp.count[i][d-sp.lo[i]]) < p.Hosts {
			sp.markDirty(int32(i), d)
		}
	}
}

// touchDomain marks the policy domains that overlap domain d dirty where
// they are short of spares: those inside d, and those that contain it.
func (sp *spares) touchDomain(t *topology.Tree, d topology.DomainID) {
	if !sp.on() {
		return
	}
	lo, _ := t.Hosts(d)
	for i, p := range sp.pol {
		dlo, dhi := t.HostDomain(lo, p.Level), t.HostDomain(lo, p.Level)+1
		if p.Level > t.DomainLevel(d) {
			dlo, dhi = t.Descendants(d, p.Level)
		}
		for x := dlo; x < dhi; x++ {
			if int(sp.count[i][x-sp.lo[i]]) < p.Hosts {
				sp.markDirty(int32(i), x)
			}
		}
	}
}

// touchPods touches the hosts of pods that left the State.
func (sp *spares) touchPods(e *Engine, pods []topology.Pod) {
	if !sp.on() {
		return
	}
	last := topology.HostID(-1)
	for _, p := range pods {
		if p.Host != last {
			sp.touch(e.t, p.Host)
			last = p.Host
		}
	}
}

// hostChanged re-examines host h after a health change.
func (sp *spares) hostChanged(e *Engine, h topology.HostID) {
	if !sp.on() {
		return
	}
	if sp.spare(h) {
		if !sp.healthy(e, h) {
			sp.undesignate(e.t, h)
		}
		return
	}
	sp.touch(e.t, h)
}

// taken notes that a non-preemptible job now has pods on the hosts of pods:
// spares among them are consumed.
func (sp *spares) taken(e *Engine, pods []topology.Pod) {
	if !sp.on() {
		return
	}
	for _, p := range pods {
		if sp.spare(p.Host) {
			sp.undesignate(e.t, p.Host)
		}
	}
}

func (sp *spares) healthy(e *Engine, h topology.HostID) bool {
	return e.s.HostHealth(h) == topology.Healthy && e.s.HostFailedMask(h) == 0 && e.s.HostNominatedMask(h) == 0
}

// Spare preference, best first: a host fully used by filler (it keeps
// running work and offers placement nothing, so best fit is not drawn to it
// and non-preemptible requests rarely need the eligible-host restriction),
// then an idle host, then a host partly used by filler.
const (
	spareNo = iota
	spareFull
	spareIdle
	sparePartial
)

// candidate rates host h as a spare (spareNo: it may not be one).
func (sp *spares) candidate(e *Engine, h topology.HostID) int {
	if sp.spare(h) {
		return spareNo
	}
	// Non-preemptible work rules most hosts out: check it first.
	hasPods := e.s.HostHasPods(h)
	if hasPods {
		sp.jobs = e.s.AppendHostJobs(sp.jobs[:0], h)
		for _, id := range sp.jobs {
			if !e.jobs[id].spec.Preemptible {
				return spareNo
			}
		}
	}
	switch {
	case !sp.healthy(e, h):
		return spareNo
	case !hasPods:
		return spareIdle
	case e.s.HostFree(h) == 0:
		return spareFull
	}
	return sparePartial
}

// refill designates spares in the dirty domains short of them.
func (sp *spares) refill(e *Engine) {
	if len(sp.dirty) == 0 {
		return
	}
	// Deepest policies first, so a rack's spares count for its SU's pool
	// before the SU designates its own.
	if len(sp.dirty) > 1 {
		slices.SortFunc(sp.dirty, func(a, b spareRef) int {
			if a.p != b.p {
				return int(a.p - b.p)
			}
			return int(a.d - b.d)
		})
	}
	for _, ref := range sp.dirty {
		i := ref.d - sp.lo[ref.p]
		sp.isDirty[ref.p][i] = false
		if short := sp.pol[ref.p].Hosts - int(sp.count[ref.p][i]); short > 0 && !sp.noCandidate(e, ref.d) {
			sp.designateBest(e, ref.d, short)
		}
	}
	sp.dirty = sp.dirty[:0]
}

// designateBest designates up to n spares in domain d, best rated first
// (candidate), last host first within a rating: one pass over d's hosts,
// remembering the best n seen.
func (sp *spares) designateBest(e *Engine, d topology.DomainID, n int) {
	best := sp.best[:0]
	lo, hi := e.t.Hosts(d)
	for h := hi - 1; h >= lo; h-- {
		r := sp.candidate(e, h)
		if r == spareNo || len(best) == n && r >= best[n-1].rating {
			continue
		}
		// insert after the hosts rated the same or better (they come first:
		// higher host ids were seen earlier)
		k := len(best)
		if k < n {
			best = append(best, ratedHost{})
		} else {
			k--
		}
		for k > 0 && best[k-1].rating > r {
			best[k] = best[k-1]
			k--
		}
		best[k] = ratedHost{h, r}
	}
	for _, b := range best {
		sp.designate(e.t, b.h)
	}
	sp.best = best
}

// noCandidate reports, from the aggregates, that domain d holds no spare
// candidate: outside its spares, no GPU is free and none is held by
// preemptible work, while a candidate is idle or holds only preemptible work.
// O(spares of d) instead of a scan of d's hosts — the common case after a
// repair took a rack's spare from under a gang. An idle host without GPUs
// is a candidate the aggregates do not show: on such trees it says false.
func (sp *spares) noCandidate(e *Engine, d topology.DomainID) bool {
	if sp.gpuless {
		return false
	}
	_, pre := e.s.PreemptibleBelow(d, math.MaxInt32)
	n := e.s.Free(d) + pre
	lo, hi := e.t.Hosts(d)
	for h := e.nextSpare(lo, hi); h >= 0; h = e.nextSpare(h+1, hi) {
		n -= e.s.HostFree(h) + sp.preemptibleOn(e, h)
	}
	return n <= 0
}

// preemptibleOn is host h's GPUs counted as held by preemptible jobs in the
// State's aggregates (topology.State.PreemptibleBelow): all of them for a
// preemptible owner holding it exclusively, else each preemptible pod's.
func (sp *spares) preemptibleOn(e *Engine, h topology.HostID) int {
	pre := e.s.PreemptibleJobWords()
	isPre := func(j topology.JobID) bool { return int(j>>6) < len(pre) && pre[j>>6]&(1<<(uint(j)&63)) != 0 }
	if j, held := e.s.HostExclusive(h); held {
		if isPre(j) {
			return e.t.HostGPUCount(h)
		}
		return 0
	}
	n := 0
	sp.pods = e.s.AppendHostPods(sp.pods[:0], h)
	for _, p := range sp.pods {
		if isPre(p.Job) {
			n += bits.OnesCount64(p.GPUs)
		}
	}
	return n
}

type ratedHost struct {
	h      topology.HostID
	rating int
}

// restrictionFor returns the restriction for a job's requests: nil (every
// host) for preemptible jobs or without spares.
func (sp *spares) restrictionFor(j *job) *placement.Restriction {
	if !sp.on() || j.spec.Preemptible {
		return nil
	}
	return sp.rx
}
