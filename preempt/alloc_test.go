package preempt_test

import (
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestAllocs: a warmed-up Planner allocates nothing for one-host, rack and
// cluster-wide requests on a fully packed NVL72 block, answered or not.
func TestAllocs(t *testing.T) {
	tree, err := topology.BuildShape(topology.NVL72(1))
	require.NoError(t, err)
	s := topology.NewState(tree)
	rng := rand.New(rand.NewPCG(7, 7))
	id := topology.JobID(0)
	for h := range topology.HostID(tree.NumHosts()) {
		for g := 0; g < 4; {
			n := min(4-g, 1+rng.IntN(4))
			info := topology.Job{Priority: int32(1 + rng.IntN(3)*10), Preemptible: rng.IntN(60) != 0}
			require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{
				topology.AddJob(id, info, topology.Pod{Host: h, GPUs: gpus(g, g+n)})}}))
			id++
			g += n
		}
	}
	rack, _ := tree.LevelByName("rack")
	su, _ := tree.LevelByName("su")
	reqs := []placement.Request{
		{Job: id, Priority: 50, Sets: []placement.PodSet{{Pods: 1, GPUs: 4}}},
		{Job: id, Priority: 50, Required: rack, Sets: []placement.PodSet{{Pods: 18, GPUs: 4}}},
		{Job: id, Priority: 50, Required: su, Sets: []placement.PodSet{{Pods: 40, GPUs: 4}}},
		{Job: id, Priority: 50, Sets: []placement.PodSet{{Pods: 30, GPUs: 4}}},
		{Job: id, Priority: 50, Sets: []placement.PodSet{{Pods: 80, GPUs: 4}}},                // a nomination of 320 GPUs (byHost)
		{Job: id, Priority: 2, Required: rack, Sets: []placement.PodSet{{Pods: 18, GPUs: 4}}}, // no fit
	}
	var p preempt.Planner
	var res preempt.Result
	for i := range reqs {
		r := &reqs[i]
		ok, _, err := p.Plan(s, r, 0, 1, &res)
		require.NoError(t, err)
		t.Logf("request %d: fits %v, %d victims, %d scopes, %d tests", i, ok, len(res.Victims), res.Scopes, res.Tests)
		for range 3 { // warm up
			_, _, _ = p.Plan(s, r, 0, 1, &res)
		}
		allocs := testing.AllocsPerRun(20, func() { _, _, _ = p.Plan(s, r, 0, 1, &res) })
		require.Zero(t, allocs, "request %d allocates", i)
	}
	require.Positive(t, preempt.TopDowns(&p), "requests 3 and 4 are answered top-down")
}

// TestWideHosts: hosts of 63 and 64 GPUs (a full mask word), each GPU held
// by its own job: a whole-host pod evicts every job of the cheapest host.
func TestWideHosts(t *testing.T) {
	tree, err := topology.BuildHosts([]string{"rack"}, []topology.HostSpec{
		{Name: "a", Path: []string{"r0"}, GPUs: 63}, {Name: "b", Path: []string{"r0"}, GPUs: 64},
		{Name: "c", Path: []string{"r1"}, GPUs: 64}})
	require.NoError(t, err)
	s := topology.NewState(tree)
	id := topology.JobID(0)
	for h := range topology.HostID(3) {
		for g := range tree.HostGPUCount(h) {
			prio := int32(1 + int(h))
			if h == 2 && g == 5 {
				prio = 1 // host c mixes priorities 3 and 1
			}
			require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(id,
				topology.Job{Priority: prio, Preemptible: true}, topology.Pod{Host: h, GPUs: 1 << uint(g)})}}))
			id++
		}
	}
	var p preempt.Planner
	var res preempt.Result
	for _, tc := range []struct {
		gpus  int32
		host  string
		count int
	}{{63, "a", 63}, {64, "b", 64}, {40, "a", 40}} {
		r := &placement.Request{Job: id, Priority: 10, Sets: []placement.PodSet{{Pods: 1, GPUs: tc.gpus}}}
		ok, _, err := p.Plan(s, r, 0, 1, &res)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, tc.host, tree.HostName(res.Plan.Pods[0].Host))
		require.Len(t, res.Victims, tc.count)
		require.True(t, res.Exact)
		checkResult(t, s, r, &res, 0)
	}
}
