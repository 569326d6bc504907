package topology

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// rebaseHost returns the host called name, failing the test if absent.
func rebaseHost(t *testing.T, tr *Tree, name string) HostID {
	t.Helper()
	h, ok := tr.HostByName(name)
	require.True(t, ok, "no host %q", name)
	return h
}

// rebaseGPU returns GPU i of the host called name.
func rebaseGPU(t *testing.T, tr *Tree, name string, i int) GPUID {
	t.Helper()
	lo, _ := tr.HostGPUs(rebaseHost(t, tr, name))
	return lo + GPUID(i)
}

// rebasePod is a pod as Rebase must carry it: by host name.
type rebasePod struct {
	host string
	Pod
}

func rebasePods(s *State, id JobID) []rebasePod {
	var out []rebasePod
	for _, p := range s.AppendJobPods(nil, id) {
		out = append(out, rebasePod{s.Tree().HostName(p.Host), p})
		out[len(out)-1].Host = 0
	}
	return out
}

func TestRebase(t *testing.T) {
	old, err := BuildHosts([]string{"rack"}, []HostSpec{
		{Name: "a", Path: []string{"r0"}, GPUs: 8, CPUMilli: Unlimited, MemoryMiB: Unlimited},
		{Name: "b", Path: []string{"r0"}, GPUs: 8, CPUMilli: Unlimited, MemoryMiB: Unlimited},
		{Name: "c", Path: []string{"r0"}, GPUs: 4, CPUMilli: Unlimited, MemoryMiB: Unlimited},
		{Name: "d", Path: []string{"r1"}, GPUs: 8, CPUMilli: 4000, MemoryMiB: Unlimited},
		{Name: "e", Path: []string{"r1"}, GPUs: 2, CPUMilli: Unlimited, MemoryMiB: Unlimited},
		{Name: "f", Path: []string{"r1"}, GPUs: 4, CPUMilli: Unlimited, MemoryMiB: Unlimited},
	})
	require.NoError(t, err)
	// The new tree drops b, shrinks c to 2 GPUs, adds x (before a, so host ids
	// shift) and y in a new rack, and lists rack r1 first.
	nt, err := BuildHosts([]string{"rack"}, []HostSpec{
		{Name: "e", Path: []string{"r1"}, GPUs: 2, CPUMilli: Unlimited, MemoryMiB: Unlimited},
		{Name: "d", Path: []string{"r1"}, GPUs: 8, CPUMilli: 4000, MemoryMiB: Unlimited},
		{Name: "x", Path: []string{"r0"}, GPUs: 8, CPUMilli: Unlimited, MemoryMiB: Unlimited},
		{Name: "a", Path: []string{"r0"}, GPUs: 8, CPUMilli: Unlimited, MemoryMiB: Unlimited},
		{Name: "c", Path: []string{"r0"}, GPUs: 2, CPUMilli: Unlimited, MemoryMiB: Unlimited},
		{Name: "f", Path: []string{"r1"}, GPUs: 4, CPUMilli: Unlimited, MemoryMiB: Unlimited},
		{Name: "y", Path: []string{"r2"}, GPUs: 4, CPUMilli: Unlimited, MemoryMiB: Unlimited},
	})
	require.NoError(t, err)

	s := NewState(old)
	h := func(name string) HostID { return rebaseHost(t, old, name) }
	set := PodSet{Count: 2, GPUs: 4, CPUMilli: 1000}
	require.NoError(t, s.Apply(Delta{Ops: []Op{
		AddJob(1, Job{Priority: 3, Preemptible: true, Required: 1, Sets: []PodSet{set}},
			Pod{Host: h("a"), GPUs: 0x0F, CPUMilli: 1000}, Pod{Host: h("d"), GPUs: 0xF0, CPUMilli: 1000}),
		AddJob(2, Job{Priority: 1}, Pod{Host: h("b"), GPUs: 0x3}, Pod{Host: h("a"), GPUs: 0x30}),
		AddJob(3, Job{HasEnd: true, End: 99}, Pod{Host: h("e"), GPUs: 0x2, Milli: 500}, Pod{Host: h("d"), CPUMilli: 500}),
		AddJob(4, Job{}, Pod{Host: h("c"), GPUs: 0x8}),
		AddJob(5, Job{Exclusive: true, Priority: 7}, Pod{Host: h("f"), GPUs: 0x1}),
		Nominate(Nomination{Job: 9, Priority: 8, Ready: 5, Expiry: 50,
			GPUs: []GPUID{rebaseGPU(t, old, "a", 6), rebaseGPU(t, old, "b", 4), rebaseGPU(t, old, "d", 1)}}),
		Nominate(Nomination{Job: 8, Priority: 2, GPUs: []GPUID{rebaseGPU(t, old, "b", 6)}}),
		SetHostHealth(h("d"), Draining),
		SetHostHealth(h("b"), Failed),
		SetGPUHealth(rebaseGPU(t, old, "a", 7), Failed),
		SetGPUHealth(rebaseGPU(t, old, "c", 3), Failed), // c's GPU 3 is gone in the new tree
	}}))
	require.NoError(t, s.Apply(Delta{Ops: []Op{SetHostHealth(h("e"), Draining)}}))
	require.NoError(t, s.Apply(Delta{Ops: []Op{SetHostHealth(h("e"), Healthy)}}))
	require.NoError(t, s.Check())
	before, _ := s.MarshalBinary()

	n, lost := s.Rebase(nt)

	require.Equal(t, []JobID{2, 4}, lost, "job 2 had a pod on removed host b, job 4 on c's GPU 3")
	require.NoError(t, n.Check())
	require.Same(t, nt, n.Tree())
	after, _ := s.MarshalBinary()
	require.Equal(t, before, after, "Rebase changed the old State")
	require.NoError(t, s.Check())

	// Surviving jobs keep their pods (by host name and GPUs) and attributes.
	for _, id := range []JobID{1, 3, 5} {
		require.True(t, n.HasJob(id), "job %d", id)
		require.Equal(t, rebasePods(s, id), rebasePods(n, id), "job %d", id)
		oi, _ := s.JobInfo(id)
		ni, _ := n.JobInfo(id)
		require.Equal(t, oi, ni, "job %d", id)
	}
	for _, id := range lost {
		require.False(t, n.HasJob(id))
	}
	require.Equal(t, 3, n.NumJobs())
	require.Equal(t, 5, n.NumPods())
	require.Equal(t, s.JobIDBound(), n.JobIDBound())
	excl, ok := n.HostExclusive(rebaseHost(t, nt, "f"))
	require.True(t, ok)
	require.Equal(t, JobID(5), excl)

	// Health, failed GPUs and generations carry over by name; new hosts start
	// healthy, free and at generation 0.
	for _, name := range []string{"a", "c", "d", "e", "f"} {
		oh, nh := rebaseHost(t, old, name), rebaseHost(t, nt, name)
		require.Equal(t, s.HostHealth(oh), n.HostHealth(nh), "host %s", name)
		require.Equal(t, s.HostGeneration(oh), n.HostGeneration(nh), "host %s", name)
		for i := range min(old.HostGPUCount(oh), nt.HostGPUCount(nh)) {
			require.Equal(t, s.GPUFailed(rebaseGPU(t, old, name, i)), n.GPUFailed(rebaseGPU(t, nt, name, i)), "GPU %s:%d", name, i)
		}
	}
	require.Equal(t, Draining, n.HostHealth(rebaseHost(t, nt, "d")))
	require.True(t, n.GPUFailed(rebaseGPU(t, nt, "a", 7)))
	for _, name := range []string{"x", "y"} {
		nh := rebaseHost(t, nt, name)
		require.Equal(t, Healthy, n.HostHealth(nh))
		require.Zero(t, n.HostGeneration(nh))
		require.True(t, n.HostIdle(nh))
		require.Equal(t, nt.HostGPUCount(nh), n.HostFree(nh))
	}
	// Job 2's GPUs on a are free again.
	require.Equal(t, uint64(0x30), n.HostFreeMask(rebaseHost(t, nt, "a"))&0x30)

	// Nominations carry over minus the GPUs of removed hosts; a nomination
	// left with no GPUs is dropped.
	nom, ok := n.NominationOf(9)
	require.True(t, ok)
	require.Equal(t, []GPUID{rebaseGPU(t, nt, "d", 1), rebaseGPU(t, nt, "a", 6)}, nom.GPUs)
	require.Equal(t, int32(8), nom.Priority)
	require.Equal(t, int64(5), nom.Ready)
	require.Equal(t, int64(50), nom.Expiry)
	_, ok = n.NominationOf(8)
	require.False(t, ok)
	require.Equal(t, 1, n.NumNominations())
	j, ok := n.GPUNominee(rebaseGPU(t, nt, "a", 6))
	require.True(t, ok)
	require.Equal(t, JobID(9), j)

	// The new State is live: the lost job can be placed again.
	require.NoError(t, n.Apply(Delta{Ops: []Op{AddJob(2, Job{Priority: 1}, Pod{Host: rebaseHost(t, nt, "x"), GPUs: 0x3})}}))
	require.NoError(t, n.Check())
}

