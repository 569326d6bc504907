package placement

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// A gang of several pod sets required on one host (or domain) is tried,
// host after host, by the rule and then by the exhaustive search; the
// candidates' capacity is the primary set's alone. hostHoldsGang refuses
// beforehand the hosts no layout of the whole gang fits, by conditions
// every layout meets: the whole GPUs, CPU and memory of all sets together,
// and a bin-packing bound on the fractions (fracBound); domHoldsGang the
// domains whose free GPUs and milli fall short. They only ever refuse
// nodes where every search fails, so no answer changes; a gang too large
// for every host is refused before any scan (gangHostGPUs), and one that
// needs more free GPUs than most hosts have skips them from their counts
// (gangWholeFree).

// gangTotals is what a gang's pod sets ask for together.
type gangTotals struct {
	whole, milli int64 // whole GPUs; milli of the fractional pods
	cpu, mem     int64
	fracs        int64 // fractional pods
}

// totals sums the request's pod sets.
func (v *Solver) totals() gangTotals {
	var g gangTotals
	for i := range v.r.Sets {
		set := &v.r.Sets[i]
		n := int64(set.Pods)
		if set.Milli > 0 {
			g.milli += n * int64(set.Milli)
			g.fracs += n
		} else {
			g.whole += n * int64(set.GPUs)
		}
		g.cpu += n * int64(set.CPUMilli)
		g.mem += n * int64(set.MemoryMiB)
	}
	return g
}

// holdsGang reports whether node (L, i) may hold every pod set of the
// request together (false: it cannot).
func (v *Solver) holdsGang(L topology.Level, i int32) bool {
	if L == v.hl {
		return v.hostHoldsGang(topology.HostID(i))
	}
	return v.domHoldsGang(topology.DomainID(i))
}

// domHoldsGang: a domain holds the gang only if its free GPUs hold the
// sets' whole GPUs, and the milli of the rest and of its partly used GPUs
// its fractions. Its aggregates count every model and no nominated GPU: an
// upper bound unless nominated GPUs or jobs gone are in play (then it
// refuses nothing).
func (v *Solver) domHoldsGang(d topology.DomainID) bool {
	if !v.extra.Empty() || len(v.rel) != 0 {
		return true
	}
	g := &v.gang
	free, shared := v.domFree(d), v.s.SharedMilli(d)
	if v.rx != nil {
		shared -= v.rx.dshare[d]
	}
	return g.whole <= free && g.milli <= (free-g.whole)*topology.FullGPU+shared
}

// hostHoldsGang reports whether host h may hold every pod set of the
// request together (false: it cannot).
func (v *Solver) hostHoldsGang(h topology.HostID) bool {
	var mask uint64
	var cpu, mem int32
	var ms gpuMilli
	o := v.ovAt(h)
	if o >= 0 {
		mask, cpu, mem = v.ov[o].mask, v.ov[o].cpu, v.ov[o].mem
	} else {
		mask, cpu, mem = v.baseMask(h), v.s.HostCPU(h), v.s.HostMemory(h)
	}
	g := &v.gang
	if g.whole > int64(bits.OnesCount64(mask)) || g.cpu > int64(cpu) || g.mem > int64(mem) {
		return false
	}
	if g.fracs == 0 {
		return true
	}
	if o >= 0 {
		ms = v.ovMilli[o]
	} else {
		v.baseMilli(h, mask, &ms)
	}
	var buf [topology.MaxHostGPUs]uint16
	return fracBound(hostBins(&ms, mask, v.t.HostGPUCount(h), g.whole, &buf), v.r.Sets)
}

// hostBins is the free milli of a host's n GPUs that fractions may use once
// the gang's whole GPUs are taken, sorted ascending: the whole pods take
// free GPUs (of mask), here the ones of least milli, which leaves the
// fractions as much as any layout does.
func hostBins(ms *gpuMilli, mask uint64, n int, whole int64, buf *[topology.MaxHostGPUs]uint16) []uint16 {
	type gpu struct {
		milli uint16
		free  bool
	}
	var all [topology.MaxHostGPUs]gpu
	for i := range n {
		all[i] = gpu{ms[i], mask&(1<<uint(i)) != 0}
	}
	slices.SortFunc(all[:n], func(a, b gpu) int { return int(a.milli) - int(b.milli) })
	bins := buf[:0]
	for _, g := range all[:n] {
		if g.free && whole > 0 {
			whole--
			continue
		}
		if g.milli > 0 {
			bins = append(bins, g.milli)
		}
	}
	return bins
}

