package preempt

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// TestSlotSummary compares makeSlots (its scan turning away candidates
// with fewer pods than the top's last) with the summary made the simple
// way: every candidate listed, sorted, the first kept, the least milli of
// each bucket and above by plain minima; and leastMilli with the sum of the
// k least of the top's candidates of sMin slots or more and k beyond them. Random job views of up to a few thousand
// ids, some absent or not preemptible, priorities around the request's,
// pod counts with many ties and some large, tops of 1 to 40 kept.
func TestSlotSummary(t *testing.T) {
	seed := testkit.Seed(t, 1)
	for i := range testkit.Steps(t, 1000) {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		p := randomSlotView(rng)
		p.makeSlots()
		top, all, least := slotSummarySimple(p)
		x := &p.slots
		if !slices.Equal(x.top, top) || x.all != all || x.least != least || x.prefix[len(x.prefix)-1] != sumSlots(top) {
			t.Fatalf("seed %d, instance %d (%d ids, keep %d, per %d): summary\n%v all %v least %v\nwant\n%v all %v least %v",
				seed, i, len(p.prios), x.keep, x.per, x.top, x.all, x.least, top, all, least)
		}
		if len(top) == 0 {
			continue
		}
		for range 20 {
			k, sMin := 1+rng.IntN(len(top)+2), top[rng.IntN(len(top))].slots+int64(rng.IntN(3)-1)
			got, ok := x.leastMilli(k, sMin)
			want, wantOK := leastMilliSimple(top, all, &least, k, sMin)
			if got != want || ok != wantOK {
				t.Fatalf("seed %d, instance %d: leastMilli(%d, %d) = %d, %v, want %d, %v", seed, i, k, sMin, got, ok, want, wantOK)
			}
		}
	}
}

// randomSlotView is a Planner holding a random job view, a request of one
// pod set on a tree whose host has 0–64 GPUs, and a random top size.
func randomSlotView(rng *rand.Rand) *Planner {
	gpus := rng.IntN(65) // 0: no GPUs, every slot count 0
	tree, err := topology.BuildHosts([]string{"rack"}, []topology.HostSpec{{Name: "h", Path: []string{"r"}, GPUs: gpus}})
	if err != nil {
		panic(fmt.Sprint(err))
	}
	n := rng.IntN(3000)
	p := &Planner{t: tree, sets: []setInfo{{pods: 1, gpus: int64(1 + rng.IntN(max(gpus, 1)))}},
		r: &placement.Request{Priority: int32(rng.IntN(8))}, prios: make([]int32, n), npods: make([]int32, n),
		millis: make([]uint64, n), preW: make([]uint64, (n+63)/64)}
	p.slots.keep = 1 + rng.IntN(40)
	for j := range n {
		if rng.IntN(10) == 0 {
			continue // absent
		}
		p.prios[j] = int32(rng.IntN(10))
		p.npods[j] = int32(1 + rng.IntN(1<<uint(rng.IntN(12))))
		p.millis[j] = uint64(250 * (1 + rng.IntN(1<<uint(rng.IntN(12)))))
		if rng.IntN(4) != 0 {
			p.preW[j/64] |= 1 << (j % 64)
		}
	}
	return p
}

// slotSummarySimple is the summary of p's candidates made the simple way.
func slotSummarySimple(p *Planner) (top []slotJob, all bool, least [slotBuckets]int64) {
	for b := range least {
		least[b] = -1
	}
	per := p.slots.per
	var cands []slotJob
	for j := range p.prios {
		if p.preW[j/64]&(1<<(j%64)) == 0 || p.prios[j] >= p.r.Priority {
			continue
		}
		c := slotJob{slots: per * int64(p.npods[j]), milli: int64(p.millis[j])}
		cands = append(cands, c)
		if b := slotBucket(c.slots); least[b] < 0 || c.milli < least[b] {
			least[b] = c.milli
		}
	}
	for b := slotBuckets - 2; b >= 0; b-- { // the least from each bucket on
		if least[b+1] >= 0 && (least[b] < 0 || least[b+1] < least[b]) {
			least[b] = least[b+1]
		}
	}
	slices.SortStableFunc(cands, func(a, b slotJob) int {
		switch {
		case a.better(b):
			return -1
		case b.better(a):
			return 1
		}
		return 0
	})
	top = cands[:min(len(cands), p.slots.keep)]
	return top, len(top) == len(cands), least
}

func sumSlots(top []slotJob) int64 {
	s := int64(0)
	for _, c := range top {
		s += c.slots
	}
	return s
}

// leastMilliSimple is leastMilli by a sort of every milli it may take:
// those of the top's candidates of sMin slots or more, and k times what a
// candidate beyond the top holds at least (least: from each bucket on).
func leastMilliSimple(top []slotJob, all bool, least *[slotBuckets]int64, k int, sMin int64) (int64, bool) {
	var m []int64
	for _, c := range top {
		if c.slots >= sMin {
			m = append(m, c.milli)
		}
	}
	if last := top[len(top)-1]; !all && last.slots >= sMin {
		pad := max(least[slotBucket(max(sMin, 0))], 0)
		if last.slots == sMin {
			pad = max(pad, last.milli)
		}
		for range k {
			m = append(m, pad)
		}
	}
	if len(m) < k {
		return 0, false
	}
	slices.Sort(m)
	sum := int64(0)
	for _, v := range m[:k] {
		sum += v
	}
	return sum, true
}

// TestSumLeast compares sumLeast (its front kept in order for a few
// victims) with a sort, on random values with ties, k from 1 to beyond 8.
func TestSumLeast(t *testing.T) {
	seed := testkit.Seed(t, 1)
	for i := range testkit.Steps(t, 5000) {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		m := make([]int64, 1+rng.IntN(70))
		for j := range m {
			m[j] = int64(rng.IntN(1 + rng.IntN(1000)))
		}
		k := 1 + rng.IntN(min(len(m), 12))
		want := slices.Clone(m)
		slices.Sort(want)
		sum := int64(0)
		for _, v := range want[:k] {
			sum += v
		}
		if got := sumLeast(m, k); got != sum {
			t.Fatalf("seed %d, instance %d (%d values, k %d): %d, want %d", seed, i, len(m), k, got, sum)
		}
	}
}
