package topology

import (
	"math/bits"
	"slices"
)

// HostMask is some of one host's GPUs: bit i is the host's i-th GPU.
type HostMask struct {
	Host HostID
	Mask uint64
}

// AppendAdmitted appends to dst the GPUs of the nominations that admit job
// id with attributes info (Nomination.Admits: its own, those of lower
// priority, those whose ready time it ends by), one entry per host, hosts
// ascending: the GPUs a placement of that job may take although they are not
// free. O(nominated GPUs · log); nothing when there are no nominations.
func (s *State) AppendAdmitted(dst []HostMask, id JobID, info *Job) []HostMask {
	n0 := len(dst)
	for i := range s.noms {
		n := &s.noms[i]
		if !n.live || !mayTake(id, info, &n.Nomination) {
			continue
		}
		h, lo, hi := HostID(-1), GPUID(0), GPUID(0)
		for _, g := range n.GPUs { // ascending: a host's GPUs come together
			if g < lo || g >= hi {
				h = s.t.GPUHost(g)
				lo, hi = GPUID(s.t.hostGPU[h]), GPUID(s.t.hostGPU[h+1])
				dst = append(dst, HostMask{Host: h})
			}
			dst[len(dst)-1].Mask |= 1 << uint(g-lo)
		}
	}
	out := dst[n0:]
	if len(out) < 2 { // none, or one host: nothing to sort or merge
		return dst
	}
	slices.SortFunc(out, func(a, b HostMask) int { return int(a.Host - b.Host) })
	k := 0
	for _, e := range out { // merge hosts of two nominations
		if k > 0 && out[k-1].Host == e.Host {
			out[k-1].Mask |= e.Mask
			continue
		}
		out[k] = e
		k++
	}
	return dst[:n0+k]
}

// Admitted is AppendAdmitted's answer for one job, with the range counts
// planners ask of it: how many of those GPUs a host range holds, and how
// many pods of g GPUs they can add to a capacity counted from free GPUs.
// Collect fills it, reusing its buffers; the zero value is empty. Mask
// keeps a cursor (and, asked often, an index) in it: one Admitted serves
// one caller at a time.
type Admitted struct {
	hosts  []HostMask // hosts ascending
	sum    []int64    // sum[i]: the GPUs of hosts[:i]
	next   int        // Mask's position after the host it last found: where an ascending walk looks first
	misses int        // Mask's binary searches since Collect
	at     []int32    // when built (Mask searched often): per host from hosts[0].Host on, 1 + its position, 0 for none
}

// Collect sets a to the GPUs job id with attributes info may take although
// they are nominated (AppendAdmitted).
func (a *Admitted) Collect(s *State, id JobID, info *Job) {
	a.hosts, a.sum, a.next, a.misses, a.at = a.hosts[:0], a.sum[:0], 0, 0, a.at[:0]
	if s.mayAdmit(id, info) { // else AppendAdmitted finds nothing: most jobs, placed behind nominees of their priority or higher
		a.collect(s, id, info)
	}
}

// nomBounds bound the live nominations by what mayTake asks of them, so
// that mayAdmit answers without a pass over them. They are recounted
// (boundsOfNoms) after every change of the nominations: by nominate and
// releaseNomination, once by expireNominations, and by the journal's
// rollback.
type nomBounds struct {
	live     bool   // some nomination is live
	minPrio  int32  // the lowest priority of a live nomination
	maxReady int64  // the latest ready time of one
	jobs     uint64 // bit id&63 of each one's job: a job whose bit is clear holds none (its record is not read)
}

// boundsOfNoms counts the nominations' bounds: O(nominations), after a
// change of one (rare next to the queries).
func (s *State) boundsOfNoms() nomBounds {
	b := nomBounds{}
	for i := range s.noms {
		n := &s.noms[i]
		switch {
		case !n.live:
		case !b.live:
			b = nomBounds{live: true, minPrio: n.Priority, maxReady: n.Ready, jobs: 1 << (uint(n.Job) & 63)}
		default:
			b.minPrio, b.maxReady = min(b.minPrio, n.Priority), max(b.maxReady, n.Ready)
			b.jobs |= 1 << (uint(n.Job) & 63)
		}
	}
	return b
}

// mayAdmit reports whether a live nomination admits job id with attributes
// info (mayTake), exactly, from the bounds and the job's own record: some
// nomination has a lower priority, or a ready time the job ends by, iff
// the lowest priority or the latest ready time does, and the job's own is
// linked from its record (read only if the job's bit is among the
// nominees'). AppendAdmitted appends something iff it is true (a live
// nomination names at least one GPU); TestMayAdmit checks it.
func (s *State) mayAdmit(id JobID, info *Job) bool {
	b := &s.nomB
	return b.live && (info.Priority > b.minPrio || info.HasEnd && info.End <= b.maxReady ||
		b.jobs&(1<<(uint(id)&63)) != 0 && uint(id) < uint(len(s.jobs)) && s.jobs[id].nom >= 0)
}

