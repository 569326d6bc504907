package placement_test

import (
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// Two fractional pod sets on a host of three usable GPUs: four pods of 400
// milli and four of 300 fit only as 400+300+300 on two GPUs and 400+400 on
// the third, which the rule (least free milli first, set after set) does
// not find; the exhaustive search's exact packing does (found by
// TestRestrictionOracle, BLINK_SEED=941 BLINK_STEPS=8000, instance 681).
// One more 300 exceeds the GPUs' milli: no fit.
func TestExhaustiveFractionsPack(t *testing.T) {
	tree, err := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{1, 1}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := topology.NewState(tree)
	require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{topology.SetGPUHealth(1, topology.Failed)}}))
	var v placement.Solver
	var plan placement.Plan
	for _, c := range []struct {
		small int32
		fits  bool
	}{{4, true}, {5, false}} {
		r := &placement.Request{Job: 1, Required: topology.NoLevel, Preferred: topology.NoLevel,
			Sets: []placement.PodSet{{Pods: 4, GPUs: 1, Milli: 400}, {Pods: c.small, GPUs: 1, Milli: 300}}}
		ok, _, err := v.Place(s, r, &plan)
		require.NoError(t, err)
		require.Equal(t, c.fits, ok, "%d pods of 300", c.small)
		if !ok {
			continue
		}
		milli := map[uint64]int32{}
		for i, p := range plan.Pods {
			want := int32(400)
			if i >= 4 {
				want = 300
			}
			require.Equal(t, want, p.Milli, "pod %d", i)
			milli[p.GPUs] += p.Milli
		}
		for g, m := range milli {
			require.NotEqual(t, uint64(1<<1), g, "a pod on the failed GPU")
			require.LessOrEqual(t, m, int32(topology.FullGPU), "GPU mask %b", g)
		}
		c := s.Clone()
		require.NoError(t, c.Apply(plan.Delta()))
		require.NoError(t, c.Check())
	}
}
