package preempt

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
)

// TestByHost checks nominate's order of pods (byHost: a comparison sort
// below 512 pods, radix above) on random pods of sizes around the switch
// and above: every index once, hosts ascending.
func TestByHost(t *testing.T) {
	seed := testkit.Seed(t, 1)
	var p Planner
	for i := range testkit.Steps(t, 200) {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		n := pickSize(rng)
		if rng.IntN(3) == 0 {
			n = 510 + rng.IntN(4)
		}
		pods := make([]topology.Pod, n)
		span := 1 + rng.IntN(1<<uint(1+rng.IntN(22)))
		for k := range pods {
			pods[k].Host = topology.HostID(rng.IntN(span))
		}
		order := p.byHost(pods)
		seen := make([]bool, n)
		for k, o := range order {
			if seen[o] || k > 0 && pods[order[k-1]].Host > pods[o].Host {
				t.Fatalf("seed %d, instance %d (%d pods on hosts below %d): not a permutation in host order at %d", seed, i, n, span, k)
			}
			seen[o] = true
		}
		if len(order) != n {
			t.Fatalf("seed %d, instance %d: %d of %d pods", seed, i, len(order), n)
		}
	}
}

func pickSize(rng *rand.Rand) int {
	switch rng.IntN(3) {
	case 0:
		return rng.IntN(300)
	case 1:
		return 255 + rng.IntN(3)
	}
	return rng.IntN(5000)
}

// TestTDSort compares the top-down construction's order (tdSort: a radix
// sort of size and unheld milli) with a comparison sort by size descending,
// milli ascending, then index, on random candidates with many ties, whole
// GPUs alone or mixed with fractions.
func TestTDSort(t *testing.T) {
	seed := testkit.Seed(t, 1)
	var p Planner
	for i := range testkit.Steps(t, 300) {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		jobs := make([]tdJob, pickSize(rng))
		maxSize, fracs := 1+rng.IntN(1<<uint(rng.IntN(12))), rng.IntN(2) == 0
		for k := range jobs {
			size := int32(1 + rng.IntN(maxSize))
			milli := int64(size) * topology.FullGPU
			if fracs && rng.IntN(3) == 0 { // some GPUs held in part
				milli -= int64(rng.IntN(int(size))) * int64(1+rng.IntN(999))
			}
			jobs[k] = tdJob{id: topology.JobID(k), size: size, milli: milli}
		}
		p.tdJobs = jobs
		p.tdSort()
		want := make([]int32, len(jobs))
		for k := range want {
			want[k] = int32(k)
		}
		slices.SortStableFunc(want, func(a, b int32) int { // size descending, then milli
			return cmp.Or(cmp.Compare(jobs[b].size, jobs[a].size), cmp.Compare(jobs[a].milli, jobs[b].milli))
		})
		if !slices.Equal(want, p.order) {
			t.Fatalf("seed %d, instance %d (%d candidates): order differs", seed, i, len(jobs))
		}
	}
}
