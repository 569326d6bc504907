package topology

// The touch log lets a reader that caches per-domain or per-host figures (a
// placement Solver's index over the root's children, a Restriction's sums
// over its closed hosts) catch up with a State in time proportional to what
// changed: every change to a host's free GPUs, shared milli or partly used
// GPUs appends the host to a ring of TouchLogSize entries. It is not part of
// the State's value: snapshots omit it, Check ignores it, a rolled-back Delta
// leaves its touches (a reader then recomputes figures that did not change,
// which is harmless). TouchLogSize is how many touches the ring holds: a
// reader that falls further behind (TouchesLost) must start over. 8,192
// (32 KiB) outlasts two block gangs (2,304 hosts each) between a rack gang
// and the next: at 4,096 the placement Solver's index of 13,952 racks was
// rebuilt once more in BenchmarkCycle's first cycle (0.7M instructions of
// 89M, cycleprobe under callgrind); 16,384 saves nothing more there.
const TouchLogSize = 8192

type touchLog struct {
	seq    uint64
	raised uint64 // seq just after the last touch that raised its host's free GPUs
	ids    [TouchLogSize]HostID
}

// touch records that host h's free GPUs, shared milli or partly used GPUs
// changed.
func (s *State) touch(h HostID) {
	s.touches.ids[s.touches.seq%TouchLogSize] = h
	s.touches.seq++
}

// raise records that the last touch raised its host's free GPUs.
func (s *State) raise() { s.touches.raised = s.touches.seq }

// FreeRaised reports whether a host's free GPUs rose since TouchSeq
// returned since (or the log no longer covers it: TouchesLost). If not, no
// host's free GPUs are more than they were then, so a reader's figures
// that grow with them (capacities for pods of whole GPUs) can only have
// fallen. O(1).
func (s *State) FreeRaised(since uint64) bool {
	return s.touches.raised > since || s.TouchesLost(since)
}

// TouchSeq is the number of touches so far: pass it to Touched later.
func (s *State) TouchSeq() uint64 { return s.touches.seq }

// TouchesLost reports whether the touch log no longer covers everything
// since TouchSeq returned since: more changed than it holds, or the State
// was overwritten (UnmarshalBinary). A reader that caches per-host data by
// HostGeneration must then start over too: a snapshot may bring a host back
// to a generation it had with other content. O(1).
func (s *State) TouchesLost(since uint64) bool {
	return s.touches.seq-since > TouchLogSize || since > s.touches.seq
}

// Touched appends to dst the level-1 domains (children of the root) whose
// free GPUs, histograms, shared milli or partly used GPUs changed since
// TouchSeq returned since, possibly with repeats (none for hosts right
// under the root). ok is false when more changed than the log holds: the
// caller must then recompute everything.
func (s *State) Touched(since uint64, dst []DomainID) (_ []DomainID, ok bool) {
	first, second, ok := s.TouchedSpans(since)
	if !ok {
		return dst, false
	}
	var lo, n uint32 // the last level-1 domain's hosts [lo, lo+n): a run of touches there is one entry
	dst = s.t.touchedDomains(dst, first, &lo, &n)
	return s.t.touchedDomains(dst, second, &lo, &n), true
}

// touchedDomains appends to dst the level-1 domains of hosts, once for a
// run of hosts in the last domain appended ([*lo, *lo+*n)).
func (t *Tree) touchedDomains(dst []DomainID, hosts []HostID, lo, n *uint32) []DomainID {
	l, k := *lo, *n
	for _, h := range hosts {
		if uint32(h)-l < k { // in the run's domain
			continue
		}
		d := t.HostDomain(h, 1)
		if d == 0 { // a host right under the root
			continue
		}
		l, k = uint32(t.domHostLo[d]), uint32(t.domHosts[d])
		dst = append(dst, d)
	}
	*lo, *n = l, k
	return dst
}

// TouchedSpans is TouchedHosts without the copy: the hosts touched since
// TouchSeq returned since, in order, are first's then second's, both read
// from the log itself (read-only, valid until the next change). ok is false
// when more changed than the log holds.
func (s *State) TouchedSpans(since uint64) (first, second []HostID, ok bool) {
	if s.TouchesLost(since) {
		return nil, nil, false
	}
	lo, hi := since%TouchLogSize, s.touches.seq%TouchLogSize
	if s.touches.seq-since == TouchLogSize || lo > hi { // the touches wrap around the ring's end
		return s.touches.ids[lo:], s.touches.ids[:hi], true
	}
	return s.touches.ids[lo:hi], nil, true
}

// TouchedHosts appends to dst the hosts whose free GPUs, shared milli or
// partly used GPUs changed since TouchSeq returned since, possibly with
// repeats. ok is false when more changed than the log holds: the caller
// must then recompute everything.
func (s *State) TouchedHosts(since uint64, dst []HostID) (_ []HostID, ok bool) {
	first, second, ok := s.TouchedSpans(since)
	return append(append(dst, first...), second...), ok
}
