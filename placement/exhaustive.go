package placement

import (
	"math/bits"

	"github.com/blinksched/blink/topology"
)

// Exhaustive search for small gangs of several pod sets, where the greedy
// layout can miss (set 0 takes the CPU set 1 needed on the only GPU host).
// It tries every distribution of each set's pods over the node's hosts,
// scarcest set first, hosts in index order, simulating each host's GPUs,
// milli, CPU and memory the way assign takes them; then it replays the
// distribution found through assign. Ranks follow host order, so a set's
// slices are whole exactly when every slice-level domain holds a multiple of
// the slice size of its pods. Only hosts that may take a pod of some set
// take part (the others add nothing to any distribution). Bounded: nodes of
// at most exhaustiveScan hosts, of which at most exhaustiveHosts may take a
// pod, gangs of at most exhaustivePods pods, and at most exhaustiveSteps
// search steps.
const (
	exhaustiveHosts = 16
	exhaustiveScan  = 1024
	exhaustivePods  = 16
	exhaustiveSteps = 200000
)

type simHost struct {
	h      topology.HostID
	ok     bool
	mask   uint64
	cpu    int32
	mem    int32
	milli  gpuMilli
	items  [exhaustivePods]fracItem // in exact mode: the fractional pods taken (exhaustive_frac.go)
	nItems int
}

type exSearch struct {
	v     *Solver
	hosts []simHost
	count [][]int64 // [set][host] pods
	steps int
	exact bool // fractions pack by an exact search, not by the rule (exhaustive_frac.go)
	fails fracFails
}

func (v *Solver) exhaustive(l topology.Level, i int32) bool {
	lo, hi := topology.HostID(i), topology.HostID(i)+1
	if l != v.hl {
		lo, hi = v.t.Hosts(topology.DomainID(i))
	}
	total := 0
	for k := range v.r.Sets {
		total += int(v.r.Sets[k].Pods)
	}
	if int(hi-lo) > exhaustiveScan || total > exhaustivePods {
		return false
	}
	e := &v.ex
	e.v, e.steps, e.hosts, e.exact = v, 0, e.hosts[:0], false
	for h := lo; h < hi; h++ {
		sh := v.simOf(h)
		if !e.useful(&sh) {
			continue
		}
		if len(e.hosts) == exhaustiveHosts {
			return false
		}
		e.hosts = append(e.hosts, sh)
	}
	frac := v.allFrac()
	if frac && (!e.millLeft() || e.fails.has(e)) {
		return false
	}
	for len(e.count) < len(v.r.Sets) {
		e.count = append(e.count, make([]int64, exhaustiveHosts))
	}
	for k := range e.count {
		clear(e.count[k])
	}
	if !e.search(0, 0, int64(v.r.Sets[v.order[0]].Pods)) {
		if !frac {
			return false
		}
		e.exact, e.steps = true, 0 // the search left the hosts and counts as they were
		if !e.search(0, 0, int64(v.r.Sets[v.order[0]].Pods)) {
			e.fails.add(e)
			return false
		}
	}
	return e.replay()
}

// simOf is host h as the search simulates it: the State's view (or the
// overlay of a released host), nothing taken yet. Unlike ovFor it makes no
// overlay: the scan reads hosts it may not keep.
func (v *Solver) simOf(h topology.HostID) simHost {
	sh := simHost{h: h, ok: v.hostOK(h)}
	if o := v.ovAt(h); o >= 0 {
		ov := &v.ov[o]
		sh.mask, sh.cpu, sh.mem = ov.mask, ov.cpu, ov.mem
		if v.milli {
			sh.milli = v.ovMilli[o]
		}
		return sh
	}
	sh.mask, sh.cpu, sh.mem = v.baseMask(h), v.s.HostCPU(h), v.s.HostMemory(h)
	if v.milli {
		v.baseMilli(h, sh.mask, &sh.milli)
	}
	return sh
}

// useful reports whether simulated host h may take a pod of some set.
func (e *exSearch) useful(h *simHost) bool {
	for k := range e.v.r.Sets {
		if e.fits(h, &e.v.r.Sets[k]) > 0 {
			return true
		}
	}
	return false
}

