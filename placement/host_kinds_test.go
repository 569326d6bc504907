package placement_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestHostTooSmallOracle: on random trees of hosts of mixed GPUs, CPU,
// memory and models, a pod is refused for its CPU or memory exactly when
// no host of an acceptable model has its GPUs, CPU and memory together (a
// brute force over the hosts), with the largest CPU, then memory, of the
// hosts that passed the earlier checks; a gang's sets together on one host
// are refused only when the search without gang bounds finds no host either.
func TestHostTooSmallOracle(t *testing.T) {
	seed := testkit.Seed(t, 1)
	rng := rand.New(rand.NewPCG(seed, 0x6b696e64))
	n := testkit.Steps(t, 3000)
	refused, gangs := 0, 0
	for inst := range n {
		tree := genTree(rng, 16) // a model's kinds never exceed 16: exact
		s := topology.NewState(tree)
		r := tooSmallRequest(rng, tree)
		where := fmt.Sprintf("instance %d (seed %d): %+v", inst, seed, r)
		var v, slow placement.Solver
		slow.SetNoGangBound(true)
		var plan placement.Plan
		ok, why, err := v.Place(s, r, &plan)
		require.NoError(t, err, where)
		if why.Code != placement.HostCPUTooSmall && why.Code != placement.HostMemoryTooSmall {
			for si := range r.Sets {
				if why.Code != placement.HostTooSmall && why.Code != placement.NoModel {
					_, _, none := largest(tree, r, &r.Sets[si])
					require.False(t, none, "%s: set %d fits no host, answer %v", where, si, why)
				}
			}
			continue
		}
		require.False(t, ok, where)
		refused++
		require.Greater(t, why.Need, why.Have, where)
		require.NotEmpty(t, why.Format(tree), where)
		if why.Set < 0 {
			gangs++
			okS, _, errS := slow.Place(s, r, &plan)
			require.NoError(t, errS, where)
			require.False(t, okS, "%s: refused as %v, the search without bounds places it", where, why)
			continue
		}
		cpu, mem, none := largest(tree, r, &r.Sets[why.Set])
		require.True(t, none, "%s: a host holds set %d, refused as %v", where, why.Set, why)
		if why.Code == placement.HostCPUTooSmall {
			require.Equal(t, cpu, why.Have, where)
			require.Equal(t, int64(r.Sets[why.Set].CPUMilli), why.Need, where)
		} else {
			require.Equal(t, mem, why.Have, where)
			require.Equal(t, int64(r.Sets[why.Set].MemoryMiB), why.Need, where)
		}
	}
	t.Logf("%d requests, %d refused for CPU or memory (%d of them gangs on one host)", n, refused, gangs)
	require.Positive(t, refused-gangs)
	require.Positive(t, gangs)
}

// largest is the brute force: the most CPU among hosts of an acceptable
// model with the set's GPUs, the most memory among those with its CPU too,
// and whether none of those has its memory too.
func largest(tree *topology.Tree, r *placement.Request, set *placement.PodSet) (cpu, mem int64, none bool) {
	cpu, mem, none = -1, -1, true
	for h := range topology.HostID(tree.NumHosts()) {
		if !modelOK(tree, r, h) || tree.HostGPUCount(h) < int(set.GPUs) {
			continue
		}
		cpu = max(cpu, int64(tree.HostCPU(h)))
		if tree.HostCPU(h) < set.CPUMilli {
			continue
		}
		mem = max(mem, int64(tree.HostMemory(h)))
		none = none && tree.HostMemory(h) < set.MemoryMiB
	}
	return cpu, mem, none
}

func modelOK(tree *topology.Tree, r *placement.Request, h topology.HostID) bool {
	if len(r.Models) == 0 {
		return true
	}
	return slices.Contains(r.Models, tree.HostModel(h))
}

// tooSmallRequest draws one to three pod sets whose CPU and memory reach
// past genTree's hosts, some of models restricted, some required on one
// host.
func tooSmallRequest(rng *rand.Rand, tree *topology.Tree) *placement.Request {
	r := &placement.Request{Job: 1, Preferred: topology.NoLevel}
	for range 1 + rng.IntN(3) {
		set := placement.PodSet{Pods: int32(1 + rng.IntN(3)), GPUs: int32(rng.IntN(5))}
		if set.GPUs == 1 && rng.IntN(2) == 0 {
			set.Milli = pick[int32](rng, 300, 500, 700)
		}
		set.CPUMilli = pick[int32](rng, 0, 1000, 4000, 8000, 16000, 40000, 64000, 100000)
		set.MemoryMiB = pick[int32](rng, 0, 4096, 32768, 100000, 262144, 300000)
		r.Sets = append(r.Sets, set)
	}
	if len(r.Sets) > 1 && rng.IntN(2) == 0 {
		r.Required = tree.HostLevel()
	}
	if rng.IntN(3) == 0 {
		r.Models = []int{rng.IntN(tree.NumModels())}
	}
	return r
}
