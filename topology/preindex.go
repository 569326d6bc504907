package topology

import (
	"fmt"
	"math/bits"
	"slices"
)

// The preemptible index: what a planner after the largest preemptible jobs
// of the least priority asks without reading every job.
//
//   - Per priority bucket (prioBucket, the grouping of PreemptibleBelow)
//     and size class (preClass: the bit length of the job's size, the last
//     class open-ended), a bitset over job ids of the live preemptible jobs
//     of that bucket and class, allocated for a bucket when its first
//     preemptible job comes; PreemptibleSizeWords ORs the ones a query
//     needs.
//   - The distinct priorities of live preemptible jobs with their counts,
//     in a table of prioSlots entries; LeastPreemptiblePriority reads it.
//     A job whose priority is new when the table is full is counted apart
//     (preOver), and while any is, that query scans the job view instead:
//     exact always, O(prioSlots) while at most prioSlots priorities are in
//     use at once (a Kubernetes cluster's priority classes).
//
// addJob and removeJob keep both with journaled writes (countPreSize);
// Check verifies them against the job table.

// preClasses is the number of size classes; prioSlots the table's entries.
const (
	preClasses = 16
	prioSlots  = 32
)

// preIndex is the index, part of the job view.
type preIndex struct {
	preClassW [prioBuckets * preClasses][]uint64 // per bucket·preClasses + class, bit j: job j is live, preemptible, of that bucket and class; nil for buckets never used
	prePrio   [prioSlots]int32                   // a slot's priority, meaningful while its count is positive
	prePrioN  [prioSlots]int32                   // a slot's count of live preemptible jobs of that priority
	preUsed   uint64                             // bit b: bucket b's bitsets are allocated
	prePrioHi int32                              // slots ever used: those at or past it are empty
	preHint   int32                              // the slot countPrio used last: looked at first (a hint, not journaled)
	preOver   int32                              // live preemptible jobs counted in no slot
}

// preClass is the size class of a job of size gpus: its bit length, the
// last class taking every larger size.
func preClass(gpus int64) int { return min(bits.Len64(uint64(max(gpus, 0))), preClasses-1) }

// countPreIndex adds delta (±1) for live preemptible job id of priority
// prio and size to the index, journaled: to the count of prio (its slot
// last used first, else countPrio) and to the bitset of its bucket and
// class, whose bitsets are allocated on the bucket's first job (a new array:
// no journal entry points into it, and a rollback leaves it empty).
// countPreSize's part, written out here without further calls.
func (s *State) countPreIndex(id JobID, prio int32, size int64, pb int, delta int32) {
	if i := s.preHint; uint32(i) < uint32(s.prePrioHi) && s.prePrio[i&(prioSlots-1)] == prio &&
		(delta > 0 || s.prePrioN[i&(prioSlots-1)] > 0) {
		s.w32(&s.prePrioN[i&(prioSlots-1)], s.prePrioN[i&(prioSlots-1)]+delta)
	} else {
		s.countPrio(prio, delta)
	}
	k := pb*preClasses + preClass(size)
	if s.preClassW[k] == nil {
		s.usePreBuckets(1<<uint(pb), len(s.jobPre))
	}
	w, bit := &s.preClassW[k][id>>6], uint64(1)<<(uint(id)&63)
	if nw := *w&^bit | b2u(delta > 0)*bit; nw != *w {
		s.w64(w, nw)
	}
}

