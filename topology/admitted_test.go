package topology

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAppendAdmitted: a job may take the GPUs of its own nomination, of
// lower-priority ones and of those whose ready time it ends by; they come
// one entry per host, hosts ascending, two nominations on a host merged,
// after what dst held.
func TestAppendAdmitted(t *testing.T) {
	tree, err := BuildShape(Shape{Levels: []string{"rack"}, FanOut: []int{2, 3}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := NewState(tree)
	none := Job{Priority: 5}
	require.Empty(t, s.AppendAdmitted(nil, 1, &none))
	nom := func(j JobID, prio int32, ready int64, gpus ...GPUID) Op {
		return Nominate(Nomination{Job: j, Priority: prio, Ready: ready, Expiry: 100, GPUs: gpus})
	}
	require.NoError(t, s.Apply(Delta{Ops: []Op{
		nom(10, 9, 10, 13, 14, 20),  // hosts 3 and 5, ready at 10
		nom(11, 1, 50, 1, 2, 4, 15), // hosts 0, 1 and 3
		nom(12, 5, 20, 22),          // host 5, ready at 20
	}}))
	require.NoError(t, s.Check())
	seed := []HostMask{{Host: 99, Mask: 1}}
	cases := []struct {
		name string
		id   JobID
		info Job
		want []HostMask
	}{
		{"priority 5: the priority-1 one", 1, Job{Priority: 5}, []HostMask{{0, 0b0110}, {1, 0b0001}, {3, 0b1000}}},
		{"its own too", 10, Job{Priority: 5}, []HostMask{{0, 0b0110}, {1, 0b0001}, {3, 0b1110}, {5, 0b0001}}},
		{"ends by 20", 1, Job{Priority: 2, HasEnd: true, End: 20}, []HostMask{{0, 0b0110}, {1, 0b0001}, {3, 0b1000}, {5, 0b0100}}},
		{"outranks all", 1, Job{Priority: 10}, []HostMask{{0, 0b0110}, {1, 0b0001}, {3, 0b1110}, {5, 0b0101}}},
		{"outranked by all", 1, Job{Priority: 1}, nil},
	}
	for _, c := range cases {
		got := s.AppendAdmitted(seed, c.id, &c.info)
		require.Equal(t, append([]HostMask{{Host: 99, Mask: 1}}, c.want...), got, c.name)
	}
}
