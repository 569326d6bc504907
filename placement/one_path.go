package placement

import "github.com/blinksched/blink/topology"

// onePath is placeOne's last descent for one pod of one shape, kept so
// that the next such pod need not descend again: BestFit's choice at a
// level is the child with the smallest key (a domain's capacity, then its
// free GPUs; a host's free GPUs, then its capacity), then the lowest index,
// and a child's key changes only when a host below it is touched
// (topology's touch log). So the path found at touch seq stays the
// descent's answer as long as no node on it got a worse key and no touched
// sibling of a node now beats it; where one does, the descent starts again
// from that level. (A pod of whole GPUs placed on the path only makes its
// keys smaller. A fraction's key is the scans' bound, which a pod placed
// can raise: with one GPU at 299 milli free and one free GPU, a 1-milli pod
// on the free one takes the bound for 300-milli pods from 3 to 4; so
// pathRefresh reads those keys again.)
// Every untouched sibling's key is above the stored key of the path's node,
// and the stored key is at least the node's own, so a stored key may stay
// behind while keys only fall.
// The path keeps only the chosen child of each level: when that child
// empties, the next choice is scanned for. Runner-ups kept by the scans
// would save a rescan only where no sibling was touched since, and mostly
// the first time the chosen child empties after a scan; tracking the
// second best in the domain scans alone cost the first cycle 0.7M
// instructions, more than all the domain rescans it could save.
// Used only where bestChild's choice is the smallest key read from the
// aggregates (pathOK): whole GPUs with exact capacities, or plain fractions
// by the scans' own bounds. Tests compare it with descending every time
// (SetNoOnePath).
type onePath struct {
	s     *topology.State
	seq   uint64       // the State's TouchSeq when the keys were read
	rx    *Restriction // the closed hosts the keys leave out (nil: none)
	rxGen uint64       // and their generation then
	valid bool
	node  []int32           // [l]: the child chosen at level l, 1…hl (at hl a host)
	key   []uint64          // [l]: its key then (pathKey), or above it where keys only fell (pathEmptied); exact at hl
	lo    []topology.HostID // [l]: its hosts, [lo, hi)
	hi    []topology.HostID
}

// pathTouches is how many touches since the last descent onePath looks
// through before it descends afresh instead: each costs about as much as a
// level's scan. BenchmarkCycle's first cycle (cycleprobe -cycle under
// callgrind) took 95.3M instructions at 4, 93.6M at 8, 92.8M at 16, 93.1M
// at 32, 93.8M at 64 and 94.1M at 128; with the keys read bottom-up
// (pathEmptied), 53.8M at 12, 53.6M at 16 and 20, 53.9M at 24 and 54.0M at
// 32. Past it, choosing the root's child afresh and looking only through
// the touches inside it when it is the path's saved 0.9M in scans but cost
// as much to sort out those touches.
const pathTouches = 16

// pathOK reports whether placeOne's descent for the current set may use
// and keep a onePath: one pod, BestFit, no eligibility other than a
// Restriction's, no nominations, profile or model limit, and either whole
// GPUs with exact capacities or a plain fraction (plainFrac), so that
// bestChild's choice at every level is the smallest pathKey.
func (v *Solver) pathOK() bool {
	set, r := v.set, v.r
	whole := v.exact && set.GPUs > 0 && set.Milli == 0
	frac := v.plainFrac() && (r.Eligible == nil || v.rx != nil) && !r.Exclusive && len(v.ov) == 0
	return !v.noPath && (whole || frac) && v.anyModel && r.Policy == BestFit &&
		v.extra.Empty() && len(v.rel) == 0 && !v.usesProfile(1)
}

// pathFor returns the onePath of the current set's shape (shapeIndex),
// sized for the tree; restricted requests keep theirs apart.
func (v *Solver) pathFor() *onePath {
	all := &v.paths
	if v.rx != nil {
		all = &v.pathsRx
	}
	p := shapeSlot(all, v.shapeIndex())
	if n := int(v.hl) + 1; len(p.node) != n {
		*p = onePath{node: make([]int32, n), key: make([]uint64, n), lo: make([]topology.HostID, n), hi: make([]topology.HostID, n)}
	}
	return p
}

// pathKey is BestFit's key of node i at level l for one pod of the current
// set, as bestChild's scans order children: a domain's capacity (for a
// fraction, the aggregates' bound) then its free GPUs, a host's free GPUs
// then its capacity; noKey if it holds no pod. A restricted request's are
// the open hosts' figures.
func (v *Solver) pathKey(l topology.Level, i int32) uint64 {
	if l == v.hl {
		h := topology.HostID(i)
		f := v.s.HostFree(h)
		cp := v.perK[f]
		if v.set.Milli > 0 {
			cp = v.fracHostCap(h, int64(f))
		}
		if cp < 1 || v.rx != nil && v.rx.closed(h) {
			return noKey
		}
		return uint64(f)<<32 | uint64(cp)
	}
	if v.rx != nil {
		return v.domainKeyRx(topology.DomainID(i))
	}
	hist, nm, nb := v.s.HistogramData()
	free := int64(v.s.DomainFreeData()[i])
	g := int(v.set.GPUs)
	var cp int64
	switch {
	case v.set.Milli > 0:
		cp = v.fracBound(topology.DomainID(i))
	case nm != 1:
		cp = v.histCap(topology.DomainID(i))
	case g == 1: // one GPU a pod: the free GPUs
		cp = free
	default:
		row := hist[int(i)*nb : int(i)*nb+nb]
		for k := g; k < nb; k++ {
			cp += int64(row[k]) * v.perK[k]
		}
	}
	return fitKey(cp, free, 1)
}

