package preempt

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestBuckets checks bucketOf against the State: PreemptibleBelow(d, q).lo
// counts exactly the preemptible GPUs of priority below the lowest priority
// of q's bucket, which the priority bound relies on.
func TestBuckets(t *testing.T) {
	tree, err := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{1, 64}, GPUsPerHost: 8})
	require.NoError(t, err)
	s := topology.NewState(tree)
	prios := []int32{math.MinInt32, -5, -1, 0, 1, 2, 3, 4, 7, 8, 9, 15, 16, 100, 255, 256, 1000, 1 << 20, math.MaxInt32}
	for i, p := range prios {
		info := topology.Job{Priority: p, Preemptible: true}
		require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{
			topology.AddJob(topology.JobID(i), info, topology.Pod{Host: topology.HostID(i), GPUs: 1})}}))
	}
	for _, q := range append(prios, 5, 6, 10, 17, 1<<30) {
		b := bucketOf(q)
		want := 0
		for _, p := range prios {
			if p < lowPrio(b) {
				want++
			}
		}
		lo, hi := s.PreemptibleBelow(0, q)
		require.Equal(t, want, lo, "priority %d (bucket %d, lowest %d)", q, b, lowPrio(b))
		below := 0
		for _, p := range prios {
			if p < q {
				below++
			}
		}
		require.GreaterOrEqual(t, hi, below, "priority %d", q)
		if b > 0 {
			require.Equal(t, b, bucketOf(lowPrio(b)))
		}
		if b > 1 {
			require.Equal(t, b-1, bucketOf(lowPrio(b)-1))
		}
	}
}

// TestOnesIn compares onesIn with a count bit by bit on random words and
// ranges: within one word, across two, across many, at the words' edges.
func TestOnesIn(t *testing.T) {
	seed := testkit.Seed(t, 1)
	rng := rand.New(rand.NewPCG(seed, 0))
	words := make([]uint64, 6)
	for range testkit.Steps(t, 20000) {
		for i := range words {
			words[i] = rng.Uint64() & rng.Uint64()
		}
		lo := rng.IntN(64 * len(words))
		hi := lo + rng.IntN(64*len(words)-lo+1)
		if rng.IntN(4) == 0 { // a word's edge
			lo &^= 63
		}
		want := 0
		for i := lo; i < hi; i++ {
			want += int(words[i>>6] >> (uint(i) & 63) & 1)
		}
		if got := onesIn(words, lo, hi); got != want {
			t.Fatalf("seed %d: onesIn(%x, %d, %d) = %d, want %d", seed, words, lo, hi, got, want)
		}
	}
}
