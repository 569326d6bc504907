package preempt_test

import (
	"fmt"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestNominationAcrossWords: on clusters of hosts of 3, 5, 6 and 8 GPUs
// (hosts that do and do not cross 64-GPU words), full of one-host jobs, a
// gang of every host evicts them all and is nominated every GPU, in order.
func TestNominationAcrossWords(t *testing.T) {
	for _, g := range []int{3, 5, 6, 8} {
		var hosts []topology.HostSpec
		for i := range 70 {
			hosts = append(hosts, topology.HostSpec{Name: fmt.Sprint("h", i), Path: []string{fmt.Sprint("r", i/10)}, GPUs: g})
		}
		tree, err := topology.BuildHosts([]string{"rack"}, hosts)
		require.NoError(t, err)
		s := topology.NewState(tree)
		for h := range topology.HostID(70) {
			job := topology.Job{Priority: 1, Preemptible: true}
			require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(topology.JobID(h), job, topology.Pod{Host: h, GPUs: 1<<uint(g) - 1})}}))
		}
		r := &placement.Request{Job: 100, Priority: 10, Sets: []placement.PodSet{{Pods: 70, GPUs: int32(g)}}}
		var p preempt.Planner
		var res preempt.Result
		ok, why, err := p.Plan(s, r, 0, 1, &res)
		require.NoError(t, err)
		require.True(t, ok, "%d GPUs a host: %v", g, why)
		require.Len(t, res.Victims, 70)
		require.Len(t, res.Nomination.GPUs, 70*g)
		for i, gpu := range res.Nomination.GPUs {
			require.Equal(t, topology.GPUID(i), gpu, "%d GPUs a host", g)
		}
		checkResult(t, s, r, &res, g)
	}
}