// collect is Collect once there are nominations (live or dead).
func (a *Admitted) collect(s *State, id JobID, info *Job) {
	a.hosts = s.AppendAdmitted(a.hosts, id, info)
	if len(a.hosts) == 0 {
		return // the common case: no nomination admits the job (GPUs reads no sums then)
	}
	a.sum = append(a.sum, 0)
	for _, e := range a.hosts {
		a.sum = append(a.sum, a.sum[len(a.sum)-1]+int64(bits.OnesCount64(e.Mask)))
	}
}

// Empty reports whether there are no such GPUs.
func (a *Admitted) Empty() bool { return len(a.hosts) == 0 }

// span returns the positions [i, j) of hosts [lo, hi).
func (a *Admitted) span(lo, hi HostID) (i, j int) {
	cmp := func(e HostMask, h HostID) int { return int(e.Host - h) }
	i, _ = slices.BinarySearchFunc(a.hosts, lo, cmp)
	j, _ = slices.BinarySearchFunc(a.hosts, hi, cmp)
	return i, j
}

// Mask returns host h's GPUs among them (bit i: the host's i-th GPU).
// O(log hosts), O(1) when h is at or just before the position after the
// host the last call found, as when a placement asks host after host in
// ascending order.
func (a *Admitted) Mask(h HostID) uint64 {
	n := len(a.hosts)
	if n == 0 {
		return 0
	}
	i := a.next
	switch {
	case i < n && a.hosts[i].Host == h:
	case (i == n || a.hosts[i].Host > h) && (i == 0 || a.hosts[i-1].Host < h):
		return 0 // between the last one found and the next: none
	case len(a.at) > 0:
		k := int(h - a.hosts[0].Host)
		if k < 0 || k >= len(a.at) || a.at[k] == 0 {
			return 0
		}
		i = int(a.at[k]) - 1
	default:
		var ok bool
		if i, ok = slices.BinarySearchFunc(a.hosts, h, func(e HostMask, h HostID) int { return int(e.Host - h) }); !ok {
			a.next = i
			a.searched()
			return 0
		}
		a.searched()
	}
	a.next = i + 1
	return a.hosts[i].Mask
}

// searched counts one of Mask's binary searches; once they are many for
// many hosts (out of order: a placement ranking hosts), it indexes the hosts
// by host id, so that Mask answers the rest in O(1). The index spans the
// hosts' ids: O(that span) once, as much as the searches it replaces.
func (a *Admitted) searched() {
	if a.misses++; a.misses < 64 || len(a.hosts) < 256 || len(a.at) > 0 {
		return
	}
	h0, span := a.hosts[0].Host, int(a.hosts[len(a.hosts)-1].Host-a.hosts[0].Host)+1
	if span > 16*len(a.hosts) {
		return // sparse: the searches stay cheaper
	}
	a.at = slices.Grow(a.at[:0], span)[:span]
	clear(a.at)
	for i, e := range a.hosts {
		a.at[e.Host-h0] = int32(i) + 1
	}
}

// NominatedAgainst returns host h's GPUs nominated for jobs that a job
// admitted to a may not displace: HostNominatedMask(h) less a.Mask(h) (a
// holds nominated GPUs only). O(1) on a host without nominated GPUs, else
// O(log hosts).
func (s *State) NominatedAgainst(h HostID, a *Admitted) uint64 {
	n := s.HostNominatedMask(h)
	if n == 0 {
		return 0
	}
	return n &^ a.Mask(h)
}

// GPUs counts them on hosts [lo, hi). O(log hosts).
func (a *Admitted) GPUs(lo, hi HostID) int64 {
	if a.Empty() {
		return 0
	}
	i, j := a.span(lo, hi)
	return a.sum[j] - a.sum[i]
}

// Pods bounds the pods of g GPUs they add on hosts [lo, hi) to a capacity
// counted from free GPUs: ⌈e/g⌉ on a host with e of them (⌊(f+e)/g⌋ −
// ⌊f/g⌋ ≤ ⌈e/g⌉ for any f). O(log hosts + hosts with some in the range).
func (a *Admitted) Pods(lo, hi HostID, g int) int64 {
	if a.Empty() {
		return 0
	}
	i, j := a.span(lo, hi)
	var n int64
	for _, e := range a.hosts[i:j] {
		n += int64((bits.OnesCount64(e.Mask) + g - 1) / g)
	}
	return n
}
