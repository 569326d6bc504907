package preempt

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
)

// TestSortGPUs compares sortGPUs (radix above 256 ids, a bitmap for many
// ids in a small span) with slices.Sort on random inputs of sizes around the
// switches and above, duplicates dropped.
func TestSortGPUs(t *testing.T) {
	seed := testkit.Seed(t, 1)
	var p Planner
	for i := range testkit.Steps(t, 200) {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		n := pickSize(rng)
		g := make([]topology.GPUID, n)
		span := 1 + rng.IntN(1<<uint(1+rng.IntN(24)))
		for k := range g {
			g[k] = topology.GPUID(rng.IntN(span))
		}
		want := slices.Clone(g)
		slices.Sort(want)
		if got := p.sortGPUs(g, span); !slices.Equal(slices.Compact(want), slices.Compact(got)) {
			t.Fatalf("seed %d, instance %d (%d ids below %d): radix order differs", seed, i, n, span)
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
