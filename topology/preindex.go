package topology

import (
	"fmt"
	"math/bits"
	"slices"
)

// The preemptible index: what a planner after the largest preemptible jobs
// of the least priority asks without reading every job.
//
//   - Per size class (preClass: the bit length of the job's size, the last
//     class open-ended), a bitset over job ids of the live preemptible jobs
//     of that class; PreemptibleSizeWords ORs the classes a query needs.
//   - The distinct priorities of live preemptible jobs with their counts,
//     in a table of prioSlots entries; LeastPreemptiblePriority reads it.
//     A job whose priority is new when the table is full is counted apart
//     (preOver), and while any is, that query scans the job view instead:
//     exact always, O(prioSlots) while at most prioSlots priorities are in
//     use at once (a Kubernetes cluster's priority classes).
//
// addJob and removeJob keep both with journaled writes (setJobView and
// countPreSize); Check verifies them against the job table.

// preClasses is the number of size classes; prioSlots the table's entries.
const (
	preClasses = 16
	prioSlots  = 32
)

// preIndex is the index, part of the job view.
type preIndex struct {
	preClassW [preClasses][]uint64 // per class, bit j: job j is live, preemptible, of that class
	prePrio   [prioSlots]int32     // a slot's priority, meaningful while its count is positive
	prePrioN  [prioSlots]int32     // a slot's count of live preemptible jobs of that priority
	prePrioHi int32                // slots ever used: those at or past it are empty
	preOver   int32                // live preemptible jobs counted in no slot
}

// preClass is the size class of a job of size gpus: its bit length, the
// last class taking every larger size.
func preClass(gpus int64) int { return min(bits.Len64(uint64(max(gpus, 0))), preClasses-1) }

// indexPre sets (on) or clears job id's bit in the bitset of size's class,
// journaled.
func (s *State) indexPre(id JobID, size int64, on bool) {
	w, bit := &s.preClassW[preClass(size)][id>>6], uint64(1)<<(uint(id)&63)
	if nw := *w&^bit | b2u(on)*bit; nw != *w {
		s.w64(w, nw)
	}
}

// countPrio adds delta (±1) to the count of live preemptible jobs of
// priority prio, journaled: in prio's slot, else a new slot (delta > 0),
// else apart.
func (s *State) countPrio(prio, delta int32) {
	free := int32(-1)
	for i := range s.prePrioHi {
		switch {
		case s.prePrioN[i] == 0:
			if free < 0 {
				free = i
			}
		case s.prePrio[i] == prio:
			s.w32(&s.prePrioN[i], s.prePrioN[i]+delta)
			return
		}
	}
	if delta > 0 && free < 0 && s.prePrioHi < prioSlots {
		free = s.prePrioHi
		s.w32(&s.prePrioHi, free+1)
	}
	if delta > 0 && free >= 0 {
		s.w32(&s.prePrio[free], prio)
		s.w32(&s.prePrioN[free], 1)
		return
	}
	s.w32(&s.preOver, s.preOver+delta)
}

// LeastPreemptiblePriority returns the least priority at or above atLeast
// of a live preemptible job, and false if there is none. O(32) while at
// most 32 distinct priorities are in use at once, else O(jobs/64 + live
// preemptible jobs).
func (s *State) LeastPreemptiblePriority(atLeast int32) (int32, bool) {
	least, ok := int32(0), false
	take := func(p int32) {
		if p >= atLeast && (!ok || p < least) {
			least, ok = p, true
		}
	}
	if s.preOver == 0 {
		for i := range s.prePrioHi {
			if s.prePrioN[i] > 0 {
				take(s.prePrio[i])
			}
		}
		return least, ok
	}
	for w, x := range s.PreemptibleJobWords() {
		for ; x != 0; x &= x - 1 {
			take(s.jobPrio[w<<6|bits.TrailingZeros64(x)])
		}
	}
	return least, ok
}

