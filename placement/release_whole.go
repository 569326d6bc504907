package placement

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// Building the released hosts' entries in one pass per pod and one per host
// (buildWhole), when finishWhole finishes every entry: the pods are many
// (dense listing), none returns a fraction, the gang may share every GPU
// (relAll) and asks for neither fractions nor exclusivity. The pass over
// the pods sets the bitmap of released hosts and sums what each host got
// back in relAcc (a host's first pod overwrites its slot, so relAcc is
// never cleared); the pass over the bitmap writes each entry whole —
// created, given back its pods and finished at once — with the per-word
// counts and the prefix sums of the gains. The entries are those
// relHostsDense, addRel and finishWhole make (its rule is repeated inline).

// relAcc is what a released host's pods gave back, before its entry exists.
type relAcc struct {
	whole    uint64
	cpu, mem int32
}

// buildWhole builds the entries as above and reports true, or reports
// false when it does not apply (a pod returns a fraction: nothing built;
// the bitmap and relAcc it wrote are rewritten by the next build anyway).
func (v *Solver) buildWhole() bool {
	if !v.relAll || v.fracs || v.r.Exclusive || v.legacy {
		return false
	}
	words := relWords(v.t)
	b := slices.Grow(v.relOrder[:0], 2*words)[:2*words]
	clear(b)
	v.relOrder = b
	if n := v.t.NumHosts(); len(v.relAcc) != n {
		v.relAcc = make([]relAcc, n) // once per tree
	}
	acc := v.relAcc
	count := 0
	for _, p := range v.relPods {
		if p.Milli != 0 {
			return false
		}
		w, bit := 2*int(p.Host>>6), int64(1)<<(uint(p.Host)&63)
		if b[w]&bit == 0 {
			b[w] |= bit
			acc[p.Host] = relAcc{whole: p.GPUs, cpu: p.CPUMilli, mem: p.MemoryMiB}
			count++
			continue
		}
		a := &acc[p.Host]
		a.whole |= p.GPUs
		a.cpu += p.CPUMilli
		a.mem += p.MemoryMiB
	}
	v.rel = slices.Grow(v.rel[:0], count)[:count]
	v.relSum = slices.Grow(v.relSum[:0], count+1)[:count+1]
	v.wholeEntries(b, acc)
	return true
}

// wholeEntries writes an entry per host of bitmap b (interleaved with its
// per-word counts, written here), from relAcc, and the prefix sums of the
// gains; finishWhole's work is done inline.
func (v *Solver) wholeEntries(b []int64, acc []relAcc) {
	s, t, free, sum := v.s, v.t, v.s.HostFreeCounts(), v.relSum
	sum[0] = [2]int64{}
	n, gpus := 0, int64(0)
	for w := 0; w < len(b); w += 2 {
		b[w+1] = int64(n)
		for x := uint64(b[w]); x != 0; x &= x - 1 {
			h := topology.HostID(w<<5 | bits.TrailingZeros64(x))
			a := &acc[h]
			mask := a.whole
			if k := t.HostGPUCount(h); k >= 64 || a.whole != 1<<uint(k)-1 { // not every GPU back
				mask |= s.HostUnusedMask(h)
			}
			v.rel[n] = hostOv{mask: mask, h: h, cpu: s.HostCPU(h) + a.cpu, mem: s.HostMemory(h) + a.mem}
			gpus += int64(popcount(mask) - int(free[h]))
			n++
			sum[n] = [2]int64{gpus, 0}
		}
	}
}
