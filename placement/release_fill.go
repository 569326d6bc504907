package placement

import (
	"slices"

	"github.com/blinksched/blink/topology"
)

// Filling a rack (a domain whose children are hosts) that is asked for at
// least all it holds, once upper bounds are in play (released hosts): with
// released GPUs the domains' capacities are bounds, so fill asks a rack for
// its bound, which is often more than its hosts hold. Host capacities are
// exact, so the general path (bestChild, then fillChildren's fewest-hosts
// rule) then takes every host with room, each for all it holds, in index
// order: bestChild finds a host that holds all want pods only when that
// host holds all the rack's room; choose, asked for at least the sum of the
// hosts' capacities, takes each of them whole and sorts them by index. The
// shortfall makes fillFrom call track once a host took pods. fillHosts does
// that directly, without the candidates, for plain sets (plainCap).
//
// A rack no pod of this attempt went to yet (rackStamp) has its released
// hosts' overlays as installRel left them, and no other overlay: its exact
// capacity is histCap plus what its released hosts gained, a difference of
// two prefix sums (relCapSum, per GPUs per pod), and its hosts' capacities
// are their free counts plus those gains: no overlay is read.

// fillHosts places as many pods of the current set as rack d holds when want
// is at least that many; ok is false (nothing done) otherwise, or when the
// shortcut does not apply.
func (v *Solver) fillHosts(d topology.DomainID, want int64) (got int64, ok bool) {
	if v.legacy || !v.plain || v.exact || v.sliceS != 1 || v.usesProfile(want) {
		return 0, false
	}
	if lo, hi := v.t.Children(d); lo != hi {
		return 0, false
	}
	if len(v.rel) > 0 && v.rackStamp[d] != v.epoch {
		return v.fillFresh(d, want)
	}
	lo, hi := v.t.Hosts(d)
	caps := v.hostCaps[:0]
	total := int64(0)
	for h := lo; h < hi; h++ {
		c := v.plainCap(h)
		if total += c; total > want {
			v.hostCaps = caps
			return 0, false
		}
		caps = append(caps, c)
	}
	v.hostCaps = caps
	if total == 0 {
		return 0, true
	}
	v.touchRack(lo)
	for k, c := range caps { // assigning to a host changes no other host's capacity
		if c > 0 {
			v.assign(lo+topology.HostID(k), c)
		}
	}
	if total < want {
		v.track()
	}
	return total, true
}

// fillFresh is fillHosts for a rack no pod of this attempt went to, from
// the free counts and the released hosts' gains.
func (v *Solver) fillFresh(d topology.DomainID, want int64) (got int64, ok bool) {
	v.relCaps()
	lo, hi := v.t.Hosts(d)
	return v.fillFreshAt(d, want, v.histCap(d), v.relSearch(lo), v.relSearch(hi))
}

// fillFreshAt is fillFresh given rack d's capacity by the State alone
// (state: histCap) and its released hosts rel[a:b]; relCaps is done.
func (v *Solver) fillFreshAt(d topology.DomainID, want, state int64, a, b int) (got int64, ok bool) {
	total := state + v.relCapSum[b] - v.relCapSum[a]
	if total > want {
		return 0, false
	}
	if total == 0 {
		return 0, true
	}
	v.rackStamp[d], v.ovTaken = v.epoch, true
	if state == 0 && v.rx == nil { // only released hosts hold pods (stateCap is 0 for every host)
		v.fillReleased(a, b)
	} else {
		lo, hi := v.t.Hosts(d)
		v.fillRack(lo, hi, a, b)
	}
	if total < want {
		v.track()
	}
	return total, true
}

