package preempt

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// The capacity model: how many pods of each of the request's pod sets the
// hosts of a scope take once a set V of candidate jobs is gone, computed the
// way placement computes it (placement/capacity.go: hostOK, baseMask,
// shareMask, hostCap; placement/release.go for the jobs gone), from the
// State's read API only:
//
//   - a host takes nothing unless it is healthy, eligible, of an acceptable
//     model, not held exclusively by a job outside V, and — for an exclusive
//     request — free of pods outside V and of GPUs nominated against the
//     request;
//   - its GPUs usable at all (share) are the healthy ones not nominated for a
//     job whose nomination does not admit the request;
//   - a whole-GPU pod takes usable GPUs no pod outside V uses, a fractional
//     pod the free milli of a usable GPU plus what V's pods on it return;
//   - CPU and memory are the host's free amounts plus V's pods'.
//
// Per host the figure is exact. Summed over a scope it is exactly placement's
// feasibility for a request of one pod set without slices (placement is
// exact for one pod set); for several sets, or slices, it is an upper bound
// (each set alone, and the whole GPUs of all sets together): a necessary
// condition. The search uses it to decide feasibility without placement
// calls where it is exact, and to prove infeasibility everywhere.
//
// The model of a scope lists the hosts holding candidate pods (hostRec) with
// those pods (podEnt); every other host of the scope has a constant capacity,
// summed once into rest. Toggling a candidate recomputes only its hosts:
// O(its pods in the scope).

// inf is the capacity of a host for pods that ask for nothing it counts.
const inf = int64(1) << 40

// Classification of jobs when a model is built.
const (
	modeCands  = iota // candidates: preemptible and of priority below the request's
	modeAll           // every job (no-fit reasons: which non-candidates block)
	modeMarked        // the jobs marked by Planner.markSet (verification)
	modeBelow         // the candidates of priority below Planner.below
)

type podEnt struct {
	cand     int32 // candidate index in the model
	gpus     uint64
	milli    int32
	cpu, mem int32
}

type hostRec struct {
	h        topology.HostID
	owner    int32  // candidate holding the host exclusively, or -1
	others   bool   // pods of jobs that are not candidates
	share    uint64 // GPUs the request may use once free
	fixed    uint64 // GPUs used by pods of non-candidates
	cpu, mem int64  // free now
	lo, hi   int32  // pods[lo:hi]: the host's candidate pods, by (job, rank)
}

// cand is a candidate job of a model.
type cand struct {
	id      topology.JobID
	prio    int32
	allowed bool  // a victim by the rules (modeAll marks the others blocked)
	pre     bool  // preemptible
	gpus    int64 // GPUs its pods hold in the scope
	lo, hi  int32 // slots[lo:hi]: indices of its hosts in the model
	milli   int64 // the milli-GPUs it holds (all its pods, in the scope or not)
}

type model struct {
	p     *Planner
	hlo   topology.HostID // the scope's hosts [hlo, hhi)
	hhi   topology.HostID
	hosts []hostRec
	pods  []podEnt
	cands []cand
	in    []bool // per candidate: in the victim set V (apart from cands: hostCap's hot loop reads it)
	slots []int32
	caps  []int64 // caps[si*len(hosts)+k]: host k's capacity for set si under V
	total []int64 // per set: Σ caps + rest
	rest  []int64 // per set: the constant capacity of the other hosts
	// restGPUs counts the other hosts' whole GPUs free for the request.
	restGPUs int64
	exact    bool // fits() is exactly placement's feasibility
	// With V empty (as built): the primary set's capacity per host and in
	// all, and the whole GPUs free for the request (the greedy's bound
	// reads them instead of emptying V again).
	caps0  []int64
	total0 int64
	gpus0  int64
	remap  []int32
	// Hosts whose caps are stale (mark changed V there without
	// recomputing them): dirtyAt[k] is set while k is listed in dirty.
	dirty   []int32
	dirtyAt []bool
	counts  []int32
	spare   []cand // orderCands' other buffer
}

// build makes the model of hosts [hlo, hhi) with the candidates of mode, all
// out of V. O(hosts + pods of the scope).
func (m *model) build(p *Planner, hlo, hhi topology.HostID, mode int) {
	m.start(p, hlo, hhi)
	ns := len(p.sets)
	fold := !p.unfolded && m.exact && (mode == modeCands || mode == modeBelow) && p.wholeSets()
	m.addHosts(hlo, hhi, mode, fold)
	m.sortCands()
	m.in = resize(m.in, len(m.cands))
	clear(m.in)
	m.dirtyAt = resize(m.dirtyAt, len(m.hosts))
	clear(m.dirtyAt)
	m.dirty = m.dirty[:0]
	m.caps = resize(m.caps, ns*len(m.hosts))
	copy(m.total, m.rest)
	for k := range m.hosts {
		for si := range ns {
			c := m.hostCap(k, si)
			m.caps[si*len(m.hosts)+k] = c
			m.total[si] += c
		}
	}
	nh := len(m.hosts)
	ps := p.primary
	m.caps0 = append(m.caps0[:0], m.caps[ps*nh:(ps+1)*nh]...)
	m.total0 = m.total[ps]
	m.gpus0 += m.restGPUs
}

