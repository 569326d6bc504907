package defrag

import (
	"slices"

	"github.com/blinksched/blink/topology"
)

// selectTargets finds the MaxDomains domains of level l (hosts at the host
// level) with the fewest GPUs missing for the request, sorted, among those
// with enough healthy GPUs. For whole-GPU requests it visits the children
// of the root best first (freeIndex) and skips those whose best domain
// cannot beat the targets held; fractional requests scan every domain.
// p.truncated records whether a domain was left out.
func (p *Planner) selectTargets(l topology.Level) {
	t := p.t
	p.heap, p.hpos, p.truncated = p.heap[:0], 0, false
	if p.need.frac > 0 || t.HostLevel() <= 1 {
		if l == t.HostLevel() {
			p.scanHosts(0, topology.HostID(t.NumHosts()))
		} else {
			lo, hi := t.LevelDomains(l)
			p.scanDomains(lo, hi)
		}
	} else {
		p.idx.update(p.s)
		groups := p.idx.groups(p.s, l)
		for _, g := range groups {
			if p.full() && max(p.need.whole-g.bound-p.extras.GPUs(t.Hosts(g.d)), 0) >= p.heap[0].key {
				p.truncated = true // no domain in it beats the targets held
				continue
			}
			switch {
			case l == t.HostLevel():
				p.scanHosts(t.Hosts(g.d))
			default:
				p.scanDomains(t.Descendants(g.d, l))
			}
		}
	}
	slices.SortFunc(p.heap, func(a, b target) int {
		if a.key != b.key {
			return cmpInt(a.key, b.key)
		}
		return int(a.hlo - b.hlo)
	})
}

// scanDomains offers domains [lo, hi) as targets.
func (p *Planner) scanDomains(lo, hi topology.DomainID) {
	s, t := p.s, p.t
	free := s.DomainFreeData()[lo:hi]
	need := p.need.whole*topology.FullGPU + p.need.frac
	for i, f := range free {
		d := lo + topology.DomainID(i)
		usable := int64(f)
		if !p.extras.Empty() {
			usable += p.extras.GPUs(t.Hosts(d))
		}
		var key int64
		if p.need.frac > 0 {
			key = p.missing(usable, s.SharedMilli(d))
		} else {
			key = max(p.need.whole-usable, 0)
		}
		if p.full() && key >= p.heap[0].key {
			p.truncated = true
			continue
		}
		if int64(s.HealthyGPUs(d))*topology.FullGPU < need {
			continue // cannot hold it whatever moves
		}
		if p.shortOfMovable(key, p.podCap(d, -1)) {
			continue
		}
		hlo, hhi := t.Hosts(d)
		p.pushTarget(target{key: key, scope: d, host: -1, hlo: hlo, hhi: hhi})
	}
}

// scanHosts offers hosts [lo, hi) as targets.
func (p *Planner) scanHosts(lo, hi topology.HostID) {
	s, t := p.s, p.t
	need := p.need.whole*topology.FullGPU + p.need.frac
	for h := lo; h < hi; h++ {
		usable := int64(s.HostFree(h)) + p.extras.GPUs(h, h+1)
		var key int64
		if p.need.frac > 0 {
			key = p.missing(usable, p.hostShared(h))
		} else {
			key = max(p.need.whole-usable, 0)
		}
		if p.full() && key >= p.heap[0].key {
			p.truncated = true
			continue
		}
		if s.HostHealth(h) != topology.Healthy {
			continue
		}
		if e := p.r.Eligible; e != nil && e[h>>6]&(1<<(uint(h)&63)) == 0 {
			continue
		}
		if int64(t.HostGPUCount(h)-popcount(s.HostFailedMask(h)))*topology.FullGPU < need {
			continue
		}
		if p.shortOfMovable(key, p.podCap(t.HostParent(h), h)) {
			continue
		}
		p.pushTarget(target{key: key, scope: t.HostParent(h), host: h, hlo: h, hhi: h + 1})
	}
}

// shortOfMovable reports, for a domain or host that misses key GPUs for the
// request (a lower bound) and holds podCap of its primary pods now, that no
// MaxMoves moves make room there: the largest movable jobs (p.most,
// topology.State.MovableGPUsBound) hold fewer GPUs than it misses, or than
// the primary pods it misses (a pod's room on a host needs at least one GPU
// freed there). Such a target is left out, from the aggregates alone; if
// all the movable jobs together would do, that is recorded (p.short: the
// reason is then NoPlan, not NoTarget).
func (p *Planner) shortOfMovable(key, podCap int64) bool {
	if !p.beyond(key, podCap, p.most) {
		return false
	}
	if !p.beyond(key, podCap, p.mostAll) {
		p.short = true
	}
	return true
}

// beyond reports that a target missing key GPUs and holding podCap primary
// pods stays short with jobs of most GPUs in all moved out.
func (p *Planner) beyond(key, podCap, most int64) bool {
	n := &p.need
	return key > most || n.primary > 0 && podCap+most < n.podsPrim
}

// missing is the lower bound on the GPUs to move out of a domain with free
// whole GPUs and shared free milli: whole GPUs the request needs beyond the
// free ones, and GPUs' worth of milli beyond all free milli.
func (p *Planner) missing(free, shared int64) int64 {
	n := &p.need
	whole := n.whole - free
	all := n.whole*topology.FullGPU + n.frac - free*topology.FullGPU - shared
	all = (all + topology.FullGPU - 1) / topology.FullGPU
	return max(whole, all, 0)
}

// hostShared is the free milli on host h's partly used usable GPUs.
func (p *Planner) hostShared(h topology.HostID) int64 {
	s, t := p.s, p.t
	lo, _ := t.HostGPUs(h)
	usable := ^(s.HostFailedMask(h) | s.HostNominatedMask(h))
	var n int64
	for i := range t.HostGPUCount(h) {
		if m := s.GPUMilli(lo + topology.GPUID(i)); m < topology.FullGPU && usable&(1<<uint(i)) != 0 {
			n += int64(m)
		}
	}
	return n
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// The target heap is a max-heap on (key, first host) of at most MaxDomains
// entries while scanning; selectTargets then sorts it ascending.

func (p *Planner) full() bool { return len(p.heap) >= p.cfg.MaxDomains }

func less(a, b *target) bool { return a.key < b.key || a.key == b.key && a.hlo < b.hlo }

func (p *Planner) pushTarget(tg target) {
	h := p.heap
	if len(h) >= p.cfg.MaxDomains {
		p.truncated = true
		if !less(&tg, &h[0]) {
			return
		}
		h[0] = tg
		down(h)
		return
	}
	h = append(h, tg)
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !less(&h[parent], &h[i]) {
			break
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
	p.heap = h
}

func down(h []target) {
	for i := 0; ; {
		l, big := 2*i+1, i
		if l < len(h) && less(&h[big], &h[l]) {
			big = l
		}
		if r := l + 1; r < len(h) && less(&h[big], &h[r]) {
			big = r
		}
		if big == i {
			return
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}
