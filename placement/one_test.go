package placement_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestOnePodSameAnswer: placeOne, the path of one-pod requests, gives the
// general path's answer — fit, reason, every pod's host and GPUs, domain —
// on random trees (narrow ones, and ones whose root has more children than
// the root index's threshold), random loads (shared GPUs, CPU and memory,
// exclusive jobs, nominations, failed GPUs, draining hosts), sometimes a
// capacity-loss profile, and sequences of one-pod requests of every kind
// (whole GPUs, fractions, CPU-only, CPU and memory, models, eligible hosts
// as a bitset or a Restriction, exclusivity, every policy; some with a
// required or preferred level, or two pods, which placeOne leaves to the
// general path). Each fitting plan is applied, so the Solvers' indexes
// follow a changing State.
func TestOnePodSameAnswer(t *testing.T) {
	seed := testkit.Seed(t, 1)
	rng := rand.New(rand.NewPCG(seed, 0x6f6e65))
	n := testkit.Steps(t, 300)
	compared, fits := 0, 0
	for inst := range n {
		tree := genTree(rng, 40)
		if rng.IntN(3) == 0 {
			tree = wideTree(rng)
		}
		s := topology.NewState(tree)
		nominees := genLoad(rng, s)
		var fast, slow placement.Solver
		slow.SetNoOnePod(true)
		if rng.IntN(4) == 0 {
			prof := profProfile(rng, tree)
			require.NoError(t, fast.SetProfile(tree, prof))
			require.NoError(t, slow.SetProfile(tree, prof))
		}
		var pf, ps placement.Plan
		for step := range 40 {
			r := genRequest(rng, tree, nominees, reqLimits{maxPods: 1, maxGPUs: max(tree.MaxHostGPUs(), 1), maxSets: 1, policies: true})
			r.Job = topology.JobID(1000 + step)
			if rng.IntN(4) > 0 {
				r.Required, r.Preferred = pick(rng, topology.NoLevel, 0), pick(rng, topology.NoLevel, 0)
			}
			if rng.IntN(10) == 0 {
				r.Sets[0].Pods = 2
			}
			where := fmt.Sprintf("instance %d step %d (seed %d): %+v", inst, step, seed, r)
			compared++
			if sameAnswer(t, s, r, nil, &fast, &slow, &pf, &ps, where) {
				fits++
			}
		}
	}
	t.Logf("%d requests compared, %d fits", compared, fits)
	require.Positive(t, fits)
}

// wideTree is a tree of 65–130 blocks of 1–2 racks of 1–3 hosts (0–8 GPUs,
// two models): more children at the root than the root index's threshold.
func wideTree(rng *rand.Rand) *topology.Tree {
	var hosts []topology.HostSpec
	for b := range 65 + rng.IntN(66) {
		for r := range 1 + rng.IntN(2) {
			for h := range 1 + rng.IntN(3) {
				hosts = append(hosts, topology.HostSpec{Name: fmt.Sprintf("b%dr%dh%d", b, r, h),
					Path: []string{fmt.Sprintf("b%d", b), fmt.Sprintf("b%dr%d", b, r)},
					GPUs: rng.IntN(9), Model: pick(rng, "A", "A", "B"), CPUMilli: 64000, MemoryMiB: 1 << 18})
			}
		}
	}
	t, err := topology.BuildHosts([]string{"block", "rack"}, hosts)
	if err != nil {
		panic(err)
	}
	return t
}
