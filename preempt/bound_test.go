package preempt

import (
	"math"
	"math/rand/v2"
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

// TestExclIndex: the index of exclusively held GPUs follows the State
// through the touch log: after every change it counts at least what a
// recount finds (more only for hosts that stopped being held while not
// healthy, which leaves their free GPUs, hence the log, unchanged: a weaker
// bound, never a wrong one).
func TestExclIndex(t *testing.T) {
	tree, err := topology.BuildShape(topology.Shape{Levels: []string{"block", "rack"}, FanOut: []int{4, 2, 4}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := topology.NewState(tree)
	rng := rand.New(rand.NewPCG(3, 3))
	var x exclIndex
	for step := range 400 {
		h := topology.HostID(rng.IntN(tree.NumHosts()))
		j := topology.JobID(rng.IntN(40))
		var op topology.Op
		switch k := rng.IntN(4); {
		case s.HasJob(j):
			op = topology.RemoveJob(j)
		case k == 0:
			op = topology.SetHostHealth(h, topology.Health(rng.IntN(2)))
		default:
			op = topology.AddJob(j, topology.Job{Priority: 1, Preemptible: true, Exclusive: k == 1},
				topology.Pod{Host: h, GPUs: 1 << uint(rng.IntN(4))})
		}
		_ = s.Apply(topology.Delta{Ops: []topology.Op{op}})
		x.sync(s)
		var fresh exclIndex
		fresh.sync(s)
		require.GreaterOrEqual(t, x.total, fresh.total, "step %d", step)
		for i := range fresh.per {
			require.GreaterOrEqual(t, x.per[i], fresh.per[i], "step %d, block %d", step, i)
		}
	}
}