// TestRebaseSameTree: rebasing onto a rebuild of the same tree loses nothing
// and gives a byte-identical snapshot.
func TestRebaseSameTree(t *testing.T) {
	trees := fuzzTrees(t)
	s := fuzzBaseState(t, trees[1])
	again, err := BuildHosts([]string{"block", "rack"}, []HostSpec{
		{Name: "a", Path: []string{"b0", "r0"}, GPUs: 8, Model: "H100", CPUMilli: 4000, MemoryMiB: 100},
		{Name: "b", Path: []string{"b0", "r0"}, GPUs: 0, Model: "", CPUMilli: Unlimited, MemoryMiB: Unlimited},
		{Name: "c", Path: []string{"b0", "r1"}, GPUs: 63, Model: "GB200", CPUMilli: Unlimited, MemoryMiB: Unlimited},
		{Name: "d", Path: []string{"b1", "r0"}, GPUs: 1, Model: "H100", CPUMilli: 2000, MemoryMiB: 10},
		{Name: "e", Path: []string{"b0", "r1"}, GPUs: 64, Model: "GB200", CPUMilli: Unlimited, MemoryMiB: Unlimited},
		{Name: "f", Path: []string{"b1", "r0"}, GPUs: 16, Model: "H100", CPUMilli: 0, MemoryMiB: 0},
	})
	require.NoError(t, err)
	n, lost := s.Rebase(again)
	require.Empty(t, lost)
	require.NoError(t, n.Check())
	want, _ := s.MarshalBinary()
	got, _ := n.MarshalBinary()
	require.Equal(t, want, got)
}

