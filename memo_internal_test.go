package blink

import (
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/placement"
)

// TestMemoMayHit checks the memo's filter against its table on random
// shapes, kinds and masks over several epochs: every lookup that finds an
// entry was let through by mayHit (a false "no" would send a memoised shape
// back to placement: the same decisions, only slower, which no decision
// test would notice), and mayHit lets through few lookups that miss.
func TestMemoMayHit(t *testing.T) {
	seed := testkit.Seed(t, 3)
	rng := rand.New(rand.NewPCG(seed, 0))
	jobs := make([]job, 64)
	for i := range jobs {
		j := &jobs[i]
		j.spec.Sets = []placement.PodSet{{Pods: 1 + rng.Int32N(3), GPUs: 1 + rng.Int32N(4)}}
		j.spec.Priority = rng.Int32N(3)
		j.key = specHash(j)
	}
	var m memo
	falseHits, misses := 0, 0
	for epoch := range testkit.Steps(t, 200) {
		m.next()
		for range rng.IntN(40) {
			slot := rng.Int32N(int32(len(jobs)))
			kind, mask := uint8(1+rng.IntN(2)), rng.Uint64N(4)
			if _, ok := m.lookup(jobs, &jobs[slot], kind, mask); !ok {
				m.add(&jobs[slot], slot, kind, mask, Reason{Code: NoFit})
			}
		}
		for range 200 {
			j := &jobs[rng.IntN(len(jobs))]
			kind, mask := uint8(1+rng.IntN(2)), rng.Uint64N(4)
			_, ok := m.lookup(jobs, j, kind, mask)
			may := m.mayHit(j, kind, mask)
			if ok && !may {
				t.Fatalf("epoch %d: lookup finds job %+v (kind %d, mask %d), mayHit says it will not", epoch, j.spec, kind, mask)
			}
			if !ok {
				misses++
				if may {
					falseHits++
				}
			}
		}
	}
	if misses > 0 && falseHits*2 > misses {
		t.Fatalf("mayHit let %d of %d misses through", falseHits, misses)
	}
	t.Logf("mayHit let %d of %d misses through", falseHits, misses)
}