// fracBound reports whether the fractional pods of sets may pack into GPUs
// of the given free milli (sorted ascending), by two conditions every
// packing meets (false: none does):
//
//   - Pods of more than half a GPU never share one: for every such size, the
//     pods at least that large are no more than the GPUs with that much
//     free (Hall's condition, exact for these pods alone).
//   - For k = 0 and every pod size k ≤ half a GPU (Martello and Toth's bound
//     L2, for GPUs of unequal free milli): a pod larger than FullGPU − k
//     leaves less than k on its GPU, so the pods of k…half a GPU fit only
//     in the milli of GPUs with at least k free, less the GPUs the larger
//     pods take (at least the smallest that hold them) and less the pods of
//     more than half a GPU that share a GPU with them.
func fracBound(bins []uint16, sets []PodSet) bool {
	const half = topology.FullGPU / 2
	for i := range sets {
		m := sets[i].Milli
		if m <= half {
			continue
		}
		var pods int64
		for j := range sets {
			if sets[j].Milli >= m {
				pods += int64(sets[j].Pods)
			}
		}
		if pods > int64(len(bins)-gpusBelow(bins, m)) {
			return false
		}
	}
	if !fracShare(bins, sets, 0) {
		return false
	}
	for i := range sets {
		if m := sets[i].Milli; m > 0 && m <= half && !fracShare(bins, sets, m) {
			return false
		}
	}
	return true
}

// fracShare is fracBound's second condition for one k.
func fracShare(bins []uint16, sets []PodSet, k int32) bool {
	const half = topology.FullGPU / 2
	var large, minLarge, mid, small int64 // pods > FullGPU−k, the least of them; milli of pods in (half, FullGPU−k] and [k, half]
	minLarge = topology.FullGPU
	for i := range sets {
		m, n := sets[i].Milli, int64(sets[i].Pods)
		switch {
		case m == 0:
		case m > topology.FullGPU-k:
			large += n
			minLarge = min(minLarge, int64(m))
		case m > half:
			mid += n * int64(m)
		case m >= k:
			small += n * int64(m)
		}
	}
	if small == 0 {
		return true
	}
	have := -mid
	for _, b := range bins[gpusBelow(bins, k):] {
		have += int64(b)
	}
	for _, b := range bins[gpusBelow(bins, int32(minLarge)):] {
		if large == 0 {
			break
		}
		have -= int64(b)
		large--
	}
	return large == 0 && small <= have
}

// gpusBelow counts the bins (sorted ascending) of less than m milli.
func gpusBelow(bins []uint16, m int32) int {
	i, _ := slices.BinarySearchFunc(bins, m, func(b uint16, m int32) int { return int(b) - int(m) })
	return i
}

// gangWholeFree is, for solve's candidates of a gang of several pod sets
// required on one host, the fewest wholly free GPUs a host needs (its
// whole GPUs, and as many more as its fractions need when every other GPU
// of the largest host has 999 milli free: hosts with fewer GPUs need at
// least as many), so that domains and hosts are refused from their free
// counts before anything else is read. 0 (no such refusal) when nominated
// GPUs or jobs gone could make more GPUs free for the gang than the
// State's counts say, or the job holds pods (it may hold a host
// exclusively, whose free count is then 0).
func (v *Solver) gangWholeFree() int {
	if !v.extra.Empty() || len(v.rel) != 0 || v.s.HasJob(v.r.Job) {
		return 0
	}
	whole := v.gang.whole
	var buf [topology.MaxHostGPUs]uint16
	for k := int(whole); k <= v.maxGPUs; k++ {
		if fracBound(freeBins(&buf, v.maxGPUs-k, k-int(whole)), v.r.Sets) {
			return k
		}
	}
	return v.maxGPUs + 1
}

// domHasFree reports whether domain d has a host of an acceptable model
// with at least k free GPUs (its histograms).
func (v *Solver) domHasFree(d topology.DomainID, k int) bool {
	hist, nm, nb := v.s.HistogramData()
	base := int(d) * nm * nb
	for m := range nm {
		if v.modelOK[m] {
			for _, c := range hist[base+m*nb+min(k, nb) : base+m*nb+nb] {
				if c > 0 {
					return true
				}
			}
		}
	}
	return false
}

// gangFirst: among the hosts solve admits for a gang required on one host,
// none later in index order that holds the gang comes before host (c pods
// of the primary set, free GPUs) — FirstFit takes the first; BestFit orders
// hosts by free GPUs, then capacity, and every host that holds the gang has
// gangFree free GPUs or more and room for gangCap pods or more. The host may
// still not hold the gang (the bounds are not exact): solve then scans them
// all.
func (v *Solver) gangFirst(c, free int64) bool {
	switch v.r.Policy {
	case FirstFit:
		return true
	case BestFit: // in a pass of gangByFree, every host has as many free GPUs
		return c == v.gangCap && (free <= int64(v.gangFree) || v.gangPass > 0)
	}
	return false
}

