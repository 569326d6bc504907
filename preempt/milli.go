package preempt

import (
	"math/bits"

	"github.com/blinksched/blink/topology"
)

// A lower bound on the milli-GPUs of a victim set, per GPU. For a pod set of
// whole GPUs, a victim set that fits frees at least the GPUs missing (the
// set's GPUs less those free with V empty, dead hosts' included: they take
// no more than that). A GPU comes free only when every pod on it leaves, so
// freeing it costs the victims the milli of all its pods — 1000 for a GPU
// held whole, the sum of its fractions for a shared one, nothing for an
// unused GPU of a host a victim holds exclusively — and no pod's milli is
// counted for two GPUs. The victims therefore hold at least the sum of the
// cheapest such costs over as many GPUs as are missing. On a full cluster
// where victims hold whole GPUs this is 1000 per missing GPU: the greedy's
// answer is then often proven optimal.

// milliFloor is that bound for the candidates in V (all that may be victims:
// the others stay) freeing missing GPUs in m's hosts. O(the model's pods).
func (p *Planner) milliFloor(m *model, missing int64) int64 {
	if missing <= 0 {
		return 0
	}
	count := resize(p.milliHist, topology.FullGPU+1)
	p.milliHist = count
	clear(count)
	var cost [topology.MaxHostGPUs]int32
	for k := range m.hosts {
		rec := &m.hosts[k]
		if rec.owner >= 0 && !m.in[rec.owner] {
			continue // held by a job that stays
		}
		blocked, touched := rec.fixed, uint64(0)
		for i := rec.lo; i < rec.hi; i++ {
			pe := &m.pods[i]
			if !m.in[pe.cand] {
				blocked |= pe.gpus
				continue
			}
			for g := pe.gpus; g != 0; g &= g - 1 {
				b := bits.TrailingZeros64(g)
				if touched&(1<<uint(b)) == 0 {
					touched |= 1 << uint(b)
					cost[b] = 0
				}
				if pe.milli == 0 {
					cost[b] += topology.FullGPU
				} else {
					cost[b] += pe.milli
				}
			}
		}
		if rec.owner >= 0 { // its unused GPUs come free with the owner
			count[0] += int64(bits.OnesCount64(rec.share &^ blocked &^ touched))
		}
		for g := rec.share &^ blocked & touched; g != 0; g &= g - 1 {
			count[min(cost[bits.TrailingZeros64(g)], topology.FullGPU)]++
		}
	}
	sum, left := int64(0), missing
	for c := range count {
		take := min(left, count[c])
		sum += take * int64(c)
		if left -= take; left == 0 {
			break
		}
	}
	return sum
}