// domainKeyRx is pathKey of domain d for a restricted request.
func (v *Solver) domainKeyRx(d topology.DomainID) uint64 {
	if v.set.Milli > 0 {
		return fitKey(v.fracBound(d), v.domFree(d), 1)
	}
	return fitKey(v.histCap(d), v.domFree(d), 1)
}

// pathFrom returns the first level whose choice p no longer knows (1:
// descend from the root; hl+1: p's host is the answer), bringing p's keys
// up to date above it. Only nodes with a touched host below them can have
// changed: the others keep their keys.
func (v *Solver) pathFrom(p *onePath) topology.Level {
	s := v.s
	if !p.valid || p.s != s || s.TouchesLost(p.seq) || s.TouchSeq()-p.seq > pathTouches ||
		p.rx != v.rx || v.rx != nil && p.rxGen != v.rx.gen {
		return 1
	}
	hosts, second, _ := s.TouchedSpans(p.seq) // read in place, copied only across the ring's end
	if len(second) > 0 {
		hosts = append(append(v.pathHosts[:0], hosts...), second...)
		v.pathHosts = hosts
	}
	in := topology.Level(0) // the deepest path node a touched host is below
	lv := v.pathLeave[:0]   // per touched host: the level where it leaves the path
	for _, x := range hosts {
		l := p.leave(x)
		lv = append(lv, l)
		in = max(in, l-1)
	}
	v.pathLeave = lv
	var from topology.Level
	if v.set.Milli == 0 && !s.FreeRaised(p.seq) {
		from = v.pathEmptied(p, in)
	} else {
		from = v.pathRefresh(p, in)
	}
	lastL, lastC := topology.Level(0), int32(-1)
	for i, x := range hosts {
		l := lv[i] // there x's ancestor is a sibling of the path's node
		if l >= from {
			continue
		}
		c := int32(x)
		if l != v.hl {
			c = int32(v.t.HostDomain(x, l))
		}
		if l == lastL && c == lastC {
			continue // a run of touches under one sibling: compared once
		}
		lastL, lastC = l, c
		if k := v.pathKey(l, c); pathBeats(p, l, c, k) {
			p.key[l] = v.pathKey(l, p.node[l]) // a bound (pathEmptied): the node's own key decides
			if pathBeats(p, l, c, k) {
				from = l
			}
		}
	}
	return from
}

// pathBeats reports whether child c of key k at level l comes before the
// path's node there, its key p.key[l].
func pathBeats(p *onePath, l topology.Level, c int32, k uint64) bool {
	return k < p.key[l] || k == p.key[l] && c < p.node[l]
}

// pathRefresh brings the keys of the path's nodes at levels 1…in, those
// with a touched host below them, up to date, and returns the first whose
// node no longer holds a pod or whose key grew (something left below it),
// hl+1 if none.
func (v *Solver) pathRefresh(p *onePath, in topology.Level) topology.Level {
	for l := topology.Level(1); l <= in; l++ {
		k := v.pathKey(l, p.node[l])
		if k == noKey || k > p.key[l] {
			return l
		}
		p.key[l] = k
	}
	return v.hl + 1
}

// pathEmptied is pathRefresh when no host's free GPUs rose since the path's
// last use and the pods take whole GPUs: keys then only fall (pathKey's
// capacities and free GPUs grow with the hosts' free GPUs), so the stored
// ones stay bounds of the present ones, enough to compare siblings with
// (pathFrom reads a node's own key only when a sibling's reaches the
// bound), except where a node holds no pod any more; and a node holds one
// if a node below it does. So it reads keys from the deepest touched node
// up only while they are empty, and returns the first level whose node
// holds no pod (hl+1: none).
func (v *Solver) pathEmptied(p *onePath, in topology.Level) topology.Level {
	from := v.hl + 1
	for l := in; l >= 1; l-- {
		k := v.pathKey(l, p.node[l])
		if k != noKey {
			p.key[l] = k
			break
		}
		from = l
	}
	return from
}

// leave returns the first level whose path node does not hold host x
// (hl+1 if all do: x is the path's host).
func (p *onePath) leave(x topology.HostID) topology.Level {
	lo, hi := p.lo, p.hi[:len(p.lo)]
	l := 1
	for l < len(lo) && x >= lo[l] && x < hi[l] {
		l++
	}
	return topology.Level(l)
}

// pathSet records child c chosen at level l.
func (v *Solver) pathSet(p *onePath, l topology.Level, c int32) {
	p.node[l] = c
	if v.ckeyOK { // the scan that chose c counted it
		p.key[l] = v.ckey
	} else {
		p.key[l] = v.pathKey(l, c)
	}
	if v.checkKeys && p.key[l] != v.pathKey(l, c) {
		v.badKeys++
	}
	if l == v.hl {
		p.lo[l], p.hi[l] = topology.HostID(c), topology.HostID(c)+1
	} else {
		p.lo[l], p.hi[l] = v.t.Hosts(topology.DomainID(c))
	}
}