// byFree reports whether solve places the gang by gangByFree: several pod
// sets required on one host under BestFit, the gang bounds on, and every
// host's free GPUs and partly used GPUs as the State's summaries count them
// (no nominated GPUs admitted, no jobs gone, and the job holds no pods: a
// host it holds exclusively is left out of the summaries).
func (v *Solver) byFree() bool {
	return len(v.r.Sets) > 1 && !v.noGang && v.r.Required == v.hl && v.r.Policy == BestFit &&
		v.extra.Empty() && len(v.rel) == 0 && !v.s.HasJob(v.r.Job)
}

// gangByFree places a gang of several pod sets required on one host under
// BestFit as the scan of every host would (the first host, in BestFit's
// order, that holds it), without reading every host: BestFit orders hosts
// by free GPUs first, so it scans in passes, the hosts of k free GPUs for
// k = gangFree, gangFree+1, … (passBounds skips a k, domPassOK a domain,
// where no host could hold the gang). A pass first stops at a host of
// gangCap pods, which no later host of the pass that holds the gang comes
// before, and tries the best host so far; if that does not hold the gang,
// the pass is scanned whole and its hosts tried in BestFit's order. false:
// no host holds the gang. A gang of fractions that fits a few hosts of the
// cluster no longer reads every host.
func (v *Solver) gangByFree(sl topology.Level, need int64) (topology.DomainID, bool) {
	v.gang = v.totals()
	v.gangFree, v.gangCap = v.gangWholeFree(), v.gangCapFloor()
	defer v.endPasses()
	for k := v.gangFree; k <= v.mostFree(); k++ {
		if !v.passBounds(k) {
			continue
		}
		for _, stop := range [2]bool{true, false} {
			cs := v.pass(sl, need, k, stop)
			if len(cs) == 0 {
				break
			}
			if d, ok, _ := v.tryRequired(cs); ok {
				return d, true
			}
			if !v.gangStopped { // every host of the pass tried
				break
			}
		}
	}
	return 0, false
}

// pass lists the candidates of gangByFree's pass over the hosts of k free
// GPUs: stopping at a host of gangCap pods (then only the best so far), or
// all of them.
func (v *Solver) pass(sl topology.Level, need int64, k int, stop bool) []cand {
	v.reset()
	v.setCurrent(v.primary())
	v.gangAll, v.gangPass, v.gangStop = true, k+1, stop
	v.seen, v.seenBelow, v.stop, v.gangStopped = 0, 0, false, false
	cs := v.candidates(sl, int32(v.scope), v.r.Required, need, v.reqCands[:0])
	v.reqCands = cs
	if v.gangStopped && len(cs) > 1 { // the best so far alone: hosts after the stop are not read
		best := 0
		for i := range cs {
			if v.better(&cs[i], &cs[best]) {
				best = i
			}
		}
		cs[0] = cs[best]
		cs = cs[:1]
	}
	return cs
}

// endPasses clears gangByFree's scan state.
func (v *Solver) endPasses() {
	v.gangAll, v.gangPass, v.gangStop, v.gangStopped = false, 0, false, false
	v.gangFree, v.gangCap, v.passPart, v.passMilli, v.passBig = 0, 0, 0, 0, 0
}

// passBounds prepares gangByFree's pass over the hosts of k free GPUs:
// false if none of them can hold the gang. Its whole-GPU pods take k of
// the free GPUs, and its fractions what is left of them, then partly used
// GPUs: a host needs passMilli free milli on partly used GPUs, and, when no
// free GPU is left for fractions, one with its largest fraction free
// (passBig). And it needs room for gangCap pods of the primary set: for
// whole GPUs, in its free GPUs alone; for a fraction, the free GPUs take
// ⌊1000/milli⌋ pods each and a partly used GPU ⌊999/milli⌋ at most, so
// passPart partly used GPUs with that milli free or more.
func (v *Solver) passBounds(k int) bool {
	p, g := &v.r.Sets[v.primary()], &v.gang // v.set is the last tried's
	v.passPart, v.passMilli, v.passBig = 0, 0, 0
	if int64(k) < g.whole {
		return false
	}
	v.passMilli = max(0, g.milli-(int64(k)-g.whole)*topology.FullGPU)
	if int64(k) == g.whole && g.fracs > 0 {
		v.passBig = v.largestFraction()
	}
	if p.Milli == 0 { // whole GPUs (or none): the free ones alone
		return p.GPUs == 0 || int64(k/int(p.GPUs)) >= v.gangCap
	}
	m := int64(p.Milli)
	rest := v.gangCap - int64(k)*(topology.FullGPU/m)
	if rest <= 0 {
		return true
	}
	per := (topology.FullGPU - 1) / m
	v.passPart, v.passMilli = int32((rest+per-1)/per), max(v.passMilli, rest*m)
	return int(v.passPart) <= v.maxGPUs-k
}