// TestRebaseShape: a shape tree grown by one rack keeps every job; shrunk by
// one rack, it loses exactly the jobs with a pod there.
func TestRebaseShape(t *testing.T) {
	small, err := BuildShape(Shape{Levels: []string{"rack"}, FanOut: []int{2, 2}, GPUsPerHost: 4})
	require.NoError(t, err)
	big, err := BuildShape(Shape{Levels: []string{"rack"}, FanOut: []int{3, 2}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := NewState(big)
	var ops []Op
	for h := range big.NumHosts() {
		ops = append(ops, AddJob(JobID(h), Job{}, Pod{Host: HostID(h), GPUs: 1 << uint(h%4)}))
	}
	ops = append(ops, AddJob(10, Job{}, Pod{Host: 1, GPUs: 0x8}, Pod{Host: 5, GPUs: 0x8}))
	require.NoError(t, s.Apply(Delta{Ops: ops}))

	n, lost := s.Rebase(small)
	require.Equal(t, []JobID{4, 5, 10}, lost)
	require.NoError(t, n.Check())
	for id := range JobID(4) {
		require.Equal(t, rebasePods(s, id), rebasePods(n, id))
	}

	back, lost := n.Rebase(big)
	require.Empty(t, lost)
	require.NoError(t, back.Check())
	require.Equal(t, 4, back.NumJobs())
	require.True(t, slices.Equal(rebasePods(n, 3), rebasePods(back, 3)))
}
