package topology

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The prefetch hints accept any id, change nothing and allocate nothing: a
// State before and after hints for live, absent and out-of-range ids
// marshals the same and passes Check.
func TestPrefetchAnyID(t *testing.T) {
	s := allocState(t)
	before, err := s.MarshalBinary()
	require.NoError(t, err)
	jobs := []JobID{-1, 0, 1, 2, 7, JobID(len(s.jobs)), math.MaxInt32}
	hosts := []HostID{-1, 0, 1, 17, 40, HostID(s.t.NumHosts() - 1), HostID(s.t.NumHosts()), math.MaxInt32}
	allocs := testing.AllocsPerRun(10, func() {
		for _, id := range jobs {
			s.PrefetchJob(id)
		}
		for _, h := range hosts {
			s.PrefetchHost(h)
		}
	})
	require.Zero(t, allocs)
	after, err := s.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, before, after)
	require.NoError(t, s.Check())
}