// largestFraction is the largest milli a fractional pod of the request asks.
func (v *Solver) largestFraction() int32 {
	big := int32(0)
	for i := range v.r.Sets {
		big = max(big, v.r.Sets[i].Milli)
	}
	return big
}

// domPassOK reports whether domain d may have a host for gangByFree's pass
// (v.gangPass-1 free GPUs): one in its histograms, and partly used GPUs
// enough (those whose bucket reaches the primary set's milli) with free
// milli enough.
func (v *Solver) domPassOK(d topology.DomainID) bool {
	k := v.gangPass - 1
	hist, nm, nb := v.s.HistogramData()
	base, any := int(d)*nm*nb+k, false
	for m := range nm {
		any = any || v.modelOK[m] && hist[base+m*nb] > 0
	}
	if !any || v.passMilli == 0 && v.passBig == 0 {
		return any
	}
	if v.s.SharedMilli(d) < v.passMilli {
		return false
	}
	part := v.s.PartialGPUs(d)
	return partFrom(&part, v.set.Milli) >= v.passPart && (v.passBig == 0 || partFrom(&part, v.passBig) > 0) // v.set: the primary (pass)
}

// partFrom counts the partly used GPUs of buckets that may have milli free.
func partFrom(part *[topology.PartialBuckets]int32, milli int32) int32 {
	n := int32(0)
	for b := int(milli) / topology.PartialBucketMilli; b < topology.PartialBuckets; b++ {
		n += part[b]
	}
	return n
}

// gangCapFloor is the fewest pods of the primary set (the current one) a
// host that holds the whole gang has room for. Its pods and every pod of at
// least its milli could be swapped, each for one of its pods on the same
// GPU (a whole-GPU pod for one on each of its GPUs), and the GPUs would
// still hold them; a whole-GPU primary counts only the whole-GPU pods' GPUs
// (fractions may sit on partly used GPUs); and the host's CPU and memory
// hold every pod's. Never below the primary set's pods; in whole slices
// where a host's capacity counts them (capOf).
func (v *Solver) gangCapFloor() int64 {
	p := v.set
	c := int64(inf) // CPU-only primary: its GPUs bound nothing
	whole, frac := int64(0), int64(0)
	for i := range v.r.Sets {
		s := &v.r.Sets[i]
		switch {
		case s.Milli == 0:
			whole += int64(s.Pods) * int64(s.GPUs)
		case s.Milli >= p.Milli:
			frac += int64(s.Pods)
		}
	}
	switch {
	case p.Milli > 0:
		c = whole + frac
	case p.GPUs > 0:
		c = whole / int64(p.GPUs)
	}
	if p.CPUMilli > 0 {
		c = min(c, v.gang.cpu/int64(p.CPUMilli))
	}
	if p.MemoryMiB > 0 {
		c = min(c, v.gang.mem/int64(p.MemoryMiB))
	}
	c = max(c, int64(p.Pods))
	if v.sliceS > 1 && v.hl <= v.sliceL { // a host's capacity counts whole slices (capOf): so does the floor
		c -= c % v.sliceS
	}
	return c
}

// mostFree is the most free GPUs a host of an acceptable model has (the
// root's histograms).
func (v *Solver) mostFree() int {
	hist, nm, nb := v.s.HistogramData()
	most := 0
	for m := range nm {
		if v.modelOK[m] {
			for k := nb - 1; k > most; k-- {
				if hist[m*nb+k] > 0 {
					most = k
					break
				}
			}
		}
	}
	return most
}

// gangHostGPUs is, for a gang of several pod sets required on one host,
// the fewest GPUs a host needs to hold it when all of them are free, as
// far as the bounds tell (its whole GPUs, then fracBound on free GPUs). A
// gang needing more than the largest acceptable host never fits, however
// the cluster frees up.
func (v *Solver) gangHostGPUs() int64 {
	if v.noGang {
		return 0
	}
	g := v.totals()
	var buf [topology.MaxHostGPUs]uint16
	n := min(g.fracs, topology.MaxHostGPUs+1) // a GPU per fraction always packs
	for k := range min(n, topology.MaxHostGPUs+1) {
		if fracBound(freeBins(&buf, 0, int(k)), v.r.Sets) {
			return g.whole + k
		}
	}
	return g.whole + n
}

// freeBins is the free milli of partly used GPUs with 999 milli free, then
// of full ones free, sorted ascending (partly+full ≤ MaxHostGPUs).
func freeBins(buf *[topology.MaxHostGPUs]uint16, partly, full int) []uint16 {
	b := buf[:partly+full]
	for i := range b {
		b[i] = topology.FullGPU - 1
		if i >= partly {
			b[i] = topology.FullGPU
		}
	}
	return b
}
