package defrag

import (
	"github.com/blinksched/blink/topology"
)

// Exhaustive destinations. The solver gives one destination per move, its
// best fit; when an earlier move's destination is what blocks a later move,
// another destination may do. On clusters with at most exhaustiveHosts hosts
// outside the target, every destination of a job is enumerated (up to
// maxDests): each assignment of its pods to hosts (identical pods of a set
// as a multiset, in host order, so each assignment comes once) that keeps
// its required level and slices, with whole GPUs taken lowest first (whole
// GPUs of a host are interchangeable) and fractions best fit. This makes
// MakeRoom exact in its model on small clusters, which the oracle test
// checks; on large clusters a search that would need it is reported as not
// proven (Result.Exact false).
const (
	exhaustiveHosts = 16
	maxDests        = 1024
)

// destBuf holds the destinations of one move: count placements of n pods.
type destBuf struct {
	pods  []topology.Pod
	n     int
	count int
}

// enumDests fills p.dests[len(p.seq)] with every destination of job id in
// the State the moves so far leave; false if the cluster is too large, or
// there are more than maxDests of them.
func (p *Planner) enumDests(id topology.JobID) bool {
	if !p.small {
		return false
	}
	m := p.moverOf(id)
	if !m.ok {
		return true
	}
	depth := len(p.seq)
	for len(p.dests) <= depth {
		p.dests = append(p.dests, destBuf{})
	}
	d := &p.dests[depth]
	d.pods, d.n, d.count = d.pods[:0], len(m.pods), 0
	gone := sortedWith(p.moveGone, p.seqJobs, id)
	p.moveGone = gone
	t, s := p.t, p.s
	// The hosts that may take the job: outside the target, healthy, of its
	// model; as the moves so far leave them.
	p.vhHost, p.vhs = p.vhHost[:0], p.vhs[:0]
	for h := range topology.HostID(t.NumHosts()) {
		if h >= p.tg.hlo && h < p.tg.hhi || s.HostHealth(h) != topology.Healthy || t.HostModel(h) != m.model[0] {
			continue
		}
		p.vhHost = append(p.vhHost, h)
		p.vhs = append(p.vhs, vhost{})
		p.buildVHost(h, gone, depth, &p.vhs[len(p.vhs)-1])
	}
	e := enumerator{p: p, m: m, d: d, pods: append(p.fitBuf[:0], m.pods...)}
	e.setOf = e.setOf[:0]
	for si, set := range m.req.Sets {
		for range set.Pods {
			e.setOf = append(e.setOf, si)
		}
	}
	// Groups of hosts: one domain of the job's required level each.
	l := m.info.Required
	for lo := 0; lo < len(p.vhHost); {
		hi := lo + 1
		for hi < len(p.vhHost) && sameGroup(t, l, p.vhHost[lo], p.vhHost[hi]) {
			hi++
		}
		e.lo, e.hi = lo, hi
		if !e.assign(0, lo) {
			p.fitBuf = e.pods
			return false
		}
		lo = hi
	}
	p.fitBuf = e.pods
	return true
}

// sameGroup reports whether hosts a and b share a domain of level l (all
// hosts do for no level).
func sameGroup(t *topology.Tree, l topology.Level, a, b topology.HostID) bool {
	switch {
	case l <= 0:
		return true
	case l >= t.HostLevel():
		return a == b
	}
	return t.HostDomain(a, l) == t.HostDomain(b, l)
}

type enumerator struct {
	p      *Planner
	m      *mover
	d      *destBuf
	pods   []topology.Pod // the assignment being built (shapes from the job's pods)
	setOf  []int          // pod set of each pod
	lo, hi int            // the group's hosts in p.vhHost
}

// assign chooses a host for pod k and the rest, from host index from on
// when pod k is identical to pod k-1 (a multiset); false when maxDests is
// passed.
func (e *enumerator) assign(k, from int) bool {
	p := e.p
	if k == len(e.pods) {
		if e.d.count >= maxDests {
			return false
		}
		e.d.pods = append(e.d.pods, e.pods...)
		e.d.count++
		return true
	}
	set := &e.m.req.Sets[e.setOf[k]]
	start := e.lo
	if k > 0 && e.setOf[k] == e.setOf[k-1] {
		start = from
	}
	first := k // the first pod of k's slice
	if set.SliceSize > 1 {
		setStart := k
		for setStart > 0 && e.setOf[setStart-1] == e.setOf[k] {
			setStart--
		}
		first = setStart + (k-setStart)/int(set.SliceSize)*int(set.SliceSize)
	}
	orig := e.m.pods[k]
	for i := start; i < e.hi; i++ {
		h := p.vhHost[i]
		if first < k && !sameGroup(p.t, set.SliceLevel, h, e.pods[first].Host) {
			continue
		}
		saved := p.vhs[i]
		pod := topology.Pod{Host: h, GPUs: lowBits(orig.NumGPUs()), Milli: orig.Milli,
			CPUMilli: orig.CPUMilli, MemoryMiB: orig.MemoryMiB}
		if orig.Milli > 0 {
			pod.GPUs = 1 << 63 // never free: fit picks the best GPU
		}
		if !p.vhs[i].fit(&pod, p.t.HostGPUCount(h), e.m.info.Exclusive) {
			continue
		}
		e.pods[k] = pod
		ok := e.assign(k+1, i)
		p.vhs[i] = saved
		if !ok {
			return false
		}
	}
	return true
}

// lowBits is a mask of the n lowest bits.
func lowBits(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return uint64(1)<<uint(n) - 1
}
