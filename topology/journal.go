package topology

import "slices"

// journal records the old value of every write while a multi-step Delta is
// applied, so a failing step can restore the State exactly (rollback replays
// each typed log backwards; every location lives in one log, so its oldest
// value is restored last). Domain aggregates are sums over hosts: they are
// journaled as host summary changes and restored by propagating each back. Pointers stay valid because Apply reserves every
// slice that could grow before the first write.
type journal struct {
	on   bool
	u64  []jw[uint64]
	i32  []jw[int32]
	u32  []jw[uint32]
	u16  []jw[uint16]
	u8   []jw[uint8]
	pods []jw[podRec]
	jobs []jw[jobRec]
	noms []jw[nomRec]
	sets []jw[PodSet] // job records' pod sets, overwritten in place (ownSets)
	sums []sumEntry   // host summary changes: aggregates are restored by propagating them back
	pres []preEntry   // preemptible holdings added: restored by adding them back negated
	excl []exclEntry
}

// exclEntry: host h became held exclusively (sign 1) or stopped (-1).
type exclEntry struct {
	h    HostID
	sign int32
}

type sumEntry struct {
	h    HostID
	b, a hostSum
}

type preEntry struct {
	h           HostID
	prio, delta int32
}

type jw[T any] struct {
	p *T
	v T
}

// reset empties the journal for a Delta that places pods pods; for a large
// gang with room for what that writes (about two pod records, two 64-bit
// words and three 32-bit words a pod), so that the first such gang a State
// journals allocates each log once instead of growing it by repeated copies.
func (j *journal) reset(pods int) {
	if pods > 1024 {
		j.room(pods)
	}
	j.u64, j.i32, j.u32 = j.u64[:0], j.i32[:0], j.u32[:0]
	j.u16, j.u8, j.pods, j.jobs, j.noms = j.u16[:0], j.u8[:0], j.pods[:0], j.jobs[:0], j.noms[:0]
	j.sets = j.sets[:0]
	j.sums, j.pres, j.excl = j.sums[:0], j.pres[:0], j.excl[:0]
}

//go:noinline
func (j *journal) room(pods int) {
	j.u64 = slices.Grow(j.u64[:0], 2*pods)
	j.i32 = slices.Grow(j.i32[:0], 3*pods)
	j.pods = slices.Grow(j.pods[:0], 2*pods)
}

func undo[T any](log []jw[T]) {
	for i := len(log) - 1; i >= 0; i-- {
		*log[i].p = log[i].v
	}
}

// rollback restores the State; the journal must be off (s.jr.on false).
func (j *journal) rollback(s *State) {
	for i := len(j.sums) - 1; i >= 0; i-- {
		e := &j.sums[i]
		s.propagate(e.h, &e.a, &e.b)
	}
	for i := len(j.pres) - 1; i >= 0; i-- {
		e := &j.pres[i]
		s.addPre(e.h, e.prio, -e.delta)
	}
	for i := len(j.excl) - 1; i >= 0; i-- {
		s.addExcl(j.excl[i].h, -j.excl[i].sign)
	}
	undo(j.u64)
	undo(j.i32)
	undo(j.u32)
	undo(j.u16)
	undo(j.u8)
	undo(j.pods)
	undo(j.jobs)
	undo(j.noms)
	if len(j.noms) > 0 {
		s.nomB = s.boundsOfNoms()
	}
	undo(j.sets)
}

// Journaled writes. Every write to State goes through one of these. A
// write that leaves the value as it was is not journaled: there is nothing
// to restore (a later write of the location journals the same old value).

func (s *State) w64(p *uint64, v uint64) {
	if s.jr.on && *p != v {
		s.jr.u64 = append(s.jr.u64, jw[uint64]{p, *p})
	}
	*p = v
}

func (s *State) w32(p *int32, v int32) {
	if s.jr.on && *p != v {
		s.jr.i32 = append(s.jr.i32, jw[int32]{p, *p})
	}
	*p = v
}

func (s *State) wu32(p *uint32, v uint32) {
	if s.jr.on && *p != v {
		s.jr.u32 = append(s.jr.u32, jw[uint32]{p, *p})
	}
	*p = v
}

func (s *State) w16(p *uint16, v uint16) {
	if s.jr.on && *p != v {
		s.jr.u16 = append(s.jr.u16, jw[uint16]{p, *p})
	}
	*p = v
}

