package placement

import "slices"

// Exact packing of fractional pods inside a host, for the exhaustive search
// of gangs whose every pod set is fractional. The rule gives a fraction the
// GPU with the least free milli that holds it, set after set; two sets of
// different sizes can then strand milli on every GPU where another packing
// holds them all (pods of 400 and of 300 milli on three free GPUs: the rule
// puts two 400s on each of two GPUs and has room for three 300s only;
// 400+300+300 on two GPUs and 400+400 on the third holds four of each).
// When the search by the rule finds no distribution, exhaustive searches
// again taking each host's pods as a multiset that must pack into its GPUs'
// free milli (packs: a depth-first search, largest pods first), and the
// replay gives each pod the GPU the packing chose (Solver.forced).

// fracItem is one fractional pod a simulated host took: its milli, its pod
// set, and the GPU the packing gave it (packs with place).
type fracItem struct {
	milli uint16
	set   uint8
	gpu   uint8
}

// allFrac reports whether every pod set of the request is fractional, and
// there are at least two (for one set of equal pods the rule packs as well
// as any packing).
func (v *Solver) allFrac() bool {
	if len(v.r.Sets) < 2 {
		return false
	}
	for i := range v.r.Sets {
		if v.r.Sets[i].Milli == 0 {
			return false
		}
	}
	return true
}

// millLeft reports whether the hosts' GPUs have the milli the gang's pods
// ask for, in all: a packing needs at least that (a gang of fractions too
// large for the domain is refused before either search).
func (e *exSearch) millLeft() bool {
	var want, have int64
	for i := range e.v.r.Sets {
		want += int64(e.v.r.Sets[i].Pods) * int64(e.v.r.Sets[i].Milli)
	}
	for j := range e.hosts {
		if h := &e.hosts[j]; h.ok {
			for g := range e.v.t.HostGPUCount(h.h) {
				have += int64(h.milli[g])
			}
		}
	}
	return want <= have
}

// fracFails remembers, for one call (begin empties it), the single hosts
// where both searches failed, by what decides them: the host's free milli
// per GPU as a sorted multiset, when no pod set asks for CPU or memory. A
// required host level tries every host the bounds admit, and most are alike
// (all GPUs free, say): each kind is searched once.
type fracFails struct {
	sigs [8]fracSig
	n    int // sigs written, mod len(sigs)
}

type fracSig struct {
	gpus  int
	milli [8]uint16
}

// sig is e's one host's signature; ok is false when e is not a single
// host, or it has more than 8 GPUs, or a set asks for CPU or memory.
func (f *fracFails) sig(e *exSearch) (fracSig, bool) {
	if len(e.hosts) != 1 || !e.hosts[0].ok {
		return fracSig{}, false
	}
	for i := range e.v.r.Sets {
		if set := &e.v.r.Sets[i]; set.CPUMilli != 0 || set.MemoryMiB != 0 {
			return fracSig{}, false
		}
	}
	h := &e.hosts[0]
	g := fracSig{gpus: e.v.t.HostGPUCount(h.h)}
	if g.gpus > len(g.milli) {
		return fracSig{}, false
	}
	copy(g.milli[:], h.milli[:g.gpus])
	slices.Sort(g.milli[:g.gpus])
	return g, true
}

// has reports whether e's host is of a kind both searches failed on for
// this request.
func (f *fracFails) has(e *exSearch) bool {
	if f.n == 0 {
		return false
	}
	g, ok := f.sig(e)
	return ok && slices.Contains(f.sigs[:min(f.n, len(f.sigs))], g)
}

// add records that both searches failed on e's host (if it has a kind).
func (f *fracFails) add(e *exSearch) {
	if g, ok := f.sig(e); ok {
		f.sigs[f.n%len(f.sigs)] = g
		f.n++
	}
}

// packs reports whether the fractional pods h took fit its GPUs' free milli
// together; with place it also records in each item the GPU it takes. It
// counts its steps against the search's.
func (e *exSearch) packs(h *simHost, place bool) bool {
	var order, at [exhaustivePods]uint8
	for i := range h.nItems {
		order[i] = uint8(i)
	}
	slices.SortStableFunc(order[:h.nItems], func(a, b uint8) int { return int(h.items[b].milli) - int(h.items[a].milli) })
	free := h.milli // a copy
	if !e.pack(h, order[:h.nItems], at[:h.nItems], &free, e.v.t.HostGPUCount(h.h), 0) {
		return false
	}
	if place {
		for k, i := range order[:h.nItems] {
			h.items[i].gpu = at[k]
		}
	}
	return true
}

// pack puts items order[k:] of h into free (n GPUs), recording each one's
// GPU in at: largest first, skipping a GPU whose free milli equals one
// already tried for the same item (the same subtree).
func (e *exSearch) pack(h *simHost, order []uint8, at []uint8, free *gpuMilli, n, k int) bool {
	if k == len(order) {
		return true
	}
	if e.steps >= exhaustiveSteps {
		return false
	}
	e.steps++
	m := h.items[order[k]].milli
	var tried [exhaustivePods]uint16
	nt := 0
	for g := range n {
		f := free[g]
		if f < m || slices.Contains(tried[:nt], f) {
			continue
		}
		if nt < len(tried) {
			tried[nt] = f
			nt++
		}
		free[g] -= m
		at[k] = uint8(g)
		if e.pack(h, order, at, free, n, k+1) {
			return true
		}
		free[g] += m
	}
	return false
}

// placeItems records in every host's items the GPU its packing gives each
// (false if one is not found again).
func (e *exSearch) placeItems() bool {
	for j := range e.hosts {
		e.steps = 0
		if !e.packs(&e.hosts[j], true) {
			return false
		}
	}
	return true
}

// force makes the next fractions assign places take the GPUs h's packing
// chose for the pods of set si (Solver.forced, read by shareGPU).
func (e *exSearch) force(h *simHost, si int) {
	forced := e.v.forced[:0]
	for _, it := range h.items[:h.nItems] {
		if int(it.set) == si {
			forced = append(forced, it.gpu)
		}
	}
	e.v.forced = forced
}
