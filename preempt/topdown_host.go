package preempt

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// The top-down construction's hosts (topdown.go): the capacity each host V
// touches has for the request with V gone, what a host loses when one
// victim goes back, and the irreducibility check.

// tdHost is what the construction keeps per host V touches, stamped with
// the construction's epoch (tdEp).
type tdHost struct {
	ep   uint32
	seen uint32 // the last tdLoss that counted this host (tdSeen)
	head int32  // V's pods on the host, chained through candLinks
	cap  int32  // the host's capacity for the request with V gone
}

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
// when q is the only pod there that holds GPUs (whole GPUs, every other GPU
// unused): the host's healthy GPUs in pods less what the histograms count
// for it. No other pod of V holds GPUs there, so it needs no record
// (tdHost) — unless the host is held exclusively: then a pod of the same
// job that holds no GPU (CPU or memory only) frees the host's unused GPUs
// too, and without one record per host the two would count them twice, so
// such a host takes the record. A pod of every GPU of its host on a cluster
// with no failure and no nomination (tdPlain) gives them all, and none was
// free: no read of the State (another pod of its job there frees nothing
// more).
func (p *Planner) tdSole(q *topology.Pod) (int64, bool) {
	if q.Milli != 0 {
		return 0, false
	}
	s, h := p.s, q.Host
	n := p.t.UniformHostGPUs()
	if n == 0 {
		n = p.t.HostGPUCount(h)
	}
	all := uint64(1)<<uint(n) - 1
	if n == 64 {
		all = ^uint64(0)
	}
	if q.GPUs == all && p.tdPlain {
		return int64(p.tdPer[n]), true
	}
	if q.GPUs|s.HostUnusedMask(h) != all {
		return 0, false
	}
	if _, held := s.HostExclusive(h); held {
		return 0, false // see above
	}
	base := int64(p.tdPer[s.HostFree(h)])
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
	return int64(p.tdPer[bits.OnesCount64(usable)]) - base, true
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
		return p.tdPer[bits.OnesCount64(usable)]
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
	return p.tdPer[bits.OnesCount64(share&^fixed)]
}

// tdLoss is what the request loses on the hosts of candidate c, just taken
// out of V (their records keep the capacities with c in V). A host where no
// other pod of V is goes back to what the State's histograms count for it.
func (p *Planner) tdLoss(c int32) int64 {
	if p.tdWholeHosts(c) {
		return p.tdWholeGain(c)
	}
	loss := int64(0)
	if p.tdSeen++; p.tdSeen == 0 { // wrapped: clear the stamps
		for h := range p.tdAcc {
			p.tdAcc[h].seen = 0
		}
		p.tdSeen = 1
	}
	lo, hi := p.tdPods(c)
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
			loss += int64(a.cap) - int64(p.tdPer[p.s.HostFree(h)])
		} else {
			loss += int64(a.cap - p.tdCap(h, a))
		}
	}
	return loss
}
