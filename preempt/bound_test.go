package preempt

import (
	"math"
	"testing"

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