// start empties the model for hosts [hlo, hhi), before hosts are added.
func (m *model) start(p *Planner, hlo, hhi topology.HostID) {
	m.p, m.hlo, m.hhi = p, hlo, hhi
	m.hosts, m.pods, m.cands, m.slots = m.hosts[:0], m.pods[:0], m.cands[:0], m.slots[:0]
	m.rest = resize(m.rest, len(p.sets))
	m.total = resize(m.total, len(p.sets))
	clear(m.rest)
	m.restGPUs, m.gpus0 = 0, 0
	m.exact = p.modelExact
	p.nextCandEpoch()
}

// nextCandEpoch starts a new stamping of candEp: a model's build, or the
// credit bound's reading of a domain (credit.go), which borrows the stamps
// between builds. The stamps are cleared when the epoch wraps.
func (p *Planner) nextCandEpoch() {
	p.candEpoch++
	if p.candEpoch == 0 {
		clear(p.candEp)
		p.candEpoch = 1
	}
}

// candOf returns job j's candidate index, adding it on first sight.
func (m *model) candOf(j topology.JobID, mode int) int32 {
	p := m.p
	if p.candEp[j] == p.candEpoch {
		return p.candIdx[j]
	}
	prio, pre := p.info(j)
	return m.newCand(j, prio, pre)
}

// newCand adds job j (priority prio, preemptible pre), not yet a candidate
// of the model, and returns its index.
func (m *model) newCand(j topology.JobID, prio int32, pre bool) int32 {
	p := m.p
	return m.addCand(cand{id: j, prio: prio, allowed: pre && prio < p.r.Priority, pre: pre, milli: p.milli(j)})
}

// addCand appends candidate cd and returns its index.
func (m *model) addCand(cd cand) int32 {
	p := m.p
	c := int32(len(m.cands))
	m.cands = append(m.cands, cd)
	p.candEp[cd.id], p.candIdx[cd.id] = p.candEpoch, c
	return c
}

// sortCands orders candidates by priority (orderCands), renumbers the pods
// and owners, and lists each candidate's hosts (slots). Candidates met in
// priority order already (one priority, say) keep their numbers.
func (m *model) sortCands() {
	n := len(m.cands)
	if !slices.IsSortedFunc(m.cands, func(a, b cand) int { return cmp3(int64(a.prio), int64(b.prio)) }) {
		m.renumber()
	}
	m.counts = resize(m.counts, n+1)
	clear(m.counts)
	m.remap = resize(m.remap, n)
	last := m.remap // reuse: last host counted per candidate
	for i := range last {
		last[i] = -1
	}
	for k := range m.hosts {
		rec := &m.hosts[k]
		for i := rec.lo; i < rec.hi; i++ {
			if c := m.pods[i].cand; last[c] != int32(k) {
				last[c] = int32(k)
				m.counts[c+1]++
			}
		}
	}
	for c := range n {
		m.counts[c+1] += m.counts[c]
		m.cands[c].lo, m.cands[c].hi = m.counts[c], m.counts[c]
	}
	m.slots = resize(m.slots, int(m.counts[n]))
	for i := range last {
		last[i] = -1
	}
	for k := range m.hosts {
		rec := &m.hosts[k]
		for i := rec.lo; i < rec.hi; i++ {
			if c := m.pods[i].cand; last[c] != int32(k) {
				last[c] = int32(k)
				m.slots[m.cands[c].hi] = int32(k)
				m.cands[c].hi++
			}
		}
	}
}

// renumber sorts the candidates by priority (orderCands) and renumbers the
// pods and owners accordingly.
func (m *model) renumber() {
	p := m.p
	m.remap = resize(m.remap, len(m.cands))
	ids := p.idBuf[:0]
	for i := range m.cands {
		ids = append(ids, m.cands[i].id)
	}
	p.idBuf = ids
	m.orderCands()
	for i := range m.cands {
		p.candIdx[m.cands[i].id] = int32(i)
	}
	for old, id := range ids {
		m.remap[old] = p.candIdx[id]
	}
	for i := range m.pods {
		m.pods[i].cand = m.remap[m.pods[i].cand]
	}
	for k := range m.hosts {
		if rec := &m.hosts[k]; rec.owner >= 0 {
			rec.owner = m.remap[rec.owner]
		}
	}
}