func (s *State) w8(p *uint8, v uint8) {
	if s.jr.on && *p != v {
		s.jr.u8 = append(s.jr.u8, jw[uint8]{p, *p})
	}
	*p = v
}

// podW journals pod slot i's whole record and returns it for writing: the
// fields written through it are restored with the record by a rollback.
// Writing fields in place, rather than a modified copy of the record, keeps
// the record off the stack (a copy written field by field and read back
// whole stalls the processor's store forwarding).
func (s *State) podW(i int32) *podRec {
	p := &s.pods[i]
	if s.jr.on {
		s.jr.pods = append(s.jr.pods, jw[podRec]{p, *p})
	}
	return p
}

// jobW is podW for job id's record.
func (s *State) jobW(id JobID) *jobRec {
	p := &s.jobs[id]
	if s.jr.on {
		s.jr.jobs = append(s.jr.jobs, jw[jobRec]{p, *p})
	}
	return p
}

func (s *State) wSet(p *PodSet, v PodSet) {
	if s.jr.on {
		s.jr.sets = append(s.jr.sets, jw[PodSet]{p, *p})
	}
	*p = v
}

func (s *State) wNom(i int32, v nomRec) {
	p := &s.noms[i]
	if s.jr.on {
		s.jr.noms = append(s.jr.noms, jw[nomRec]{p, *p})
	}
	*p = v
}

// setBits writes bits [lo, lo+n) of w to v (n ≤ 64), journaled. The write
// of the last word comes last, so nothing lives across its journal append.
func (s *State) setBits(w []uint64, lo, n int, v uint64) {
	if n == 0 {
		return
	}
	m := hostMask(n)
	v &= m
	i, off := lo>>6, uint(lo)&63
	if int(off)+n > 64 { // the host's GPUs straddle two words
		sh := 64 - off
		if nw := (w[i+1] &^ (m >> sh)) | v>>sh; nw != w[i+1] {
			s.w64(&w[i+1], nw)
		}
	}
	if nw := (w[i] &^ (m << off)) | v<<off; nw != w[i] {
		s.w64(&w[i], nw)
	}
}

// clearMask clears the bits of mask m in w's bits [lo, lo+n) (n ≤ 64, m
// within them), journaled, and without setBits's reads and writes back when
// the journal is off.
func (s *State) clearMask(w []uint64, lo, n int, m uint64) {
	if s.jr.on {
		s.setBits(w, lo, n, getBits(w, lo, n)&^m)
		return
	}
	andNotBits(w, lo, n, m)
}

// setMask is clearMask setting the bits.
func (s *State) setMask(w []uint64, lo, n int, m uint64) {
	if s.jr.on {
		s.setBits(w, lo, n, getBits(w, lo, n)|m)
		return
	}
	orBits(w, lo, n, m)
}

// andNotBits clears the bits of mask m in w's bits [lo, lo+n) (n ≤ 64, m
// within them), unjournaled. An empty mask reads nothing: a host without
// GPUs may start past w's last word.
func andNotBits(w []uint64, lo, n int, m uint64) {
	if m == 0 {
		return
	}
	i, off := lo>>6, uint(lo)&63
	w[i] &^= m << off
	if int(off)+n > 64 { // the host's GPUs straddle two words
		w[i+1] &^= m >> (64 - off)
	}
}

// orBits is andNotBits setting the bits.
func orBits(w []uint64, lo, n int, m uint64) {
	if m == 0 {
		return
	}
	i, off := lo>>6, uint(lo)&63
	w[i] |= m << off
	if int(off)+n > 64 { // the host's GPUs straddle two words
		w[i+1] |= m >> (64 - off)
	}
}

// putBits is setBits unjournaled, for the journal-free commits of plain
// hosts (commitMask).
func putBits(w []uint64, lo, n int, v uint64) {
	if n == 0 {
		return
	}
	m, i, off := hostMask(n), lo>>6, uint(lo)&63
	v &= m
	w[i] = w[i]&^(m<<off) | v<<off
	if int(off)+n > 64 { // the host's GPUs straddle two words
		w[i+1] = w[i+1]&^(m>>(64-off)) | v>>(64-off)
	}
}

// clearRange clears bits [lo, hi) of w a word at a time, unjournaled.
func clearRange(w []uint64, lo, hi int) {
	for lo < hi {
		off := uint(lo) & 63
		n := min(hi-lo, 64-int(off))
		w[lo>>6] &^= hostMask(n) << off
		lo += n
	}
}