// countPrio adds delta (±1) to the count of live preemptible jobs of
// priority prio, journaled: in prio's slot, else a new slot (delta > 0),
// else apart. A slot keeps its priority when its count falls to 0 (no
// other slot takes that priority) until a new priority needs it with every
// slot taken, so a priority whose jobs come and go keeps its slot, which
// preHint finds first. A removal from a slot at 0 is of a job counted apart.
func (s *State) countPrio(prio, delta int32) {
	i := s.preHint
	if i >= s.prePrioHi || s.prePrio[i] != prio {
		i = -1
		free := int32(-1)
		for k := range s.prePrioHi {
			if s.prePrio[k] == prio {
				i = k
				break
			}
			if free < 0 && s.prePrioN[k] == 0 {
				free = k
			}
		}
		if i < 0 && delta > 0 { // a slot for it: a fresh one, else one at 0
			switch {
			case s.prePrioHi < prioSlots:
				i = s.prePrioHi
				s.w32(&s.prePrioHi, i+1)
			case free >= 0:
				i = free
			}
			if i >= 0 {
				s.w32(&s.prePrio[i], prio)
			}
		}
	}
	if i < 0 || delta < 0 && s.prePrioN[i] == 0 {
		s.w32(&s.preOver, s.preOver+delta)
		return
	}
	s.preHint = i
	s.w32(&s.prePrioN[i], s.prePrioN[i]+delta)
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
// of two (2^14 for any minSize above it) and whose priority is below the
// end of prio's bucket (as PreemptibleBelow groups them): every such job of
// size at least minSize and priority at most prio, and maybe some smaller
// ones or of higher priority in prio's bucket, which the caller tells apart
// by JobSizes and JobPriorities. Its length is that of PreemptibleJobWords.
// O(jobs/64 · the buckets and size classes it reads).
func (s *State) PreemptibleSizeWords(dst []uint64, minSize int64, prio int32) []uint64 {
	n := (s.viewLen() + 63) / 64
	if cap(dst) < n {
		dst = make([]uint64, n)
	}
	dst = dst[:n]
	clear(dst)
	c := preClass(minSize)
	for b := range prioBucket(prio) + 1 {
		for _, w := range s.preClassW[b*preClasses+c : (b+1)*preClasses] {
			if w == nil {
				break // a bucket never used
			}
			w = w[:n]
			for i := range dst {
				dst[i] |= w[i]
			}
		}
	}
	return dst
}

// growPreIndex extends the bitsets of the buckets in use to at least words
// words (a quarter more when they must grow: their words past the job
// view's are zero).
func (x *preIndex) growPreIndex(words int) {
	for used := x.preUsed; used != 0; used &= used - 1 {
		b := bits.TrailingZeros64(used)
		if len(x.preClassW[b*preClasses]) >= words {
			continue
		}
		words := words + words/4 // ahead of the view: fewer, larger steps
		for i := b * preClasses; i < (b+1)*preClasses; i++ {
			x.preClassW[i] = append(x.preClassW[i], make([]uint64, words-len(x.preClassW[i]))...)
		}
	}
}

// usePreBuckets allocates the bitsets of the buckets in mask (bit b: bucket
// b) not in use yet, of words words (the job view's).
func (x *preIndex) usePreBuckets(mask uint64, words int) {
	mask &^= x.preUsed
	x.preUsed |= mask
	for ; mask != 0; mask &= mask - 1 {
		b := bits.TrailingZeros64(mask)
		for c := range preClasses {
			x.preClassW[b*preClasses+c] = make([]uint64, words)
		}
	}
}

// reservePreIndex makes room for words more words in each bitset in use.
func (x *preIndex) reservePreIndex(words int) {
	for i, w := range x.preClassW {
		if w != nil {
			x.preClassW[i] = slices.Grow(w, words)
		}
	}
}

// clonePreIndex copies the index, keeping the bitsets' spare room.
func (x *preIndex) clonePreIndex() preIndex {
	c := *x
	for i, w := range x.preClassW {
		if w != nil {
			c.preClassW[i] = cloneRoom(w)
		}
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
	for i, words := range s.preClassW {
		if words != nil && len(words) < len(s.jobPre) || (s.preClassW[i-i%preClasses] == nil) != (words == nil) {
			return fmt.Errorf("check: preemptible bucket %d, size class %d: %d words, the job view %d",
				i/preClasses, i%preClasses, len(words), len(s.jobPre))
		}
		for w := len(s.jobPre); w < len(words); w++ {
			if words[w] != 0 {
				return fmt.Errorf("check: preemptible bucket %d, size class %d: word %d past the job view is set",
					i/preClasses, i%preClasses, w)
			}
		}
	}
	count, total := map[int32]int32{}, int32(0)
	at := make([]int, s.viewLen()) // per job, 1 + the bitset holding it, 0 for none
	for j := range at {
		if r := &s.jobs[j]; r.live && r.info.Preemptible {
			at[j] = 1 + prioBucket(r.info.Priority)*preClasses + preClass(int64(s.jobSizes[j]))
			count[r.info.Priority]++
			total++
		}
	}
	held := 0
	for i, words := range s.preClassW {
		for w, x := range words {
			for ; x != 0; x &= x - 1 {
				if j := w<<6 | bits.TrailingZeros64(x); j >= len(at) || at[j] != 1+i {
					return fmt.Errorf("check: job %d in preemptible bucket %d, size class %d", j, i/preClasses, i%preClasses)
				}
				held++
			}
		}
	}
	if held != int(total) {
		return fmt.Errorf("check: the preemptible index holds %d jobs, %d are live and preemptible", held, total)
	}
	return s.checkPrioTable(count, total)
}

// checkPrioTable checks the priority table against count, the live
// preemptible jobs per priority, total in all: the slots in use hold
// distinct priorities, none counting more jobs than hold it, and they and
// preOver count every live preemptible job.
func (s *State) checkPrioTable(count map[int32]int32, total int32) error {
	seen, sum := map[int32]bool{}, s.preOver
	for i := range prioSlots {
		n, p := s.prePrioN[i], s.prePrio[i]
		switch {
		case n < 0 || n > 0 && int32(i) >= s.prePrioHi:
			return fmt.Errorf("check: priority slot %d counts %d (slots in use %d)", i, n, s.prePrioHi)
		case int32(i) < s.prePrioHi && seen[p]:
			return fmt.Errorf("check: priority %d in two slots", p)
		case n > count[p]:
			return fmt.Errorf("check: priority slot %d counts %d jobs of priority %d, %d exist", i, n, p, count[p])
		}
		seen[p] = seen[p] || int32(i) < s.prePrioHi
		sum += n
	}
	if s.preOver < 0 || sum != total {
		return fmt.Errorf("check: priority table counts %d preemptible jobs (%d apart), %d exist", sum, s.preOver, total)
	}
	return nil
}
