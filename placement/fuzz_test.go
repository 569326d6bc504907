package placement_test

import (
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// FuzzPlace is TestOracle steered by a fuzzer: the random generators draw
// the cluster, its load (jobs, nominations, faults) and the request from the
// fuzzer's bytes (testkit.Bytes), and each instance is held to what the
// oracle test asserts: no error, a State unchanged, every Plan valid and
// applying (Check clean), a no-fit only where the oracle finds none (or, for
// gangs of several pod sets, where the rule of placing them in order
// explains it), the policy's choices, and the same answer from a fresh
// Solver.
//
//	go test -run '^$' -fuzz FuzzPlace -fuzztime 10m ./placement
func FuzzPlace(f *testing.F) {
	testkit.AddSeeds(f, 48)
	var v placement.Solver // reused, as in the oracle test
	var plan placement.Plan
	f.Fuzz(func(t *testing.T, in []byte) {
		rng := testkit.Rand(in)
		lim := reqLimits{maxPods: 10, maxGPUs: 8, maxSets: 2, policies: true, restrict: rng.IntN(4) == 0}
		tree := genTree(rng, 8)
		s := topology.NewState(tree)
		nominees := genLoad(rng, s)
		if err := s.Check(); err != nil {
			t.Fatalf("the generated load: %v", err)
		}
		r := genRequest(rng, tree, nominees, lim)
		var run oracleRun
		run.check(0, s, r, &v, &plan)
		for _, fl := range []*failures{&run.self, &run.invalid, &run.wrongPlan, &run.phantom, &run.noFit,
			&run.nondet, &run.singleMiss, &run.greedyMiss, &run.policy} {
			if fl.n > 0 {
				t.Fatal(fl.msg)
			}
		}
	})
}
