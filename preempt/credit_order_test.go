package preempt

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
)

// TestCreditCover compares cover (the order made on demand, and none when
// one credit covers Δ) with coverSorted, the bound over every candidate
// sorted first, on random candidates: few and many (around the heap's
// edges), credits with many ties, a handful of priorities, every priority
// tried and past the last; cover's one victim too.
func TestCreditCover(t *testing.T) {
	seed := testkit.Seed(t, 1)
	var p Planner
	for i := range testkit.Steps(t, 2000) {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		jobs := randomCredits(rng)
		need := int64(1 + rng.IntN(40))
		prios := []int32{0, 1, 2, 3, 5, 1 << 30}
		for _, prio := range prios {
			x := &p.cred
			x.jobs = append(x.jobs[:0], jobs...)
			x.creditOrder.reset()
			for _, q := range prios[:rng.IntN(len(prios))] { // priorities tried before (the order made so far)
				_, _, _, _ = p.cover(need, q)
			}
			next, k, milli, ok := p.cover(need, prio)
			single := x.single
			wNext, wk, wMilli, wOK, wSingle := coverSorted(jobs, need, prio)
			if next != wNext || k != wk || milli != wMilli || ok != wOK || k == 1 && single != wSingle {
				t.Fatalf("seed %d, instance %d (%d candidates, need %d, priority %d): cover (%d, %d, %d, %v, single %d), sorted (%d, %d, %d, %v, single %d)",
					seed, i, len(jobs), need, prio, next, k, milli, ok, single, wNext, wk, wMilli, wOK, wSingle)
			}
		}
	}
}

// randomCredits is a random domain's candidates as the credit bound sees
// them: credits of whole pods and fractions (in creditUnit), solo pods up
// to the credit's, milli and a priority of a few.
func randomCredits(rng *rand.Rand) []creditJob {
	n := rng.IntN(40)
	if rng.IntN(3) == 0 {
		n = rng.IntN(3000)
	}
	jobs := make([]creditJob, n)
	for i := range jobs {
		w := int64(1+rng.IntN(1<<uint(rng.IntN(8)))) * creditUnit / int64(1+rng.IntN(4))
		jobs[i] = creditJob{w: w, solo: int64(rng.IntN(int(w/creditUnit) + 1)), milli: int64(250 * (1 + rng.IntN(64))),
			prio: int32(rng.IntN(4)), id: topology.JobID(rng.IntN(1 << 20))}
	}
	return jobs
}

// coverSorted is cover as it was first written: every candidate sorted by
// credit (most first, then least milli), k the fewest of the first whose
// credits cover Δ, one victim only through its solo pods, and each of k
// holding at least Δ less the k−1 largest other credits.
func coverSorted(jobs []creditJob, need int64, prio int32) (next int32, k int, milli int64, ok bool, single topology.JobID) {
	jobs = slices.Clone(jobs)
	slices.SortFunc(jobs, func(a, b creditJob) int {
		if a.w != b.w {
			return cmp.Compare(b.w, a.w)
		}
		return cmp.Compare(a.milli, b.milli)
	})
	delta := need * creditUnit
	next, single = prio, -1
	sum, n := int64(0), 0
	for _, c := range jobs {
		if c.prio > prio {
			if next == prio || c.prio < next {
				next = c.prio
			}
			continue
		}
		n++
		if sum < delta {
			sum += c.w
			k++
		}
	}
	if sum < delta {
		return next, 0, 0, false, single
	}
	if k == 1 {
		best := int64(-1)
		for _, c := range jobs {
			if c.prio <= prio && c.solo >= need && (best < 0 || c.milli < best || c.milli == best && c.id < single) {
				best, single = c.milli, c.id
			}
		}
		if best >= 0 {
			return next, 1, best, true, single
		}
		if n < 2 {
			return next, 0, 0, false, single
		}
		k = 2
	}
	largest := int64(0)
	for i, left := 0, k-1; left > 0; i++ {
		if jobs[i].prio <= prio {
			largest += jobs[i].w
			left--
		}
	}
	var m []int64
	for _, c := range jobs {
		if c.w < delta-largest {
			break
		}
		if c.prio <= prio {
			m = append(m, c.milli)
		}
	}
	if len(m) < k {
		return next, k + 1, 0, true, single
	}
	slices.Sort(m)
	for _, v := range m[:k] {
		milli += v
	}
	return next, k, milli, true, single
}