// orderCands sorts the candidates by priority, keeping the order they were
// met in (host order: deterministic) within a priority: a counting sort when
// the priorities are few, as they are in practice.
func (m *model) orderCands() {
	p := m.p
	prios := p.prioBuf[:0]
	for i := range m.cands {
		pr := m.cands[i].prio
		k, found := slices.BinarySearch(prios, pr)
		if !found {
			if len(prios) == 64 {
				p.prioBuf = prios
				slices.SortStableFunc(m.cands, func(a, b cand) int { return cmp3(int64(a.prio), int64(b.prio)) })
				return
			}
			prios = slices.Insert(prios, k, pr)
		}
	}
	p.prioBuf = prios
	var starts [65]int32
	for i := range m.cands {
		k, _ := slices.BinarySearch(prios, m.cands[i].prio)
		starts[k+1]++
	}
	for k := range len(prios) {
		starts[k+1] += starts[k]
	}
	sorted := resize(m.spare, len(m.cands))
	for i := range m.cands {
		k, _ := slices.BinarySearch(prios, m.cands[i].prio)
		sorted[starts[k]] = m.cands[i]
		starts[k]++
	}
	m.spare = m.cands
	m.cands = sorted
}

// hostCap is host k's capacity for set si with the candidates marked in V
// gone.
func (m *model) hostCap(k, si int) int64 {
	rec := &m.hosts[k]
	if rec.owner >= 0 && !m.in[rec.owner] {
		return 0
	}
	p := m.p
	used := rec.fixed
	cpu, mem := rec.cpu, rec.mem
	for i := rec.lo; i < rec.hi; i++ {
		pe := &m.pods[i]
		if m.in[pe.cand] {
			cpu += int64(pe.cpu)
			mem += int64(pe.mem)
			continue
		}
		if p.r.Exclusive {
			return 0
		}
		used |= pe.gpus
	}
	if p.r.Exclusive && rec.others {
		return 0
	}
	return p.podsFit(si, rec, used, cpu, mem, m)
}

// freeGPUs counts the scope's whole GPUs free for the request with V gone
// (an upper bound on what whole-GPU pods can use). O(the model's pods).
func (m *model) freeGPUs() int64 {
	n := m.restGPUs
	for k := range m.hosts {
		rec := &m.hosts[k]
		if rec.owner >= 0 && !m.in[rec.owner] {
			continue
		}
		used := rec.fixed
		for i := rec.lo; i < rec.hi; i++ {
			if pe := &m.pods[i]; !m.in[pe.cand] {
				used |= pe.gpus
			}
		}
		n += int64(bits.OnesCount64(rec.share &^ used))
	}
	return n
}

// set puts candidate c in V (in) or takes it out, updating its hosts.
func (m *model) set(c int, in bool) {
	if m.in[c] == in {
		return
	}
	m.in[c] = in
	cd := &m.cands[c]
	nh := len(m.hosts)
	for _, k := range m.slots[cd.lo:cd.hi] {
		for si := range m.total {
			i := si*nh + int(k)
			if nw := m.hostCap(int(k), si); nw != m.caps[i] {
				m.total[si] += nw - m.caps[i]
				m.caps[i] = nw
			}
		}
	}
}

// setRun puts the candidates of run in V (in) or takes them out, each
// host they share recomputed once.
func (m *model) setRun(run []int32, in bool) {
	if len(run) == 1 {
		m.set(int(run[0]), in)
		return
	}
	for _, c := range run {
		if m.in[c] != in {
			m.mark(int(c), in)
		}
	}
	m.flush()
}

// mark puts candidate c in V (in) or takes it out without recomputing its
// hosts: they are listed dirty until flush.
func (m *model) mark(c int, in bool) {
	m.in[c] = in
	cd := &m.cands[c]
	for _, k := range m.slots[cd.lo:cd.hi] {
		if !m.dirtyAt[k] {
			m.dirtyAt[k] = true
			m.dirty = append(m.dirty, k)
		}
	}
}

// flush recomputes the dirty hosts, in host order: sorted, or, when they
// are many (a threshold step marks every host), found by a pass over
// dirtyAt.
func (m *model) flush() {
	nh := len(m.hosts)
	switch {
	case len(m.dirty) == 0:
		return
	case 8*len(m.dirty) >= nh:
		for k := range m.dirtyAt {
			if m.dirtyAt[k] {
				m.recompute(k)
			}
		}
	default:
		slices.Sort(m.dirty)
		for _, k := range m.dirty {
			m.recompute(int(k))
		}
	}
	m.dirty = m.dirty[:0]
}

