package topology

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExclusiveGPUs: every domain counts the GPUs of its hosts held
// exclusively, whatever the holder uses of them; the count follows adds and
// removes, is unchanged by a rejected Delta, and a clone keeps its own.
func TestExclusiveGPUs(t *testing.T) {
	tree, err := BuildShape(Shape{Levels: []string{"su", "rack"}, FanOut: []int{2, 2, 3}, GPUsPerHost: 4, Model: "H100"})
	require.NoError(t, err)
	s := NewState(tree)
	rack, _ := tree.LevelByName("rack")
	r0, _ := tree.LevelDomains(rack) // racks r0 (hosts 0–2), r0+1 (3–5), …
	excl := Job{Priority: 1, Exclusive: true, Required: NoLevel, Preferred: NoLevel}
	shared := excl
	shared.Exclusive = false
	apply := func(d Delta) {
		require.NoError(t, s.Apply(d))
		require.NoError(t, s.Check())
	}
	want := func(root, rack0, rack1 int64) {
		t.Helper()
		require.Equal(t, root, s.ExclusiveGPUs(0))
		require.Equal(t, rack0, s.ExclusiveGPUs(r0))
		require.Equal(t, rack1, s.ExclusiveGPUs(r0+1))
	}
	apply(Delta{Ops: []Op{AddJob(1, excl, Pod{Host: 0, GPUs: 1}, Pod{Host: 4, GPUs: 0b11}),
		AddJob(2, shared, Pod{Host: 1, GPUs: 0b1111})}})
	want(8, 4, 4)

	err = s.Apply(Delta{Ops: []Op{AddJob(3, excl, Pod{Host: 2, GPUs: 1}), RemoveJob(99)}})
	require.ErrorIs(t, err, ErrStale)
	require.NoError(t, s.Check())
	want(8, 4, 4)

	c := s.Clone()
	apply(Delta{Ops: []Op{RemoveJob(1), AddJob(3, excl, Pod{Host: 2, GPUs: 1})}})
	want(4, 4, 0)
	require.Equal(t, int64(8), c.ExclusiveGPUs(0), "a clone keeps its own count")
}
