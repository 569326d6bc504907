package blink

import "github.com/blinksched/blink/topology"

// Decision buffers sized ahead. A cycle appends its binds, waiting reasons
// and their pods to buffers the engine keeps (Decisions are valid until the
// next Cycle); grown by append inside a cycle, the first cycle over a long
// queue would spend a part of its time allocating and copying them (at a
// million GPUs and 10,000 queued jobs, ~10 MB). Submit instead makes room
// for the queue as it stands — a bind and a waiting reason per queued job,
// and the pods and pod sets of them all, and a bind's timer for each; and it
// has the State make room for the pods and job ids (topology.State.Grow) —
// so that the cycle only fills them.
// Growing replaces a buffer by a fresh, empty one: Decisions already
// returned keep the old one.

// queued counts what the queue's jobs would put in the decision buffers at
// most: an upper bound, raised by enqueue and recounted by each cycle.
type queued struct {
	pods, sets int
}

// roomFor grows the decision buffers to hold what the queue would produce.
// Amortized O(1) per Submit.
func (e *Engine) roomFor() {
	n := len(e.queue)
	if cap(e.dec.Binds) < n {
		e.dec.Binds = make([]Bind, 0, growCap(cap(e.dec.Binds), n))
	}
	if cap(e.dec.Pending) < n {
		e.dec.Pending = make([]Waiting, 0, growCap(cap(e.dec.Pending), n))
	}
	if cap(e.podBuf) < e.inQueue.pods {
		e.podBuf = make([]topology.Pod, 0, growCap(cap(e.podBuf), e.inQueue.pods))
	}
	if cap(e.i32Buf) < e.inQueue.sets {
		e.i32Buf = make([]int32, 0, growCap(cap(e.i32Buf), e.inQueue.sets))
	}
	e.timers[tBind].room(n)
	e.s.Grow(e.inQueue.pods, len(e.jobs)-int(e.s.JobIDBound()))
}

// room makes space for n more timers, keeping those queued.
func (tq *timerQueue) room(n int) {
	live := len(tq.q) - tq.head
	if cap(tq.q)-len(tq.q) >= n {
		return
	}
	q := make([]timer, live, growCap(cap(tq.q), live+n))
	copy(q, tq.q[tq.head:])
	tq.q, tq.head = q, 0
}

// growCap is the capacity a buffer of capacity c grows to for n: at least
// double, so that Submits grow it O(log n) times.
func growCap(c, n int) int { return max(n, 2*c) }

// add counts job j's pods, each set's at most as many as tree t has GPUs
// and hosts together: room is made for jobs that can bind, not for any
// count a spec may ask (a larger job, if it binds at all, grows the buffers
// in its cycle).
func (q *queued) add(t *topology.Tree, j *job) {
	most := t.NumGPUs() + t.NumHosts()
	for i := range j.spec.Sets {
		q.pods += min(int(j.spec.Sets[i].Pods), most)
	}
	q.sets += len(j.spec.Sets)
}
