package placement

import (
	"math/bits"

	"github.com/blinksched/blink/topology"
)

// The overlay records what the current attempt took on each host, so later
// pods and pod sets of the same gang see it. reset starts a new attempt in
// O(1) by bumping the epoch (plus reinstalling the released overlays, unless
// the last attempt read or wrote no overlay and stamped no rack: then they
// are as the last install left them).

func (v *Solver) reset() {
	if len(v.rel) != 0 && v.relKept && !v.ovTaken && len(v.ov) == len(v.rel) && !v.legacy {
		return
	}
	v.newEpoch()
	v.installRel()
}

// newEpoch drops every overlay: a new epoch, which no stamp matches.
func (v *Solver) newEpoch() {
	v.ov = v.ov[:0]
	v.epoch++
	if v.epoch == 0 { // wrapped: clear stamps once every 2^32 attempts
		clear(v.ovStamp)
		v.epoch = 1
	}
	v.ovTaken = false
}

// ovAt returns host h's overlay index, or -1. A released host listed in
// the bitmap of released hosts (relOrder: dense releases) has its overlay at
// its index in rel, where every install puts it (relSearch counts it), and
// no stamp; other hosts are stamped when their overlay is made (ovFor).
func (v *Solver) ovAt(h topology.HostID) int32 {
	if b := v.relOrder; len(b) > 0 {
		w, bit := 2*int(h>>6), uint64(1)<<(uint(h)&63)
		if w < len(b) && uint64(b[w])&bit != 0 {
			return int32(b[w+1]) + int32(bits.OnesCount64(uint64(b[w])&(bit-1)))
		}
	}
	if v.ovStamp[h] != v.epoch {
		return -1
	}
	return v.ovIdx[h]
}

// ovFor returns host h's overlay and its milli per GPU, creating them from
// the State.
func (v *Solver) ovFor(h topology.HostID) (*hostOv, *gpuMilli) {
	v.ovTaken = true
	if o := v.ovAt(h); o >= 0 {
		if !v.milli {
			return &v.ov[o], &v.noMilli
		}
		return &v.ov[o], &v.ovMilli[o]
	}
	n := len(v.ov)
	v.ov = append(v.ov, hostOv{h: h, mask: v.baseMask(h), cpu: v.s.HostCPU(h), mem: v.s.HostMemory(h), others: v.s.HostHasPods(h)})
	o := &v.ov[n]
	v.ovIdx[h], v.ovStamp[h] = int32(n), v.epoch
	if !v.milli { // whole GPUs only: 128 bytes a host nobody reads
		return o, &v.noMilli
	}
	for len(v.ovMilli) <= n { // never shorter than ov
		v.ovMilli = append(v.ovMilli, gpuMilli{})
	}
	ms := &v.ovMilli[n]
	v.baseMilli(h, o.mask, ms)
	return o, ms
}

// baseMilli writes host h's free milli per GPU for this gang before this
// attempt into ms, given its whole GPUs free (mask): the GPUs it may share,
// less whole GPUs that are taken.
func (v *Solver) baseMilli(h topology.HostID, mask uint64, ms *gpuMilli) {
	*ms = gpuMilli{}
	lo, _ := v.t.HostGPUs(h)
	for u := v.shareMask(h); u != 0; u &= u - 1 {
		i := bits.TrailingZeros64(u)
		ms[i] = uint16(v.s.GPUMilli(lo + topology.GPUID(i)))
	}
	for i := range v.t.HostGPUCount(h) { // whole GPUs that are not free cannot be shared either
		if mask&(1<<uint(i)) == 0 && ms[i] == topology.FullGPU {
			ms[i] = 0
		}
	}
}

// assign puts n pods of the current set on host h, in rank order. The last
// pod set writes no overlay: nothing after it needs to see what it took.
func (v *Solver) assign(h topology.HostID, n int64) {
	set := v.set
	if set.Milli == 0 && v.last && !v.tracked {
		v.assignWhole(h, n)
		return
	}
	o, ms := v.ovFor(h)
	for range n {
		var gpus uint64
		switch {
		case set.Milli > 0:
			i := v.shareGPU(ms, h)
			gpus = 1 << uint(i)
			ms[i] -= uint16(set.Milli)
			o.mask &^= gpus
		case set.GPUs > 0:
			gpus = o.mask // the pod takes what is free (pickGPUs would too)
			if popcount(gpus) != int(set.GPUs) {
				gpus = pickGPUs(o.mask, int(set.GPUs))
			}
			o.mask &^= gpus
			for m := gpus; m != 0; m &= m - 1 {
				ms[bits.TrailingZeros64(m)] = 0
			}
		}
		o.cpu -= set.CPUMilli
		o.mem -= set.MemoryMiB
		v.out[v.pos] = topology.Pod{Host: h, GPUs: gpus, Milli: set.Milli, CPUMilli: set.CPUMilli, MemoryMiB: set.MemoryMiB}
		v.pos++
	}
}

