package blink

import "github.com/blinksched/blink/topology"

// A job's turn in the cycle starts with reads of records no other turn
// touched: its engine record, its pod sets, the State's record of its slot.
// Cold, each is a cache miss, and the turn waits for them one after the
// other before its mostly cache-resident placement and bind. Reading them a
// batch of turns ahead lets a batch's misses overlap instead: the first
// cycle of BenchmarkCycle/gpus=1M/pending=10k runs about a tenth faster
// with it (README, "The engine").

// lookAhead is how many queued jobs touchAhead reads at a time, and how far
// ahead.
const lookAhead = 16

// touchAhead is called at the turn of e.queue[i] for i a multiple of
// lookAhead: it reads the records of the queued jobs [i+lookAhead,
// i+2·lookAhead), and those of [0, lookAhead) too when i is 0. The queue
// walk has not written those positions yet (schedule keeps the jobs still
// pending in place, behind the walk).
func (e *Engine) touchAhead(i int) {
	n := len(e.queue)
	if i == 0 {
		e.touchJobs(e.queue[:min(lookAhead, n)])
	}
	e.touchJobs(e.queue[min(i+lookAhead, n):min(i+2*lookAhead, n)])
}

// touchJobs reads what the turns of slots read first, into e.touched so
// that the reads are not optimised away.
func (e *Engine) touchJobs(slots []int32) {
	var sum int32
	for _, slot := range slots {
		j := &e.jobs[slot]
		sum += j.spec.Priority + j.waitFor + int32(j.key)
		if len(j.spec.Sets) > 0 {
			sum += j.spec.Sets[0].Pods
		}
		if e.s.HasJob(topology.JobID(slot)) {
			sum++
		}
	}
	e.touched += sum
}
