package topology

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// After Grow, and in a Clone of a grown State, adding that many pods and
// jobs (of one pod set) allocates nothing, and Grow itself changes nothing a snapshot sees.
func TestGrowThenApplyAllocatesNothing(t *testing.T) {
	s := allocState(t)
	before, err := s.MarshalBinary()
	require.NoError(t, err)
	s.Grow(128, 64)
	s.Grow(-1, -1) // no-op
	after, err := s.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, before, after, "Grow changed the snapshot")
	require.NoError(t, s.Check())

	for _, st := range []*State{s, s.Clone()} {
		first := st.JobIDBound()
		adds := make([]Delta, 64)
		for i := range adds {
			id, h := first+JobID(i), HostID(100+i)
			job := Job{Priority: 1, Sets: []PodSet{{Count: 2, GPUs: 1}}} // one pod set: the record's own storage
			adds[i] = Delta{Ops: []Op{AddJob(id, job, Pod{Host: h, GPUs: 0x1}, Pod{Host: h, GPUs: 0x2})}}
		}
		next := 0
		// AllocsPerRun calls the function twice (a warm-up, then the run):
		// 64 jobs of 2 pods in all.
		allocs := testing.AllocsPerRun(1, func() {
			for range 32 {
				if err := st.Apply(adds[next]); err != nil {
					panic(err)
				}
				next++
			}
		})
		require.Zero(t, allocs, "adding 64 jobs of 2 pods after Grow(128, 64)")
		require.NoError(t, st.Check())
		// undo, so the clone made next starts from the same room
		for id := first; id < first+JobID(next); id++ {
			require.NoError(t, st.Apply(Delta{Ops: []Op{RemoveJob(id)}}))
		}
	}
}
