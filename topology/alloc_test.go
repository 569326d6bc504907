package topology

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The hot paths allocate nothing once the State's tables have grown to their
// working size: Apply of a small pod and its removal, a health change, and
// the planners' read queries.

// allocState is an NVL72 block (9,216 GPUs) with a few jobs, one of them
// preemptible, and a drained host.
func allocState(t *testing.T) *State {
	t.Helper()
	tr, err := BuildShape(NVL72(1))
	require.NoError(t, err)
	s := NewState(tr)
	require.NoError(t, s.Apply(Delta{Ops: []Op{
		AddJob(1, Job{Priority: 2, Preemptible: true}, Pod{Host: 0, GPUs: 0xF}, Pod{Host: 1, GPUs: 0x3}),
		AddJob(2, Job{Priority: 9}, Pod{Host: 17, GPUs: 0x1}, Pod{Host: 18, GPUs: 0xF}, Pod{Host: 19, GPUs: 0x6}),
		SetHostHealth(40, Draining),
	}}))
	return s
}

func TestAllocsApplyAddRemove(t *testing.T) {
	s := allocState(t)
	for _, c := range []struct {
		info Job
		pod  Pod
	}{
		{Job{Priority: 3, Preemptible: true}, Pod{Host: 5, GPUs: 0xF}},
		{Job{Priority: 1, Exclusive: true, Sets: []PodSet{{Count: 1, GPUs: 2, CPUMilli: 1000}}},
			Pod{Host: 5, GPUs: 0x6, CPUMilli: 1000}},
		{Job{Priority: 4}, Pod{Host: 63, GPUs: 0x1, Milli: 250}},
	} {
		info := c.info
		add := Delta{Ops: []Op{AddJob(7, info, c.pod)}}
		remove := Delta{Ops: []Op{RemoveJob(7)}}
		for range 3 { // warm up: the job, pod and set tables grow on first use
			require.NoError(t, s.Apply(add))
			require.NoError(t, s.Apply(remove))
		}
		allocs := testing.AllocsPerRun(200, func() {
			if err := s.Apply(add); err != nil {
				panic(err)
			}
			if err := s.Apply(remove); err != nil {
				panic(err)
			}
		})
		require.Zero(t, allocs, "Apply(AddJob) + Apply(RemoveJob) of %+v", info)
		require.NoError(t, s.Check())
	}
}

func TestAllocsApplyHostHealth(t *testing.T) {
	s := allocState(t)
	drain := Delta{Ops: []Op{SetHostHealth(3, Draining)}}
	heal := Delta{Ops: []Op{SetHostHealth(3, Healthy)}}
	require.NoError(t, s.Apply(drain))
	require.NoError(t, s.Apply(heal))
	allocs := testing.AllocsPerRun(200, func() {
		if err := s.Apply(drain); err != nil {
			panic(err)
		}
		if err := s.Apply(heal); err != nil {
			panic(err)
		}
	})
	require.Zero(t, allocs)
	require.NoError(t, s.Check())
}

func TestAllocsQueries(t *testing.T) {
	s := allocState(t)
	tr := s.Tree()
	rackLo, _ := tr.LevelDomains(3)
	buf := make([]Pod, 0, 8)
	var sink int
	allocs := testing.AllocsPerRun(200, func() {
		for _, d := range []DomainID{0, 1, rackLo, rackLo + 1} {
			sink += s.PodCapacity(d, 4) + s.PodCapacity(d, 1) + s.Free(d)
			sink += int(s.Histogram(d, 0)[2])
			lo, hi := s.PreemptibleBelow(d, 5)
			sink += lo + hi
		}
		for h := HostID(0); h < 20; h++ {
			sink += int(s.HostFreeMask(h) & 1)
		}
		buf = s.AppendJobPods(buf[:0], 2)
		sink += len(buf)
	})
	require.Zero(t, allocs)
	require.Len(t, buf, 3)
	require.Positive(t, sink)
}
