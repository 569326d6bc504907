package preempt_test

import (
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestJobFirstBuild compares the job-first build of a whole-cluster model,
// fetching the candidates' pods job by job and by a walk of every job, with
// the host-by-host build it stands for, on random clusters and requests that
// take that path, for the request's candidates and those below a random
// priority.
func TestJobFirstBuild(t *testing.T) {
	seed := testSeed(t)
	n := testSteps(t, 3000)
	var p preempt.Planner
	compared := 0
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)+1<<43))
		tree := genTree(rng, 24)
		s := topology.NewState(tree)
		nominees := genLoad(rng, s, 10+rng.IntN(40))
		r := genRequest(rng, tree, nominees, 1)
		if r.Validate(tree) != nil || s.HasJob(r.Job) {
			continue
		}
		ok, err := preempt.JobFirstDiff(&p, s, r, int32(rng.IntN(12)))
		require.NoError(t, err, "instance %d (seed %d)", i, seed)
		if ok {
			compared++
		}
	}
	require.NotZero(t, compared)
	t.Logf("seed %d: %d instances, %d compared", seed, n, compared)
}
