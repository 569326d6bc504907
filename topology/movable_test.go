package topology

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMovableBuckets(t *testing.T) {
	for _, g := range []int64{0, 1, 4, 63, 64, 100, 127, 128, 255, 256, 1 << 20, 1<<31 - 1} {
		b := movBucket(g)
		require.Less(t, b, movBuckets, "size %d", g)
		require.GreaterOrEqual(t, movBucketMax(b), g, "size %d: bucket %d's maximum", g, b)
		if b > 0 {
			require.Less(t, movBucketMax(b-1), g, "size %d: bucket %d's predecessor", g, b)
		}
	}
}

// TestMovableGPUsBound: the bound sums the k largest movable preemptible
// jobs (by GPUs touched; fractional pods count their one GPU), ignores the
// others, follows removals and is unchanged by a rejected Delta.
func TestMovableGPUsBound(t *testing.T) {
	tree, err := BuildShape(Shape{Levels: []string{"rack"}, FanOut: []int{4, 20}, GPUsPerHost: 8, Model: "H100"})
	require.NoError(t, err)
	s := NewState(tree)
	mov := Job{Priority: 1, Preemptible: true, Movable: true, Required: NoLevel, Preferred: NoLevel}
	fixed := mov
	fixed.Movable = false
	whole := func(h HostID, n int) Pod { return Pod{Host: h, GPUs: 1<<n - 1} }
	hosts := func(from HostID, n int) []Pod {
		var pods []Pod
		for i := range n {
			pods = append(pods, whole(from+HostID(i), 8))
		}
		return pods
	}
	apply := func(d Delta) {
		require.NoError(t, s.Apply(d))
		require.NoError(t, s.Check())
	}
	apply(Delta{Ops: []Op{
		AddJob(1, mov, whole(0, 2)),                                    // 2 GPUs
		AddJob(2, mov, Pod{Host: 1, GPUs: 1, Milli: 250}, whole(1, 0)), // one fractional pod: 1 GPU
		AddJob(3, fixed, hosts(2, 2)...),                               // not movable: 16 GPUs
		AddJob(4, mov, hosts(10, 10)...),                               // 80 GPUs: bucket [64, 128)
	}})
	require.Equal(t, int64(127), s.MovableGPUsBound(1))
	require.Equal(t, int64(129), s.MovableGPUsBound(2))
	require.Equal(t, int64(130), s.MovableGPUsBound(3))
	require.Equal(t, int64(130), s.MovableGPUsBound(9))
	require.Equal(t, int64(0), s.MovableGPUsBound(0))

	// A Delta that fails after adding a big movable job changes nothing.
	err = s.Apply(Delta{Ops: []Op{AddJob(5, mov, hosts(30, 20)...), RemoveJob(99)}})
	require.ErrorIs(t, err, ErrStale)
	require.NoError(t, s.Check())
	require.Equal(t, int64(127), s.MovableGPUsBound(1))

	apply(Delta{Ops: []Op{RemoveJob(4)}})
	require.Equal(t, int64(2), s.MovableGPUsBound(1))
	require.Equal(t, int64(3), s.MovableGPUsBound(4))
	c := s.Clone()
	apply(Delta{Ops: []Op{RemoveJob(1), RemoveJob(2)}})
	require.Equal(t, int64(0), s.MovableGPUsBound(4))
	require.Equal(t, int64(3), c.MovableGPUsBound(4), "a clone keeps its own histogram")
}
