package placement

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/stretchr/testify/require"
)

// TestAddKindFront: addKind keeps the kinds no other covers — each kind
// added is covered by one kept, no kept kind covers another, and past maxKinds
// the kinds become one, the largest of each dimension.
func TestAddKindFront(t *testing.T) {
	seed := testkit.Seed(t, 1)
	rng := rand.New(rand.NewPCG(seed, 0x66726f6e))
	collapsed := 0
	for inst := range testkit.Steps(t, 2000) {
		var ks, added []hostKind
		chain := rng.IntN(3) == 0 // kinds none covers: the list outgrows maxKinds
		for i := range 1 + rng.IntN(40) {
			k := hostKind{gpus: rng.IntN(9), cpu: int32(rng.IntN(6)) * 1000, mem: int32(rng.IntN(6)) * 1024}
			if chain {
				k = hostKind{gpus: 4, cpu: int32(i) * 1000, mem: int32(40-i) * 1024}
			}
			added = append(added, k)
			ks = addKind(ks, k)
		}
		for _, a := range added {
			require.True(t, slices.ContainsFunc(ks, func(k hostKind) bool { return k.covers(a) }),
				"instance %d (seed %d): %v not covered by %v", inst, seed, a, ks)
		}
		require.LessOrEqual(t, len(ks), maxKinds)
		merged := slices.ContainsFunc(ks, func(k hostKind) bool { return !slices.Contains(added, k) })
		if merged {
			collapsed++
		}
		require.Equal(t, chain && len(added) > maxKinds, merged, "instance %d (seed %d): %v from %v", inst, seed, ks, added)
		for i, k := range ks {
			for j, o := range ks {
				require.False(t, i != j && k.covers(o), "instance %d (seed %d): %v covers %v", inst, seed, k, o)
			}
		}
	}
	require.Positive(t, collapsed)
}