// recompute clears dirty host k and recomputes its capacities.
func (m *model) recompute(k int) {
	m.dirtyAt[k] = false
	nh := len(m.hosts)
	for si := range m.total {
		i := si*nh + k
		if nw := m.hostCap(k, si); nw != m.caps[i] {
			m.total[si] += nw - m.caps[i]
			m.caps[i] = nw
		}
	}
}

// setRange puts candidates [lo, hi) in V (in) or takes them out, each host
// recomputed once.
func (m *model) setRange(lo, hi int, in bool) {
	for c := lo; c < hi; c++ {
		if m.in[c] != in {
			m.mark(c, in)
		}
	}
	m.flush()
}

// coversWithout reports whether every set is covered by the scope's
// capacity less all of candidate c's hosts' (c's leaving V can lose no
// more): then the model fits with c out of V, without toggling it. nh is
// len(m.hosts).
func (m *model) coversWithout(c, nh int) bool {
	cd := &m.cands[c]
	slots := m.slots[cd.lo:cd.hi]
	for si := range m.total {
		left := m.total[si] - m.p.sets[si].pods
		if left < 0 {
			return false
		}
		caps := m.caps[si*nh : (si+1)*nh]
		for _, k := range slots {
			if left -= caps[k]; left < 0 {
				return false
			}
		}
	}
	return true
}

// fits reports whether every pod set fits the scope with V gone (exactly
// placement's answer when m.exact, else a necessary condition).
func (m *model) fits() bool {
	for si := range m.total {
		if m.total[si] < m.p.sets[si].pods {
			return false
		}
	}
	return true
}

// deficit is how many pods of the primary set are missing with V gone.
func (m *model) deficit() int64 {
	return max(0, m.p.sets[m.p.primary].pods-m.total[m.p.primary])
}

// podsFit is how many pods of set si a host takes with whole GPUs share &^
// used free (rec's usable GPUs no remaining pod uses), cpu and mem free. For
// fractional sets it reads the host's free milli per GPU, plus what V's pods
// on it return (m nil: no pods of V on the host).
func (p *Planner) podsFit(si int, rec *hostRec, used uint64, cpu, mem int64, m *model) int64 {
	set := &p.sets[si]
	c := inf
	switch {
	case set.milli > 0:
		c = p.fracCap(set.milli, rec, m)
	case set.gpus > 0:
		c = int64(bits.OnesCount64(rec.share&^used)) / set.gpus
	}
	if set.cpu > 0 {
		c = min(c, cpu/set.cpu)
	}
	if set.mem > 0 {
		c = min(c, mem/set.mem)
	}
	return c
}

// fracCap counts fractional pods of milli pm on the host: Σ ⌊free milli /
// pm⌋ over its usable GPUs, with V's pods' milli returned.
func (p *Planner) fracCap(pm int64, rec *hostRec, m *model) int64 {
	var milli [topology.MaxHostGPUs]int32
	lo, _ := p.t.HostGPUs(rec.h)
	for u := rec.share; u != 0; u &= u - 1 {
		i := bits.TrailingZeros64(u)
		milli[i] = int32(p.s.GPUMilli(lo + topology.GPUID(i)))
	}
	if m != nil {
		for i := rec.lo; i < rec.hi; i++ {
			pe := &m.pods[i]
			if !m.in[pe.cand] {
				continue
			}
			for g := pe.gpus; g != 0; g &= g - 1 {
				b := bits.TrailingZeros64(g)
				if pe.milli == 0 {
					milli[b] = topology.FullGPU
				} else {
					milli[b] += pe.milli
				}
			}
		}
	}
	n := int64(0)
	for u := rec.share; u != 0; u &= u - 1 {
		n += int64(milli[bits.TrailingZeros64(u)]) / pm
	}
	return n
}

// hostBase is host h as every model sees it before candidates: false if it
// takes nothing whatever goes (unhealthy, ineligible, a model the request
// does not accept, or GPUs nominated against an exclusive request).
func (p *Planner) hostBase(h topology.HostID) (hostRec, bool) {
	s := p.s
	if s.HostHealth(h) != topology.Healthy || !p.modelOK[p.t.HostModel(h)] {
		return hostRec{}, false
	}
	if e := p.eligible; e != nil && e[h>>6]&(1<<(uint(h)&63)) == 0 {
		return hostRec{}, false
	}
	n := p.t.HostGPUCount(h)
	all := uint64(1)<<uint(n) - 1
	if n == 64 {
		all = ^uint64(0)
	}
	against := s.NominatedAgainst(h, &p.extras)
	if p.r.Exclusive && against != 0 {
		return hostRec{}, false
	}
	rec := hostRec{h: h, owner: -1, share: all &^ s.HostFailedMask(h) &^ against,
		cpu: int64(s.HostCPU(h)), mem: int64(s.HostMemory(h))}
	return rec, true
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