// fillReleased gives each released host rel[a:b] of a fresh rack all it
// holds (its gain: the State gives it nothing), in host order. Their
// overlays are as installRel left them, at the same index in v.ov. A host
// that takes one pod of all its free GPUs (a whole-host pod on a host
// freed whole) gets it here directly, as assign would give it: all of the
// overlay's GPUs (pickGPUs takes them all), no milli to clear when the
// request has no fractional pods (nothing reads it then), no CPU or memory
// (a plain set asks for none).
func (v *Solver) fillReleased(a, b int) {
	g := int(v.set.GPUs)
	direct := !v.fracs && (v.tracked || !v.last) // assign writes the overlay
	for ; a < b; a++ {
		c := v.relCapSum[a+1] - v.relCapSum[a]
		if c <= 0 {
			continue
		}
		o := &v.ov[a]
		if !direct || c != 1 || popcount(o.mask) != g {
			v.assign(o.h, c)
			continue
		}
		v.out[v.pos] = topology.Pod{Host: o.h, GPUs: o.mask}
		v.pos++
		o.mask = 0
	}
}

// fillRack gives each host [lo, hi) of a fresh rack all it holds: its
// capacity by the State plus, for the released hosts rel[a:b], its gain.
func (v *Solver) fillRack(lo, hi topology.HostID, a, b int) {
	free := v.s.HostFreeCounts()
	for h := lo; h < hi; h++ {
		c := v.stateCap(h, free[h])
		if a < b && v.rel[a].h == h {
			c += v.relCapSum[a+1] - v.relCapSum[a]
			a++
		}
		if c > 0 {
			v.assign(h, c)
		}
	}
}

// stateCap is host h's capacity for the current plain set by the State
// alone (k: its free count), as histCap counts it.
func (v *Solver) stateCap(h topology.HostID, k uint8) int64 {
	if k == 0 || !v.anyModel && !v.modelOK[v.t.HostModel(h)] {
		return 0
	}
	return v.perK[k]
}

// relCaps makes relCapSum the prefix sums, over the released hosts in host
// order, of what each gained for the current plain set: its capacity with
// its overlay as released (plainCap) minus its capacity by the State
// (stateCap). Computed once per release and GPUs per pod.
func (v *Solver) relCaps() {
	g := v.set.GPUs
	if v.relCapG == g {
		return
	}
	v.relCapG = g
	free := v.s.HostFreeCounts()
	sum := slices.Grow(v.relCapSum[:0], len(v.rel)+1)[:len(v.rel)+1]
	sum[0] = 0
	v.relCapSum = sum
	if v.relAll && v.anyModel && v.r.Eligible == nil && !v.r.Exclusive && !v.legacy {
		v.relCapsQuick(sum, free)
		return
	}
	for i := range v.rel {
		o := &v.rel[i]
		c := v.perK[popcount(o.mask)]
		if c > 0 && !v.hostOK(o.h) {
			c = 0
		}
		sum[i+1] = sum[i] + c - v.stateCap(o.h, free[o.h])
	}
}

// relCapsQuick is relCaps' loop when the State's hosts are all healthy
// (relAll) and the request takes any model, has no eligibility and is not
// exclusive: hostOK then only asks whether a job that stays holds the host
// exclusively, and stateCap is perK of the free count. Entries built by
// wholeEntries have both counts in relKeys, the exclusive hold folded in.
func (v *Solver) relCapsQuick(sum []int64, free []uint8) {
	perK := &v.perK
	if keys := v.relKeys; len(keys) == len(v.rel) {
		for i, q := range keys {
			sum[i+1] = sum[i] + perK[q[0]] - perK[q[1]]
		}
		return
	}
	for i := range v.rel {
		o := &v.rel[i]
		c := perK[popcount(o.mask)]
		if c > 0 {
			if j, held := v.s.HostExclusive(o.h); held && j != v.r.Job && !v.isGone(j) {
				c = 0
			}
		}
		sum[i+1] = sum[i] + c - perK[free[o.h]]
	}
}

// touchRack records that host h's rack took pods in this attempt: its
// overlays may differ from the released ones (fillFresh no longer applies).
// fill and fillHosts call it before assigning; assign's other callers need
// not: fillAll runs only with exact capacities (no released hosts), and
// exhaustive's replay ends its attempt.
func (v *Solver) touchRack(h topology.HostID) {
	if d := v.t.HostParent(h); int(d) < len(v.rackStamp) {
		v.rackStamp[d], v.ovTaken = v.epoch, true
	}
}
