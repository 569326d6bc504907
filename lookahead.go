package blink

import (
	"unsafe"

	"github.com/blinksched/blink/internal/cpu"
	"github.com/blinksched/blink/topology"
)

// A job's turn in the cycle starts with reads of records no other turn
// touched: its engine record, its pod sets, the State's record of its slot.
// Cold, each is a cache miss, and the turn would wait for them one after the
// other before its mostly cache-resident placement and bind. The walk asks
// the processor for them ahead instead (cpu.Prefetch: a hint that neither
// waits nor faults), so that their misses overlap with earlier turns' work:
// for a job's records 2·lookAhead turns before its turn, and for its pod
// sets, whose address is in the engine record, lookAhead turns before it,
// once that record has arrived. See README, "The engine", for what this
// measured.

// lookAhead is the distance in turns between the prefetches of a job's
// records, of its pod sets, and its turn.
const lookAhead = 16

// prefetchFirst is called before the walk: it asks for the records of the
// first 2·lookAhead queued jobs and for the pod sets of the first
// lookAhead, which no turn's prefetchAhead asks for.
func (e *Engine) prefetchFirst() {
	q := e.queue
	for k := range min(2*lookAhead, len(q)) {
		e.prefetchRecord(q[k])
	}
	for k := range min(lookAhead, len(q)) {
		e.prefetchSets(q[k])
	}
}

// prefetchAhead is called at the turn of e.queue[i]: it asks for the records
// of the queued job 2·lookAhead turns ahead and for the pod sets of the one
// lookAhead turns ahead, whose records were asked for lookAhead turns ago
// (before the walk, by prefetchFirst, for every job up to there). The queue
// walk has not written those positions yet (schedule keeps the jobs still
// pending in place, behind the walk). prefetchRecord's calls are written
// out here: one call a turn, not two.
func (e *Engine) prefetchAhead(i int) {
	q := e.queue
	if k := i + 2*lookAhead; k < len(q) {
		slot := q[k]
		cpu.PrefetchRange(unsafe.Pointer(&e.jobs[slot]), unsafe.Sizeof(job{}))
		e.s.PrefetchJob(topology.JobID(slot))
	}
	if k := i + lookAhead; k < len(q) {
		e.prefetchSets(q[k])
	}
}

// prefetchRecord asks for the engine's and the State's records of job slot.
func (e *Engine) prefetchRecord(slot int32) {
	cpu.PrefetchRange(unsafe.Pointer(&e.jobs[slot]), unsafe.Sizeof(job{}))
	e.s.PrefetchJob(topology.JobID(slot))
}

// prefetchSets asks for the first pod set of job slot (its record was asked
// for lookAhead turns ago).
func (e *Engine) prefetchSets(slot int32) {
	if sets := e.jobs[slot].spec.Sets; len(sets) > 0 {
		cpu.Prefetch(unsafe.Pointer(&sets[0]))
	}
}
