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

// TestFillWholeSameAnswer: gangs of whole-host pods on trees of one host
// size (fillWhole's case: every pod of the last set takes a host whole)
// get the same answer with the shortcuts and without them (SetLegacy) —
// fit, reason, every pod, the domain — on random shapes (host sizes at word
// edges) and loads, required in a domain, preferred or neither, now and then
// with CPU per pod, a second set ahead or a model named. Each fitting plan
// is applied, so the cluster fills up and the hosts left free scatter.
func TestFillWholeSameAnswer(t *testing.T) {
	seed := testkit.Seed(t, 3)
	rng := rand.New(rand.NewPCG(seed, 0x66696c6c))
	n := testkit.Steps(t, 300)
	compared, fits := 0, 0
	for inst := range n {
		levels := []string{"block", "su", "rack"}[3-1-rng.IntN(3):]
		fan := make([]int, len(levels)+1)
		for i := range fan {
			fan[i] = 1 + rng.IntN(5)
		}
		gpus := []int{1, 2, 4, 8, 63, 64}[rng.IntN(6)]
		tree, err := topology.BuildShape(topology.Shape{Levels: levels, FanOut: fan, GPUsPerHost: gpus,
			Model: "H100", CPUMilli: 8000})
		require.NoError(t, err)
		s := topology.NewState(tree)
		genLoad(rng, s)
		var fast, slow placement.Solver
		slow.SetLegacy(true)
		var pf, ps placement.Plan
		for step := range 30 {
			r := &placement.Request{Job: topology.JobID(1000 + step), Priority: int32(rng.IntN(20)),
				Required: topology.NoLevel, Preferred: topology.NoLevel,
				Sets: []placement.PodSet{{Pods: int32(1 + rng.IntN(tree.NumHosts()/6+1)), GPUs: int32(gpus)}}}
			switch rng.IntN(3) {
			case 0:
				r.Required = topology.Level(rng.IntN(int(tree.HostLevel())))
			case 1:
				r.Preferred = topology.Level(rng.IntN(int(tree.HostLevel())))
			}
			if rng.IntN(5) == 0 {
				r.Sets[0].CPUMilli = int32(1000 * rng.IntN(9))
			}
			if rng.IntN(5) == 0 { // a set ahead: the whole hosts are the last set's
				r.Sets = append([]placement.PodSet{{Pods: int32(1 + rng.IntN(3)), GPUs: int32(1 + rng.IntN(gpus))}}, r.Sets...)
			}
			if rng.IntN(8) == 0 {
				r.Models = []int{0}
			}
			where := fmt.Sprintf("instance %d step %d (seed %d): %+v", inst, step, seed, r)
			compared++
			if sameAnswer(t, s, r, nil, &fast, &slow, &pf, &ps, where) {
				fits++
			}
		}
	}
	t.Logf("%d requests compared, %d fits applied", compared, fits)
	require.Greater(t, fits, compared/10)
}
