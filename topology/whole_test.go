package topology

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWholeIdleHosts: pods that take every GPU of an idle host go through
// the shortcut of whole.go (checks from the idle bit, the summary without
// summarizing); Check, which rebuilds every aggregate from the primary data,
// must agree after each Delta: a gang deferred in runs of hosts, a single
// pod committed at once, hosts that are not clean idle (a failed or
// nominated GPU, draining), a gang refused at its last pod (checked before
// any write), and Deltas of several operations, which take the general path
// (a journal): a host emptied and taken again, taken and emptied again, and
// a rolled-back Delta.
func TestWholeIdleHosts(t *testing.T) {
	tree, err := BuildShape(Shape{Levels: []string{"su", "rack"}, FanOut: []int{2, 2, 6}, GPUsPerHost: 4, Model: "H100"})
	require.NoError(t, err)
	s := NewState(tree)
	job := Job{Priority: 10, Required: NoLevel, Preferred: NoLevel}
	pre := job
	pre.Preemptible = true
	excl := job
	excl.Exclusive = true
	whole := func(hosts ...HostID) []Pod {
		pods := make([]Pod, len(hosts))
		for i, h := range hosts {
			pods[i] = Pod{Host: h, GPUs: 0b1111}
		}
		return pods
	}
	apply := func(d Delta) {
		t.Helper()
		require.NoError(t, s.Apply(d))
		require.NoError(t, s.Check())
	}
	idle := func(want bool, hosts ...HostID) {
		t.Helper()
		for _, h := range hosts {
			require.Equal(t, want, s.HostIdle(h), "host %d idle", h)
		}
	}

	// A gang over two racks: a run of five hosts (flushed together) and one.
	apply(Delta{Ops: []Op{AddJob(1, pre, whole(0, 1, 2, 3, 4, 6)...)}})
	idle(false, 0, 1, 2, 3, 4, 6)
	idle(true, 5, 7)
	require.Equal(t, 4*24-24, s.Free(0))
	// One pod, committed at once; an exclusive one.
	apply(Delta{Ops: []Op{AddJob(2, job, whole(5)...)}})
	apply(Delta{Ops: []Op{AddJob(3, excl, whole(7)...)}})
	require.Equal(t, int64(4), s.ExclusiveGPUs(0))
	idle(false, 5, 7)

	// Not clean idle: a failed GPU, a nominated GPU, a draining host.
	apply(Delta{Ops: []Op{SetGPUHealth(GPUID(8*4+1), Failed)}})
	err = s.Apply(Delta{Ops: []Op{AddJob(4, job, whole(8)...)}})
	require.ErrorIs(t, err, ErrStale)
	apply(Delta{Ops: []Op{Nominate(Nomination{Job: 9, Priority: 100, Expiry: 10, GPUs: []GPUID{9 * 4}})}})
	err = s.Apply(Delta{Ops: []Op{AddJob(4, job, whole(9)...)}})
	require.ErrorIs(t, err, ErrStale)
	apply(Delta{Ops: []Op{AddJob(9, Job{Priority: 100, Required: NoLevel, Preferred: NoLevel}, whole(9)...)}})
	apply(Delta{Ops: []Op{SetHostHealth(10, Draining)}})
	err = s.Apply(Delta{Ops: []Op{AddJob(4, job, whole(10)...)}})
	require.ErrorIs(t, err, ErrStale)
	// A gang whose last pod's host is busy: refused before any write.
	before, err := s.MarshalBinary()
	require.NoError(t, err)
	err = s.Apply(Delta{Ops: []Op{AddJob(4, job, whole(16, 17, 18, 19, 20, 5)...)}})
	require.ErrorIs(t, err, ErrStale)
	after, err := s.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, before, after)
	idle(true, 16, 17, 18, 19, 20)

	// A pod with CPU takes the general path; so do Deltas of several
	// operations: emptied, then taken whole again; taken whole and emptied.
	apply(Delta{Ops: []Op{AddJob(4, job, Pod{Host: 11, GPUs: 0b1111, CPUMilli: 1})}})
	apply(Delta{Ops: []Op{RemoveJob(4), AddJob(5, job, whole(11, 12, 13, 14, 15)...)}})
	idle(false, 11, 12, 13, 14, 15)
	apply(Delta{Ops: []Op{AddJob(6, job, whole(16, 17, 18, 19, 20)...), RemoveJob(6)}})
	idle(true, 16, 17, 18, 19, 20)

	// Rolled back: nothing changed.
	before, err = s.MarshalBinary()
	require.NoError(t, err)
	err = s.Apply(Delta{Ops: []Op{AddJob(7, job, whole(16, 17, 18, 19)...), RemoveJob(99)}})
	require.ErrorIs(t, err, ErrStale)
	after, err = s.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, before, after)
	require.NoError(t, s.Check())
	apply(Delta{Ops: []Op{AddJob(7, job, whole(16, 17, 18, 19)...)}})
	idle(false, 16, 17, 18, 19)
}

// TestWholeIdleHostsWithoutGPUs: a pod with no GPUs on an idle host without
// GPUs takes all of them too (none): the host only stops being idle, alone
// or in a run flushed together.
func TestWholeIdleHostsWithoutGPUs(t *testing.T) {
	var hosts []HostSpec
	for i := range 8 {
		gpus := 0
		if i >= 6 {
			gpus = 4
		}
		hosts = append(hosts, HostSpec{Name: string(rune('a' + i)), Path: []string{"r" + string(rune('0'+i/6))},
			GPUs: gpus, Model: "H100", CPUMilli: 1000})
	}
	tree, err := BuildHosts([]string{"rack"}, hosts)
	require.NoError(t, err)
	s := NewState(tree)
	job := Job{Priority: 1, Required: NoLevel, Preferred: NoLevel}
	for _, d := range []Delta{
		{Ops: []Op{AddJob(1, job, Pod{Host: 0}, Pod{Host: 1}, Pod{Host: 2}, Pod{Host: 3}, Pod{Host: 4})}},
		{Ops: []Op{AddJob(2, job, Pod{Host: 5})}},
		{Ops: []Op{AddJob(3, job, Pod{Host: 6, GPUs: 0b1111}, Pod{Host: 7})}},
	} {
		require.NoError(t, s.Apply(d))
		require.NoError(t, s.Check())
	}
	for h := range HostID(8) {
		require.False(t, s.HostIdle(h), "host %d", h)
	}
	require.Equal(t, 0, s.IdleHosts(0))
	require.NoError(t, s.Apply(Delta{Ops: []Op{RemoveJob(1)}}))
	require.NoError(t, s.Check())
	require.Equal(t, 5, s.IdleHosts(0))
}
