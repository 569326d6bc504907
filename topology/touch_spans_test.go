package topology

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTouchedSpans: for every since from one past the log's reach to the
// present, around a wrap of the ring, TouchedSpans gives exactly the hosts
// touched since, in order (first's then second's), or ok false when the
// log no longer holds them all; TouchedHosts appends the same.
func TestTouchedSpans(t *testing.T) {
	tree, err := BuildShape(Shape{Levels: []string{"rack"}, FanOut: []int{4, 8}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := NewState(tree)
	var all []HostID // every touch made, in order
	for _, n := range []int{10, TouchLogSize - 10, 17, TouchLogSize, 3} {
		for range n {
			h := HostID(len(all) % tree.NumHosts())
			s.touch(h)
			all = append(all, h)
		}
		seq := s.TouchSeq()
		require.Equal(t, uint64(len(all)), seq)
		for since := uint64(max(0, int(seq)-TouchLogSize-2)); since <= seq; since++ {
			first, second, ok := s.TouchedSpans(since)
			if seq-since > TouchLogSize {
				require.False(t, ok, "since %d of %d", since, seq)
				continue
			}
			require.True(t, ok, "since %d of %d", since, seq)
			got := append(slices.Clone(first), second...)
			require.Equal(t, all[since:], got, "since %d of %d", since, seq)
			hosts, ok := s.TouchedHosts(since, []HostID{-1})
			require.True(t, ok)
			require.Equal(t, append([]HostID{-1}, all[since:]...), hosts)
		}
		_, _, ok := s.TouchedSpans(seq + 1)
		require.False(t, ok, "a seq from the future")
	}
}
