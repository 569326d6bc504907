package defrag_test

import (
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/defrag"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestMakeRoomOracle compares MakeRoom with the exhaustive oracle on random
// small clusters (at most 5 movable jobs, K ≤ 3): same answer, the fewest
// moves and then the fewest GPUs moved (when MakeRoom says Exact), and a
// plan that applies move by move with Check clean and every moved job valid.
func TestMakeRoomOracle(t *testing.T) {
	seed := testSeed(t)
	n := testSteps(t, 1000)
	var p defrag.Planner
	var plan defrag.Plan
	var stats struct{ instances, fits, withMoves, gpusEqual, states, exact int }
	hist := map[int]int{}
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		o := genOpts{maxMovable: 5, cpu: rng.IntN(3) == 0, sets: rng.IntN(2) == 0, health: rng.IntN(3) == 0, models: rng.IntN(4) == 0,
			mostly: rng.IntN(2) == 0, elig: rng.IntN(3) == 0, noms: rng.IntN(3) == 0}
		tree := genCluster(rng, o)
		s := topology.NewState(tree)
		genLoad(rng, s, o, 0.6+0.35*rng.Float64())
		r := genRequest(rng, tree, s.JobIDBound(), o)
		if rng.IntN(4) > 0 {
			r = genTightRequestN(rng, s, s.JobIDBound(), o, 5)
		}
		k := 1 + rng.IntN(3)
		res, err := p.MakeRoom(s, r, defrag.Config{MaxMoves: k}, &plan)
		require.NoError(t, err)
		or := newOracle(s, r, k)
		moves, gpus, ok := or.solve()
		stats.instances++
		stats.states += or.states
		require.Equal(t, ok, res.Fits, "instance %d (seed %d): oracle %v (%d moves), MakeRoom %v %s\n%s", i, seed, ok, moves, res.Fits, res.Reason.Format(tree), picture(s, r, &plan))
		if res.Exact {
			stats.exact++
		}
		if !ok {
			continue
		}
		stats.fits++
		require.Equal(t, moves, len(plan.Moves), "instance %d (seed %d): moves\n%s", i, seed, picture(s, r, &plan))
		hist[moves]++
		target := plan.Target
		if plan.TargetHost >= 0 || len(plan.Moves) == 0 {
			target = -1
		}
		_, err = checkPlan(s, &plan, r, target)
		require.NoError(t, err, "instance %d (seed %d)\n%s", i, seed, picture(s, r, &plan))
		if moves > 0 {
			stats.withMoves++
			if res.Exact {
				require.Equal(t, gpus, plan.GPUs, "instance %d (seed %d): GPUs moved\n%s", i, seed, picture(s, r, &plan))
			}
			require.GreaterOrEqual(t, plan.GPUs, gpus)
			if plan.GPUs == gpus {
				stats.gpusEqual++
			}
		}
	}
	t.Logf("%d instances, %d fit (%d with moves: %v), fewest GPUs moved in %d of %d, exact %d, oracle states %d",
		stats.instances, stats.fits, stats.withMoves, hist, stats.gpusEqual, stats.withMoves, stats.exact, stats.states)
}
