package blink

// The per-cycle memo of failures. Within one cycle capacity only shrinks
// (binds and nominations take GPUs; nothing is freed until the embedder
// reports), so a request shape that failed stays failed for the rest of the
// cycle: later jobs of the same shape are answered from the memo without a
// placement call. The key is everything that decides whether a job's
// smallest size fits: its pod sets at their minimum, levels, exclusivity,
// models, policy, whether it is preemptible (spare hosts), and which of the
// live nominations admit it (a bitmask over the engine's nominees; with more
// than 64 nominations the memo is off). Preemption failures are memoised
// separately, keyed by the shape and the priority. Whatever breaks the
// monotonicity — a nomination added or dropped (a nominee placed frees the
// rest of its nomination), defragmentation moves — clears the memo. A table
// of open addressing cleared by bumping an epoch.

const (
	memoPlace   uint8 = 1
	memoPreempt uint8 = 2
)

type memoEntry struct {
	epoch  uint32
	kind   uint8
	rep    int32 // the job that failed first
	h      uint64
	mask   uint64
	prio   int32
	reason Reason
}

type memo struct {
	t     []memoEntry // len is a power of two
	n     int
	epoch uint32
	// seen has bit shapeBit(j, kind) set for every entry of this epoch (job
	// j's shape, of that kind, whatever its mask): a lookup whose bit is clear
	// misses (mayHit), without a call, a probe, or the nominations' mask.
	// Most lookups miss: the job fits. seenKey is the same for the full key
	// (mask included: mayHitKey), which a lookup then asks.
	seen, seenKey [4]uint64
}

func (m *memo) next() {
	m.epoch++
	m.n = 0
	m.seen, m.seenKey = [4]uint64{}, [4]uint64{}
	if m.epoch == 0 {
		clear(m.t)
		m.epoch = 1
	}
}

func memoHash(j *job, kind uint8, mask uint64) uint64 {
	h := j.key ^ uint64(kind)*0x9e3779b97f4a7c15
	h ^= mask * 0xbf58476d1ce4e5b9
	if kind == memoPreempt {
		h ^= uint64(uint32(j.spec.Priority)) * 0x94d049bb133111eb
	}
	h ^= h >> 31
	return h
}

// shapeBit is the bit of seen for job j's shape and kind k: the top byte of
// their hash (the mask left out, so that mayHit needs none).
func shapeBit(j *job, k uint8) uint64 { return (j.key ^ uint64(k)) * 0xbf58476d1ce4e5b9 >> 56 }

// mayHit reports whether lookup may find job j's shape for kind k, under
// some mask: false if it will not (small enough to inline).
func (m *memo) mayHit(j *job, k uint8) bool {
	if m.n == 0 {
		return false
	}
	b := shapeBit(j, k)
	return m.seen[b>>6]&(1<<(b&63)) != 0
}

// mayHitKey is mayHit for the full key, mask included: false if lookup
// will not find it (small enough to inline).
func (m *memo) mayHitKey(j *job, k uint8, mask uint64) bool {
	h := memoHash(j, k, mask)
	return m.seenKey[h>>62]&(1<<(h>>56&63)) != 0
}

// lookup returns the reason job j's shape failed with earlier this cycle.
func (m *memo) lookup(jobs []job, j *job, kind uint8, mask uint64) (Reason, bool) {
	if len(m.t) == 0 {
		return Reason{}, false
	}
	h := memoHash(j, kind, mask)
	for i := h & uint64(len(m.t)-1); ; i = (i + 1) & uint64(len(m.t)-1) {
		en := &m.t[i]
		if en.epoch != m.epoch {
			return Reason{}, false
		}
		if en.h == h && en.kind == kind && en.mask == mask &&
			(kind != memoPreempt || en.prio == j.spec.Priority) && sameShape(&jobs[en.rep], j) {
			return en.reason, true
		}
	}
}

// add records that job slot's shape failed with reason r.
func (m *memo) add(j *job, slot int32, kind uint8, mask uint64, r Reason) {
	if 2*(m.n+1) > len(m.t) {
		m.grow()
	}
	h := memoHash(j, kind, mask)
	i := h & uint64(len(m.t)-1)
	for m.t[i].epoch == m.epoch {
		i = (i + 1) & uint64(len(m.t)-1)
	}
	m.t[i] = memoEntry{epoch: m.epoch, kind: kind, rep: slot, h: h, mask: mask, prio: j.spec.Priority, reason: r}
	m.n++
	b := shapeBit(j, kind)
	m.seen[b>>6] |= 1 << (b & 63)
	m.seenKey[h>>62] |= 1 << (h >> 56 & 63)
}

func (m *memo) grow() {
	old := m.t
	m.t = make([]memoEntry, max(64, 2*len(old)))
	for _, en := range old {
		if en.epoch != m.epoch {
			continue
		}
		i := en.h & uint64(len(m.t)-1)
		for m.t[i].epoch == m.epoch {
			i = (i + 1) & uint64(len(m.t)-1)
		}
		m.t[i] = en
	}
}
