package placement_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// loopTree is a 1,024-GPU cluster: 2 blocks × 4 racks × 16 hosts; block 1's
// last two racks hold 4-GPU hosts of another model, so GPUs are 896 in all.
func loopTree(t *testing.T) *topology.Tree {
	t.Helper()
	var hosts []topology.HostSpec
	for b := range 2 {
		for r := range 4 {
			for h := range 16 {
				spec := topology.HostSpec{Name: fmt.Sprintf("b%dr%dh%d", b, r, h),
					Path: []string{fmt.Sprintf("b%d", b), fmt.Sprintf("b%dr%d", b, r)},
					GPUs: 8, Model: "H100", CPUMilli: 128000, MemoryMiB: 1 << 20}
				if b == 1 && r >= 2 {
					spec.GPUs, spec.Model = 4, "GB200"
				}
				hosts = append(hosts, spec)
			}
		}
	}
	tree, err := topology.BuildHosts([]string{"block", "rack"}, hosts)
	require.NoError(t, err)
	return tree
}

// TestPlaceReleaseLoop places random gangs, applies their plans, removes
// random jobs, and changes health and nominations, with Check after every
// step and every plan validated before it is applied.
func TestPlaceReleaseLoop(t *testing.T) {
	seed := testSeed(t)
	steps := testSteps(t, 10000)
	rng := rand.New(rand.NewPCG(seed, 0))
	tree := loopTree(t)
	s := topology.NewState(tree)
	var (
		v                 placement.Solver
		plan              placement.Plan
		live              []topology.JobID
		free              []topology.JobID // job ids not in use
		nominees          []topology.JobID
		placed, rejected  int
		nextNominee       = topology.JobID(1000)
		lim               = reqLimits{maxPods: 48, maxGPUs: 8, maxSets: 2, policies: true}
		H, G              = tree.NumHosts(), tree.NumGPUs()
		maxLoad, sumLoads float64
	)
	for id := range topology.JobID(256) {
		free = append(free, id)
	}
	apply := func(op topology.Op) error { return s.Apply(topology.Delta{Ops: []topology.Op{op}}) }
	for step := range steps {
		placeBelow := 55 // percent of steps that place; fewer when the cluster is full
		if 1-float64(s.Free(0))/float64(G) > 0.75 {
			placeBelow = 30
		}
		switch roll := rng.IntN(100); {
		case roll < placeBelow && len(free) > 0:
			r := genRequest(rng, tree, nil, lim)
			k := rng.IntN(len(free))
			r.Job = free[k]
			if len(nominees) > 0 && rng.IntN(4) == 0 {
				r.Job, k = pick(rng, nominees...), -1
			}
			ok, why, err := v.Place(s, r, &plan)
			require.NoError(t, err, "step %d", step)
			if !ok {
				rejected++
				require.NotEqual(t, placement.Fits, why.Code, "step %d", step)
				require.ErrorIs(t, why.Err(tree), placement.ErrNoFit)
				break
			}
			if msg := newOracle(s, r).validate(&plan); msg != "" {
				t.Fatalf("step %d: %s\n%s", step, msg, describe(s, r))
			}
			require.NoError(t, s.Apply(plan.Delta()), "step %d", step)
			placed++
			live = append(live, r.Job)
			if k >= 0 {
				free = append(free[:k], free[k+1:]...)
			} else {
				nominees = remove(nominees, r.Job)
			}
		case roll < 90 && len(live) > 0:
			k := rng.IntN(len(live))
			require.NoError(t, apply(topology.RemoveJob(live[k])), "step %d", step)
			free = append(free, live[k])
			live = append(live[:k], live[k+1:]...)
		case roll < 93:
			h := topology.HostID(rng.IntN(H))
			require.NoError(t, apply(topology.SetHostHealth(h, pick(rng, topology.Healthy, topology.Healthy, topology.Healthy, topology.Draining, topology.Failed))))
		case roll < 96:
			g := topology.GPUID(rng.IntN(G))
			require.NoError(t, apply(topology.SetGPUHealth(g, pick(rng, topology.Healthy, topology.Healthy, topology.Failed))))
		case roll < 98:
			h := topology.HostID(rng.IntN(H))
			lo, hi := tree.HostGPUs(h)
			n := topology.Nomination{Job: nextNominee, Priority: int32(rng.IntN(22)) - 1,
				Ready: int64(step + rng.IntN(50)), Expiry: int64(step + rng.IntN(500))}
			for g := lo; g < hi; g++ {
				if rng.IntN(2) == 0 {
					n.GPUs = append(n.GPUs, g)
				}
			}
			if len(n.GPUs) > 0 && apply(topology.Nominate(n)) == nil {
				nominees = append(nominees, nextNominee)
				nextNominee++
			}
		default:
			require.NoError(t, apply(topology.ExpireNominations(int64(step))))
			nominees = keepNominated(s, nominees)
		}
		require.NoError(t, s.Check(), "step %d", step)
		load := 1 - float64(s.Free(0))/float64(G)
		maxLoad = max(maxLoad, load)
		sumLoads += load
	}
	t.Logf("%d steps: %d gangs placed, %d rejected; %d jobs live; load mean %.0f%%, max %.0f%%",
		steps, placed, rejected, len(live), 100*sumLoads/float64(max(steps, 1)), 100*maxLoad)
}

func remove(ids []topology.JobID, id topology.JobID) []topology.JobID {
	for i, x := range ids {
		if x == id {
			return append(ids[:i], ids[i+1:]...)
		}
	}
	return ids
}

// keepNominated drops the ids whose nomination is gone.
func keepNominated(s *topology.State, ids []topology.JobID) []topology.JobID {
	out := ids[:0]
	for _, id := range ids {
		if _, ok := s.NominationOf(id); ok {
			out = append(out, id)
		}
	}
	return out
}
