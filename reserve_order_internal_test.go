package blink

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestOrderCandsIsStableSort: orderCands gives a reservation's candidates in
// the order of a stable sort by ready time (they come by host), with and
// without known ends, now anywhere up to NoEnd itself, victims' deadlines
// between.
func TestOrderCandsIsStableSort(t *testing.T) {
	seed := testkit.Seed(t, 1)
	rng := rand.New(rand.NewPCG(seed, 0x6f72646572))
	tree, err := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{1, 4}, GPUsPerHost: 4})
	require.NoError(t, err)
	for i := range testkit.Steps(t, 2000) {
		cfg := Config{}
		if rng.IntN(2) == 0 {
			cfg.DefaultRunTime = 10 // ends known: the general sort
		}
		e, err := New(topology.NewState(tree), cfg)
		require.NoError(t, err)
		e.now = []int64{0, 5, 1 << 40, topology.NoEnd}[rng.IntN(4)]
		var cands []resCand
		for h := range topology.HostID(rng.IntN(40)) {
			for range 1 + rng.IntN(2) {
				ready := e.now
				switch rng.IntN(3) {
				case 1:
					ready = topology.NoEnd
				case 2:
					ready = max(e.now, e.now+int64(rng.IntN(5))) // a victim's deadline
				}
				cands = append(cands, resCand{ready: ready, h: h, pods: int32(len(cands))})
			}
		}
		want := slices.Clone(cands)
		slices.SortStableFunc(want, byReady)
		got := e.orderCands(slices.Clone(cands))
		require.Equal(t, want, got, "instance %d (seed %d), now %d", i, seed, e.now)
	}
}