// assignOneFrac is assign of one fractional pod on host h, for placeOne:
// the GPU assign would take — bestShare's tightest fit over the free milli
// baseMilli counts, here read GPU by GPU — without making h an overlay
// entry, which nothing reads after placeOne's only pod. Not for a GPU the
// profile or the exhaustive search chose.
func (v *Solver) assignOneFrac(h topology.HostID) {
	set := v.set
	m := uint16(set.Milli)
	lo, _ := v.t.HostGPUs(h)
	whole := v.baseMask(h)
	best, bestMilli := -1, uint16(topology.FullGPU+1)
	for u := v.shareMask(h); u != 0; u &= u - 1 { // ascending, as bestShare: ties go to the lowest
		i := bits.TrailingZeros64(u)
		f := uint16(v.s.GPUMilli(lo + topology.GPUID(i)))
		if whole&(1<<uint(i)) == 0 && f == topology.FullGPU {
			f = 0 // a whole GPU that is not free cannot be shared either
		}
		if f >= m && f < bestMilli {
			best, bestMilli = i, f
		}
	}
	gpus := uint64(0) // none fits (the capacity said one does): no GPU, as assign's shift of -1
	if best >= 0 {
		gpus = 1 << uint(best)
	}
	v.out[v.pos] = topology.Pod{Host: h, GPUs: gpus, Milli: set.Milli, CPUMilli: set.CPUMilli, MemoryMiB: set.MemoryMiB}
	v.pos++
}

// track makes the overlay account for every pod of the current set placed so
// far, so that nodes may be filled again after a shortfall (upper bounds
// overstated a node; what it could not hold goes to nodes that already took
// some of the set). Until then the last pod set's whole-GPU pods write no
// overlay (assign) and exact capacities read the State alone (hostCap); track
// replays those pods into the overlay and ends both shortcuts for the set.
func (v *Solver) track() {
	if v.tracked {
		return
	}
	v.tracked, v.exact = true, false
	if v.set.Milli != 0 || !v.last {
		return // assign kept the overlay
	}
	for _, p := range v.out[v.start:v.pos] {
		o, ms := v.ovFor(p.Host)
		o.mask &^= p.GPUs
		for m := p.GPUs; m != 0; m &= m - 1 {
			ms[bits.TrailingZeros64(m)] = 0
		}
		o.cpu -= p.CPUMilli
		o.mem -= p.MemoryMiB
	}
}

// assignWhole places n whole-GPU (or CPU-only) pods on host h without an
// overlay entry.
func (v *Solver) assignWhole(h topology.HostID, n int64) {
	set := v.set
	var mask uint64
	if o := v.ovAt(h); o >= 0 {
		mask = v.ov[o].mask
	} else if set.GPUs > 0 {
		mask = v.baseMask(h)
	}
	g := int(set.GPUs)
	if n == 1 && popcount(mask) == g { // the common case: the pod takes what is free
		v.out[v.pos] = topology.Pod{Host: h, GPUs: mask, CPUMilli: set.CPUMilli, MemoryMiB: set.MemoryMiB}
		v.pos++
		return
	}
	for range n {
		var gpus uint64
		if g > 0 {
			gpus = mask
			if popcount(mask) != g {
				gpus = pickGPUs(mask, g)
			}
			mask &^= gpus
		}
		v.out[v.pos] = topology.Pod{Host: h, GPUs: gpus, CPUMilli: set.CPUMilli, MemoryMiB: set.MemoryMiB}
		v.pos++
	}
}

// bestShare picks the GPU whose free milli fits m most tightly (partly used
// GPUs first, which keeps whole GPUs whole); ties: lowest index.
func bestShare(ms *gpuMilli, n int, m uint16) int {
	best, bestMilli := -1, uint16(topology.FullGPU+1)
	for i := range n {
		if f := ms[i]; f >= m && f < bestMilli {
			best, bestMilli = i, f
		}
	}
	return best
}

// pickGPUs chooses g GPUs of free mask m that keep the largest free blocks:
// the lowest g of the smallest run of consecutive free GPUs that holds them
// all; if no run does, the smallest runs first. Ties: lowest index.
func pickGPUs(m uint64, g int) uint64 {
	bestStart, bestLen := -1, 65
	for r := m; r != 0; {
		start := bits.TrailingZeros64(r)
		length := bits.TrailingZeros64(^(r >> uint(start)))
		if length >= g && length < bestLen {
			bestStart, bestLen = start, length
		}
		r &^= runMask(start, length)
	}
	if bestStart >= 0 {
		return runMask(bestStart, g)
	}
	var out uint64
	for need := g; need > 0; {
		s, l := smallestRun(m &^ out)
		take := min(l, need)
		out |= runMask(s, take)
		need -= take
	}
	return out
}

func runMask(start, length int) uint64 {
	if length >= 64 {
		return ^uint64(0) << uint(start)
	}
	return (uint64(1)<<uint(length) - 1) << uint(start)
}

func smallestRun(m uint64) (start, length int) {
	start, length = -1, 65
	for r := m; r != 0; {
		s := bits.TrailingZeros64(r)
		l := bits.TrailingZeros64(^(r >> uint(s)))
		if l < length {
			start, length = s, l
		}
		r &^= runMask(s, l)
	}
	return start, length
}
