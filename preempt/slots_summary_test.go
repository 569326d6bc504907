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
// each bucket by a plain minimum. Random job views of up to a few thousand
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
	}
}

// randomSlotView is a Planner holding a random job view, a request of one
// pod set on a tree whose hosts have 1–64 GPUs, and a random top size.
func randomSlotView(rng *rand.Rand) *Planner {
	gpus := 1 + rng.IntN(64)
	tree, err := topology.BuildHosts([]string{"rack"}, []topology.HostSpec{{Name: "h", Path: []string{"r"}, GPUs: gpus}})
	if err != nil {
		panic(fmt.Sprint(err))
	}
	n := rng.IntN(3000)
	p := &Planner{t: tree, sets: []setInfo{{pods: 1, gpus: int64(1 + rng.IntN(gpus))}},
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