// PreemptibleSizeWords writes to dst (grown as needed) and returns the
// words of a bitset over job ids, with bit j set for each live preemptible
// job j whose size (JobSizes) is at least minSize rounded down to a power
// of two (2^14 for any minSize above it): every job of size at least
// minSize, and maybe some smaller ones, which the caller tells apart by
// JobSizes. Its length is that of PreemptibleJobWords. O(jobs/64 · the
// size classes above minSize's).
func (s *State) PreemptibleSizeWords(dst []uint64, minSize int64) []uint64 {
	n := (s.viewLen() + 63) / 64
	if cap(dst) < n {
		dst = make([]uint64, n)
	}
	dst = dst[:n]
	c := preClass(minSize)
	copy(dst, s.preClassW[c][:n])
	for _, w := range s.preClassW[c+1:] {
		w = w[:n]
		for i := range dst {
			dst[i] |= w[i]
		}
	}
	return dst
}

// growPreIndex extends the class bitsets to words words.
func (x *preIndex) growPreIndex(words int) {
	for c := range x.preClassW {
		if k := words - len(x.preClassW[c]); k > 0 {
			x.preClassW[c] = append(x.preClassW[c], make([]uint64, k)...)
		}
	}
}

// reservePreIndex makes room for words more words in each class bitset.
func (x *preIndex) reservePreIndex(words int) {
	for c := range x.preClassW {
		x.preClassW[c] = slices.Grow(x.preClassW[c], words)
	}
}

// clonePreIndex copies the index, keeping the bitsets' spare room.
func (x *preIndex) clonePreIndex() preIndex {
	c := *x
	for i := range c.preClassW {
		c.preClassW[i] = cloneRoom(x.preClassW[i])
	}
	return c
}

// preIndexBytes is the index's share of MemoryBytes.
func (x *preIndex) preIndexBytes() int {
	n := 0
	for _, w := range x.preClassW {
		n += bytesOf(w)
	}
	return n
}

// checkPreIndex verifies the index against the job table: each class
// bitset holds exactly the live preemptible jobs of its class; the table's
// slots in use name distinct priorities, none counting more jobs than hold
// it, and they and preOver count every live preemptible job.
func (s *State) checkPreIndex() error {
	for c, words := range s.preClassW {
		if len(words) != len(s.jobPre) {
			return fmt.Errorf("check: preemptible size class %d: %d words, the job view %d", c, len(words), len(s.jobPre))
		}
	}
	count, total := map[int32]int32{}, int32(0)
	for j := range s.viewLen() {
		r := &s.jobs[j]
		pre := r.live && r.info.Preemptible
		size := int64(s.jobSizes[j])
		for c := range s.preClassW {
			want := pre && c == preClass(size)
			if got := s.preClassW[c][j>>6]&(1<<(uint(j)&63)) != 0; got != want {
				return fmt.Errorf("check: job %d: in preemptible size class %d %v, want %v", j, c, got, want)
			}
		}
		if pre {
			count[r.info.Priority]++
			total++
		}
	}
	return s.checkPrioTable(count, total)
}

// checkPrioTable checks the priority table against count, the live
// preemptible jobs per priority, total in all.
func (s *State) checkPrioTable(count map[int32]int32, total int32) error {
	seen, sum := map[int32]bool{}, s.preOver
	for i := range prioSlots {
		n, p := s.prePrioN[i], s.prePrio[i]
		switch {
		case n < 0 || n > 0 && int32(i) >= s.prePrioHi:
			return fmt.Errorf("check: priority slot %d counts %d (slots in use %d)", i, n, s.prePrioHi)
		case n > 0 && seen[p]:
			return fmt.Errorf("check: priority %d in two slots", p)
		case n > count[p]:
			return fmt.Errorf("check: priority slot %d counts %d jobs of priority %d, %d exist", i, n, p, count[p])
		}
		seen[p] = n > 0 || seen[p]
		sum += n
	}
	if s.preOver < 0 || sum != total {
		return fmt.Errorf("check: priority table counts %d preemptible jobs (%d apart), %d exist", sum, s.preOver, total)
	}
	return nil
}
