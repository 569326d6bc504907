package topology

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestJobsWithEnd: the count follows adds and removes of jobs with an
// expected end, ignores the others, is unchanged by a rejected Delta, and a
// clone and a snapshot keep their own.
func TestJobsWithEnd(t *testing.T) {
	tree, err := BuildShape(Shape{Levels: []string{"rack"}, FanOut: []int{2, 4}, GPUsPerHost: 4, Model: "H100"})
	require.NoError(t, err)
	s := NewState(tree)
	ends := Job{Priority: 1, HasEnd: true, End: 50, Required: NoLevel, Preferred: NoLevel}
	open := ends
	open.HasEnd, open.End = false, 0
	apply := func(d Delta) {
		require.NoError(t, s.Apply(d))
		require.NoError(t, s.Check())
	}
	apply(Delta{Ops: []Op{AddJob(1, ends, Pod{Host: 0, GPUs: 1}), AddJob(2, open, Pod{Host: 1, GPUs: 1}),
		AddJob(3, ends, Pod{Host: 2, GPUs: 3}, Pod{Host: 3, GPUs: 3})}})
	require.Equal(t, 2, s.JobsWithEnd())

	err = s.Apply(Delta{Ops: []Op{AddJob(4, ends, Pod{Host: 4, GPUs: 1}), RemoveJob(99)}})
	require.ErrorIs(t, err, ErrStale)
	require.NoError(t, s.Check())
	require.Equal(t, 2, s.JobsWithEnd(), "a rejected Delta changes nothing")

	c := s.Clone()
	snap, err := s.MarshalBinary()
	require.NoError(t, err)
	apply(Delta{Ops: []Op{RemoveJob(1), RemoveJob(2)}})
	require.Equal(t, 1, s.JobsWithEnd())
	require.Equal(t, 2, c.JobsWithEnd(), "a clone keeps its own count")
	require.NoError(t, s.UnmarshalBinary(snap))
	require.NoError(t, s.Check())
	require.Equal(t, 2, s.JobsWithEnd(), "a restored snapshot counts its jobs")
}
