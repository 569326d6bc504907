package blink

import (
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/placement"
)

// TestMemoMayHit checks the memo's filters (mayHit, mayHitKey) against its table on random
// shapes, kinds and masks over several epochs: every lookup that finds an
// entry was let through by mayHit (a false "no" would send a memoised shape
// back to placement: the same decisions, only slower, which no decision
// test would notice), and mayHit stops most lookups of shapes not added in
// the epoch.
func TestMemoMayHit(t *testing.T) {
	seed := testkit.Seed(t, 3)
	rng := rand.New(rand.NewPCG(seed, 0))
	jobs := make([]job, 64)
	for i := range jobs {
		j := &jobs[i]
		j.spec.Sets = []placement.PodSet{{Pods: 1 + rng.Int32N(8), GPUs: 1 + rng.Int32N(8)}}
		j.spec.Priority = rng.Int32N(3)
		j.key = specHash(j)
	}
	type shape struct {
		key  uint64
		kind uint8
	}
	var m memo
	falseHits, absent := 0, 0
	for epoch := range testkit.Steps(t, 200) {
		m.next()
		added := map[shape]bool{}
		for range rng.IntN(12) {
			slot := rng.Int32N(int32(len(jobs)))
			kind, mask := uint8(1+rng.IntN(2)), rng.Uint64N(4)
			if _, ok := m.lookup(jobs, &jobs[slot], kind, mask); !ok {
				m.add(&jobs[slot], slot, kind, mask, Reason{Code: NoFit})
				added[shape{jobs[slot].key, kind}] = true
			}
		}
		for range 200 {
			j := &jobs[rng.IntN(len(jobs))]
			kind, mask := uint8(1+rng.IntN(2)), rng.Uint64N(4)
			_, ok := m.lookup(jobs, j, kind, mask)
			may := m.mayHit(j, kind)
			if ok && !may {
				t.Fatalf("epoch %d: lookup finds job %+v (kind %d, mask %d), mayHit says it will not", epoch, j.spec, kind, mask)
			}
			if ok && !m.mayHitKey(j, kind, mask) {
				t.Fatalf("epoch %d: lookup finds job %+v (kind %d, mask %d), mayHitKey says it will not", epoch, j.spec, kind, mask)
			}
			if !added[shape{j.key, kind}] {
				absent++
				if may {
					falseHits++
				}
			}
		}
	}
	if absent > 0 && falseHits*4 > absent {
		t.Fatalf("mayHit let %d of %d lookups of absent shapes through", falseHits, absent)
	}
	t.Logf("mayHit let %d of %d lookups of absent shapes through", falseHits, absent)
}
