package blink

import (
	"slices"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Repair of a job whose pod sets have slices (SliceSize pods sharing one
// domain of SliceLevel). The required domain alone does not hold a faulted
// pod's replacement to its slice: a slice that keeps healthy pods binds
// the replacements of its faulted ones to the domain those pods are in;
// a slice whose pods all faulted may go to any domain of its level inside
// the required one, all of it in that one. A set's slices constrain only
// below the required level (above it they hold already).
//
// Spares: each replacement is taken from the spares of the hosts its
// slice allows (a whole faulted slice: the domain of its first
// replacement's spare). Placement: one call per group of replacements —
// each domain bound by surviving pods is a group, placed inside that
// domain (a host: an eligible set of that host alone); the rest, whole
// slices as sliced pod sets, is placed inside the required domain. Each
// call counts free what the job's own earlier groups left, so the hosts
// earlier groups took are closed to later ones; Apply checks the whole
// repair again, so a plan whose groups collide on a host (possible only
// where a group must use one host) is rejected whole, never applied.

// sliceOf returns the ranks [first, first+size) of the slice that holds
// rank r of a job with pod sets sets and required level req, and the
// slice's level; ok false when r's set has no slices that constrain it.
func sliceOf(sets []topology.PodSet, req topology.Level, r int32) (first, size int32, l topology.Level, ok bool) {
	start := int32(0)
	for i := range sets {
		set := &sets[i]
		if r < start+set.Count {
			if set.SliceSize <= 1 || set.SliceLevel <= max(req, 0) {
				return 0, 0, 0, false
			}
			first = start + (r-start)/set.SliceSize*set.SliceSize
			return first, min(set.SliceSize, start+set.Count-first), set.SliceLevel, true
		}
		start += set.Count
	}
	return 0, 0, 0, false
}

// slicedFaults reports whether a faulted rank of the job (rs.ranks) lies
// in a slice that constrains it; info is the job's record.
func (e *Engine) slicedFaults(info *topology.Job) bool {
	for _, r := range e.rs.ranks {
		if _, _, _, ok := sliceOf(info.Sets, info.Required, r); ok {
			return true
		}
	}
	return false
}

// survivor returns a rank of [first, first+size) that did not fault, or -1.
func (e *Engine) survivor(first, size int32) int32 {
	for r := first; r < first+size; r++ {
		if _, faulted := slices.BinarySearch(e.rs.ranks, r); !faulted {
			return r
		}
	}
	return -1
}

// replRange returns the hosts where the replacement of faulted rank
// rs.ranks[i] may go, within the scope's hosts [lo, hi): its slice's
// domain when the slice has surviving pods, or when the slice faulted
// whole and an earlier rank of it has its replacement in rs.repl.
func (e *Engine) replRange(info *topology.Job, i int, lo, hi topology.HostID) (topology.HostID, topology.HostID) {
	rs := &e.rs
	r := rs.ranks[i]
	first, size, l, ok := sliceOf(info.Sets, info.Required, r)
	if !ok {
		return lo, hi
	}
	if s := e.survivor(first, size); s >= 0 {
		return hostRange(e.t, rs.pods[s].Host, l)
	}
	if r == first { // the first of a whole faulted slice: anywhere in scope
		return lo, hi
	}
	return hostRange(e.t, rs.repl[i-int(r-first)].Host, l) // ranks of a faulted slice are consecutive in rs.ranks
}

// replGroup is a group of faulted ranks placed by one call: those bound to
// the domain of level l that holds host h, or (l < 0) the rest.
type replGroup struct {
	l topology.Level
	h topology.HostID
}

// groupRanks assigns each faulted rank a group (rs.grp, parallel to
// rs.ranks; rs.groups[0] is the rest) and returns the number of groups.
func (e *Engine) groupRanks(info *topology.Job) int {
	rs := &e.rs
	rs.groups = append(rs.groups[:0], replGroup{l: -1})
	rs.grp = rs.grp[:0]
	for _, r := range rs.ranks {
		g := 0
		if first, size, l, ok := sliceOf(info.Sets, info.Required, r); ok {
			if s := e.survivor(first, size); s >= 0 {
				g = e.groupOf(rs.pods[s].Host, l)
			}
		}
		rs.grp = append(rs.grp, int32(g))
	}
	return len(rs.groups)
}

// groupOf returns the group of the domain of level l that holds host h,
// adding it if new.
func (e *Engine) groupOf(h topology.HostID, l topology.Level) int {
	rs := &e.rs
	lo, _ := hostRange(e.t, h, l)
	for g := 1; g < len(rs.groups); g++ {
		if gr := rs.groups[g]; gr.l == l {
			if glo, _ := hostRange(e.t, gr.h, l); glo == lo {
				return g
			}
		}
	}
	rs.groups = append(rs.groups, replGroup{l: l, h: h})
	return len(rs.groups) - 1
}

// groupSets writes into e.sets the pod sets of group g's faulted ranks in
// rank order (rs.ranks), one set per run of a shape within a pod set of the
// job; whole faulted slices of group 0 keep their slices.
func (e *Engine) groupSets(info *topology.Job, g int) {
	rs := &e.rs
	sets := e.sets[:0]
	lastSet := -1
	for i, r := range rs.ranks {
		if int(rs.grp[i]) != g {
			continue
		}
		si := setOfRank(info.Sets, r)
		p := &rs.pods[r]
		ps := placement.PodSet{Pods: 1, GPUs: int32(p.NumGPUs()), Milli: p.Milli, CPUMilli: p.CPUMilli, MemoryMiB: p.MemoryMiB}
		if _, size, l, ok := sliceOf(info.Sets, info.Required, r); ok && g == 0 {
			ps.SliceSize, ps.SliceLevel = size, l
		}
		if last := len(sets) - 1; last >= 0 && si == lastSet && sets[last].GPUs == ps.GPUs && sets[last].Milli == ps.Milli &&
			sets[last].CPUMilli == ps.CPUMilli && sets[last].MemoryMiB == ps.MemoryMiB && sets[last].SliceSize == ps.SliceSize {
			sets[last].Pods++
			continue
		}
		sets = append(sets, ps)
		lastSet = si
	}
	e.sets = sets
}

// setOfRank returns the index of the pod set that holds rank r (-1: none,
// a job recorded without sets).
func setOfRank(sets []topology.PodSet, r int32) int {
	start := int32(0)
	for i := range sets {
		if r < start+sets[i].Count {
			return i
		}
		start += sets[i].Count
	}
	return -1
}

// placeGroups places the faulted ranks of job slot group by group (see
// above) inside scope as if the jobs gone held nothing, the groups bound
// to a domain first, writing the replacements to rs.repl in the order of
// rs.ranks; it reports whether every group found room.
func (e *Engine) placeGroups(slot int32, scope topology.DomainID, gone []topology.JobID) bool {
	rs := &e.rs
	n := e.groupRanks(&rs.info)
	rs.repl = slices.Grow(rs.repl[:0], len(rs.ranks))[:len(rs.ranks)]
	rs.taken = rs.taken[:0]
	defer e.reopen()
	for g := n - 1; g >= 0; g-- {
		if e.groupSets(&rs.info, g); len(e.sets) == 0 {
			continue // group 0 holds no rank
		}
		req := e.repairRequest(slot)
		at := scope
		single := g > 0 && rs.groups[g].l >= e.t.HostLevel()
		switch gr := rs.groups[g]; {
		case single:
			req.Eligible = e.oneHost(gr.h)
		case g > 0:
			at = e.t.HostDomain(gr.h, gr.l)
			fallthrough
		default:
			if len(rs.taken) > 0 {
				req.Eligible = rs.open
			}
		}
		ok, _, err := e.v.PlaceWithout(e.s, &req, at, gone, &e.plan)
		if single {
			rs.one[rs.groups[g].h>>6] = 0
		}
		if err != nil {
			e.failed("repair placement", err) // a bug, as in fromPlacement
			return false
		}
		if !ok {
			return false
		}
		k := 0
		for i := range rs.ranks {
			if int(rs.grp[i]) == g {
				rs.repl[i] = e.plan.Pods[k]
				k++
				e.take(rs.repl[i].Host)
			}
		}
	}
	return true
}

// repairRequest is the request for the pod sets e.sets of job slot's
// replacements: the job's priority, run time, exclusivity, models and
// policy, no level.
func (e *Engine) repairRequest(slot int32) placement.Request {
	info, j := &e.rs.info, &e.jobs[slot]
	return placement.Request{Job: topology.JobID(slot), Priority: info.Priority, Preemptible: info.Preemptible,
		HasEnd: info.HasEnd, End: info.End, Sets: e.sets, Exclusive: info.Exclusive, Models: j.spec.Models, Policy: j.spec.Policy}
}

// oneHost returns an eligible-host bitset of host h alone (rs.one; its bit
// is cleared after use).
func (e *Engine) oneHost(h topology.HostID) []uint64 {
	rs := &e.rs
	if rs.one == nil {
		rs.one = make([]uint64, (e.t.NumHosts()+63)/64)
	}
	rs.one[h>>6] = 1 << (uint(h) & 63)
	return rs.one
}

// take closes host h to the later groups (rs.open, rs.taken).
func (e *Engine) take(h topology.HostID) {
	rs := &e.rs
	if rs.open == nil {
		rs.open = make([]uint64, (e.t.NumHosts()+63)/64)
		for i := range rs.open {
			rs.open[i] = ^uint64(0)
		}
	}
	rs.open[h>>6] &^= 1 << (uint(h) & 63)
	rs.taken = append(rs.taken, h)
}

// reopen opens the hosts take closed.
func (e *Engine) reopen() {
	rs := &e.rs
	for _, h := range rs.taken {
		rs.open[h>>6] |= 1 << (uint(h) & 63)
	}
	rs.taken = rs.taken[:0]
}
