package preempt_test

import (
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// An exclusive gang's lone victim must open a host to it, and the answer
// skipped a job of one pod whose host had more GPUs taken than it holds —
// counted as the host's GPUs less its free ones, which also counts failed
// GPUs and every GPU of a host held exclusively. So a job alone on a
// host with a failed GPU, or holding its host and using half of it, looked
// shared; a dearer job that opens a host came next, and was offered as
// proven optimal (TestLoneExclusiveOracle, BLINK_SEED=3, instance 602: a
// 12-GPU job evicted where one of 1 GPU does). Here job 1 holds one GPU of
// host 0 or, exclusively, half of it, and job 2 all of host 1; the gang,
// three exclusive pods of one GPU anywhere or required in the rack, needs
// a host emptied, and job 1 alone is the cheapest answer.
func TestLoneExclusiveSkip(t *testing.T) {
	t.Run("failed GPU", loneSkipCase{true, topology.Pod{Host: 0, GPUs: 0b1000}, false, 1000}.run)
	t.Run("exclusive half", loneSkipCase{false, topology.Pod{Host: 0, GPUs: 0b0011}, true, 2000}.run)
}

// loneSkipCase is a case of TestLoneExclusiveSkip.
type loneSkipCase struct {
	failed bool         // host 0's GPU 1 failed
	pod    topology.Pod // job 1's one pod
	excl   bool         // job 1 holds host 0
	milli  int64        // job 1's milli: the optimum's
}

func (c loneSkipCase) run(t *testing.T) {
	tree, err := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{1, 2}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := topology.NewState(tree)
	ops := []topology.Op{
		topology.AddJob(1, topology.Job{Priority: 1, Preemptible: true, Exclusive: c.excl}, c.pod),
		topology.AddJob(2, topology.Job{Priority: 1, Preemptible: true}, topology.Pod{Host: 1, GPUs: 0b1111}),
	}
	if c.failed {
		ops = append(ops, topology.SetGPUHealth(1, topology.Failed))
	}
	require.NoError(t, s.Apply(topology.Delta{Ops: ops}))
	for _, required := range []topology.Level{topology.NoLevel, 1} {
		var p preempt.Planner
		preempt.SetLoneNow(&p, true)
		var res preempt.Result
		r := &placement.Request{Job: 10, Priority: 5, Sets: []placement.PodSet{{Pods: 3, GPUs: 1}},
			Required: required, Preferred: topology.NoLevel, Exclusive: true}
		ok, _, err := p.Plan(s, r, 0, 0, &res)
		require.NoError(t, err)
		require.True(t, ok, "required %d", required)
		require.Equal(t, 1, preempt.Lones(&p), "required %d: the lone victim answers", required)
		require.Equal(t, preempt.Cost{Priority: 1, Victims: 1, Milli: c.milli}, res.Cost, "required %d: victims %v", required, res.Victims)
		require.Equal(t, []topology.JobID{1}, res.Victims, "required %d", required)
		checkResult(t, s, r, &res, 0)
	}
}
