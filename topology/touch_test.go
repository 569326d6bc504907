package topology

import "slices"

// touchProbe records what the touch log must report for one Delta: every
// host's free GPUs, shared milli and partly used GPUs before it.
type touchProbe struct {
	seq    uint64
	free   []int
	shared []int64
	part   [][PartialBuckets]int32
}

func (p *touchProbe) before(s *State) {
	n := s.Tree().NumHosts()
	p.seq = s.TouchSeq()
	p.free, p.shared, p.part = p.free[:0], p.shared[:0], p.part[:0]
	for h := range HostID(n) {
		p.free = append(p.free, s.HostFree(h))
		p.shared = append(p.shared, s.HostSharedMilli(h))
		p.part = append(p.part, s.HostPartialGPUs(h))
	}
}

// after returns a message if a host whose figures changed is missing from
// TouchedHosts, or its level-1 domain from Touched, or a host's free GPUs
// rose and FreeRaised says not ("" if all is well, or if the log
// overflowed).
func (p *touchProbe) after(s *State) string {
	hosts, ok := s.TouchedHosts(p.seq, nil)
	doms, ok2 := s.Touched(p.seq, nil)
	if !ok || !ok2 {
		return ""
	}
	t := s.Tree()
	for h := range HostID(t.NumHosts()) {
		if s.HostFree(h) > p.free[h] && !s.FreeRaised(p.seq) {
			return "host " + t.HostName(h) + "'s free GPUs rose but FreeRaised says not"
		}
		if s.HostFree(h) == p.free[h] && s.HostSharedMilli(h) == p.shared[h] && s.HostPartialGPUs(h) == p.part[h] {
			continue
		}
		if !slices.Contains(hosts, h) {
			return "host " + t.HostName(h) + " changed but TouchedHosts omits it"
		}
		d := t.HostDomain(h, 1)
		if d == 0 { // a host right under the root
			continue
		}
		if !slices.Contains(doms, d) {
			return "host " + t.HostName(h) + " changed but Touched omits " + t.DomainPath(d)
		}
	}
	return ""
}