// replay lays the distribution found out through assign: per pod set in
// placement order, per host, the same takes; in exact mode each fraction on
// the GPU its host's packing chose. It returns false, having assigned
// nothing, if a host's packing is not found again (it was, within the
// budget, in the search: the same depth-first search finds it first).
func (e *exSearch) replay() bool {
	v := e.v
	if e.exact && !e.placeItems() {
		return false
	}
	for k, si := range v.order {
		v.setCurrent(si)
		v.last = k == len(v.order)-1
		v.pos, v.start = v.offs[si], v.offs[si]
		for j, n := range e.count[si] {
			if n == 0 {
				continue
			}
			if e.exact {
				e.force(&e.hosts[j], si)
			}
			v.assign(e.hosts[j].h, n)
		}
	}
	v.forced = v.forced[:0]
	return true
}

// search places the rest pods of the k-th set (in placement order) on hosts
// j… and every later set; it records counts on success.
func (e *exSearch) search(k, j int, rest int64) bool {
	v := e.v
	if rest == 0 {
		if !e.wholeSlices(v.order[k]) {
			return false
		}
		if k+1 == len(v.order) {
			return true
		}
		return e.search(k+1, 0, int64(v.r.Sets[v.order[k+1]].Pods))
	}
	if j == len(e.hosts) || e.steps >= exhaustiveSteps {
		return false
	}
	e.steps++
	si := v.order[k]
	set := &v.r.Sets[si]
	saved := e.hosts[j]
	for c := min(rest, e.fits(&e.hosts[j], set)); c >= 0; c-- {
		e.hosts[j] = saved
		e.take(&e.hosts[j], set, si, c)
		if e.exact && c > 0 && !e.packs(&e.hosts[j], false) {
			continue
		}
		e.count[si][j] = c
		if e.search(k, j+1, rest-c) {
			return true
		}
	}
	e.hosts[j] = saved
	e.count[si][j] = 0
	return false
}

// fits is how many pods of set the simulated host takes.
func (e *exSearch) fits(h *simHost, set *PodSet) int64 {
	if !h.ok {
		return 0
	}
	c := int64(exhaustivePods)
	switch {
	case set.Milli > 0 && e.exact: // an upper bound: packs decides
		left := int64(0)
		for i := range e.v.t.HostGPUCount(h.h) {
			left += int64(h.milli[i])
		}
		for _, it := range h.items[:h.nItems] {
			left -= int64(it.milli)
		}
		c = min(c, left/int64(set.Milli))
	case set.Milli > 0:
		n := int64(0)
		for i := range e.v.t.HostGPUCount(h.h) {
			n += int64(h.milli[i]) / int64(set.Milli)
		}
		c = min(c, n)
	case set.GPUs > 0:
		c = min(c, int64(bits.OnesCount64(h.mask))/int64(set.GPUs))
	}
	if set.CPUMilli > 0 {
		c = min(c, int64(h.cpu/set.CPUMilli))
	}
	if set.MemoryMiB > 0 {
		c = min(c, int64(h.mem/set.MemoryMiB))
	}
	return c
}

// take simulates n pods of set (index si) on h exactly as assign would take
// them; in exact mode a fraction is only recorded (packs places it).
func (e *exSearch) take(h *simHost, set *PodSet, si int, n int64) {
	for range n {
		switch {
		case set.Milli > 0 && e.exact:
			h.items[h.nItems] = fracItem{milli: uint16(set.Milli), set: uint8(si)}
			h.nItems++
		case set.Milli > 0:
			i := bestShare(&h.milli, e.v.t.HostGPUCount(h.h), uint16(set.Milli))
			h.milli[i] -= uint16(set.Milli)
			h.mask &^= 1 << uint(i)
		case set.GPUs > 0:
			g := pickGPUs(h.mask, int(set.GPUs))
			h.mask &^= g
			for m := g; m != 0; m &= m - 1 {
				h.milli[bits.TrailingZeros64(m)] = 0
			}
		}
		h.cpu -= set.CPUMilli
		h.mem -= set.MemoryMiB
	}
}

// wholeSlices: every slice-level domain holds a multiple of set si's slice
// size of its pods.
func (e *exSearch) wholeSlices(si int) bool {
	set := &e.v.r.Sets[si]
	if set.SliceSize <= 1 {
		return true
	}
	t := e.v.t
	var dom topology.DomainID = -1
	n := int64(0)
	for j, c := range e.count[si][:len(e.hosts)] {
		d := topology.DomainID(e.hosts[j].h) // slices of hosts: each host its own domain
		if set.SliceLevel != e.v.hl {
			d = t.HostDomain(e.hosts[j].h, set.SliceLevel)
		}
		if d != dom {
			if n%int64(set.SliceSize) != 0 {
				return false
			}
			dom, n = d, 0
		}
		n += c
	}
	return n%int64(set.SliceSize) == 0
}
