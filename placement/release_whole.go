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
// back in relAcc, its GPUs, and relRes, its CPU and memory, only for a
// request that asks for either (a host's first pod overwrites its slots, so
// they are never cleared); the pass over the bitmap writes each entry whole —
// created, given back its pods and finished at once — with the per-word
// counts and the prefix sums of the gains. The entries are those
// relHostsDense, addRel and finishWhole make (its rule is repeated inline).
//
// release runs the pass over the pods as it gathers them (gatherWhole): a
// few jobs' pods at a time, each batch summed while it is in the cache and
// then dropped, so the pods are neither written out whole nor read back. On
// trees of uniform hosts, a pod of all its host's GPUs marks the host in a
// bitmap of hosts given back whole (relFull) instead of summing into
// relAcc, and a gone job of one such pod is released from the job view
// (State.JobFirstHosts), its pod not read at all.

// wholeBatch is how many jobs' pods gatherWhole gathers at a time: few
// enough that a batch of a few pods each stays in the cache.
const wholeBatch = 16

// wholeApplies reports whether buildWhole may build the entries, the pods
// aside (many of them, none of a fraction); v.fracs is set.
func (v *Solver) wholeApplies() bool {
	return v.relAll && !v.fracs && !v.r.Exclusive && !v.legacy
}

// buildWhole builds the entries from relPods as above and reports true, or
// reports false when it does not apply (a pod returns a fraction: nothing
// built; the bitmap, relAcc and relRes it wrote are rewritten by the next
// build anyway).
func (v *Solver) buildWhole() bool {
	if !v.wholeApplies() {
		return false
	}
	v.wholeBegin()
	count, ok := v.wholeAdd(v.relPods, 0, false)
	if ok {
		v.wholeEnd(count)
	}
	return ok
}

// gatherWhole gathers the gone jobs' pods wholeBatch jobs at a time. When
// they are many (denseRel, counted from the job view) and while buildWhole
// applies, it passes each batch over at once (wholeAdd) and drops it; a job
// of one pod that takes all its host's GPUs (wholeSingles) is read off the
// job view instead. It reports true when it built the entries; false
// leaves every pod in relPods for buildRel.
func (v *Solver) gatherWhole() bool {
	if !v.wholeApplies() {
		v.gatherRel()
		return false
	}
	gone, counts, total := v.gone, v.s.JobPodCounts(), 0
	for _, j := range gone {
		if j >= 0 && int(j) < len(counts) {
			total += int(counts[j])
		}
	}
	if total*8 < relWords(v.t) { // not dense: buildRel lists the hosts
		v.gatherRel()
		return false
	}
	if cap(v.relStarts) < wholeBatch {
		v.relStarts = make([]int32, wholeBatch)
	}
	v.wholeBegin()
	pods, starts, count := v.relPods[:0], v.relStarts[:wholeBatch], 0
	for i := 0; i < len(gone); i += wholeBatch {
		batch := v.wholeSingles(gone[i:min(i+wholeBatch, len(gone))], &count)
		pods = v.s.AppendJobsPods(pods[:0], batch, starts)
		var ok bool
		if count, ok = v.wholeAdd(pods, count, false); !ok { // a fraction: gather them all for buildRel
			v.gatherRel()
			return false
		}
	}
	v.relPods = pods[:0]
	v.wholeEnd(count)
	return true
}

// wholeSingles marks, as wholeAdd would (count: hosts marked), the hosts of
// the jobs of batch that have one pod taking all its host's GPUs — of whole
// GPUs (milli = size·1000) and size the uniform host's — from the job view,
// on trees of uniform hosts for requests that ask no CPU or memory; it
// returns the other jobs (v.relRest), whose pods the caller reads.
func (v *Solver) wholeSingles(batch []topology.JobID, count *int) []topology.JobID {
	k := v.uniGPUs
	if k <= 0 || k >= 64 || v.relUseRes {
		return batch
	}
	s := v.s
	counts, sizes, millis, hosts := s.JobPodCounts(), s.JobSizes(), s.JobMilliGPUs(), s.JobFirstHosts()
	b, full, rest := v.relOrder, v.relFull, v.relRest[:0]
	for _, j := range batch {
		if j < 0 || int(j) >= len(counts) || counts[j] != 1 || int(sizes[j]) != k || millis[j] != uint64(k)*topology.FullGPU {
			rest = append(rest, j)
			continue
		}
		h := hosts[j]
		w, bit := 2*int(h>>6), int64(1)<<(uint(h)&63)
		full[w>>1] |= uint64(bit)
		if b[w]&bit == 0 {
			b[w] |= bit
			*count++
		}
	}
	v.relRest = rest
	return rest
}

// wholeBegin clears the bitmaps of released hosts for wholeAdd and decides
// whether it sums CPU and memory (v.relUseRes: a pod set asks for them).
func (v *Solver) wholeBegin() {
	words := relWords(v.t)
	b := slices.Grow(v.relOrder[:0], 2*words)[:2*words]
	clear(b)
	v.relOrder = b
	v.relFull = slices.Grow(v.relFull[:0], words)[:words]
	clear(v.relFull)
	n := v.t.NumHosts()
	if len(v.relAcc) != n {
		v.relAcc = make([]uint64, n) // once per tree
	}
	if v.relUseRes = v.resSets(); v.relUseRes && len(v.relRes) != n {
		v.relRes = make([][2]int32, n) // once per tree
	}
}

// wholeAdd is the pass over pods: it marks their hosts in the bitmap and
// sums what they give back in relAcc (and relRes). count is the number of
// hosts marked so far; it returns the new count, or false on a pod of a
// fraction, or (check: pods from a caller) on a pod not podOK, whose index
// it leaves in relBad. On a tree of uniform hosts a pod of all its host's
// GPUs is marked in relFull instead of summed (no other pod takes a GPU
// there), which keeps the pass and wholeEntries off relAcc, a word per host
// of the tree.
func (v *Solver) wholeAdd(pods []topology.Pod, count int, check bool) (int, bool) {
	b, acc, res, full := v.relOrder, v.relAcc, v.relUseRes, v.relFull
	all, fast := uint64(0), false // fast: pods of all their host's GPUs go to relFull
	if k := v.uniGPUs; k > 0 && k < 64 && !res {
		all, fast = 1<<uint(k)-1, true
	}
	nh := uint(v.t.NumHosts())
	for i := range pods {
		p := &pods[i]
		plain := fast && uint(p.Host) < nh && p.Milli == 0 && p.GPUs&^all == 0 // podOK, read off
		if check && !plain && !v.podOK(p) {
			v.relBad = i
			return count, false
		}
		if p.Milli != 0 {
			return count, false
		}
		w, bit := 2*int(p.Host>>6), int64(1)<<(uint(p.Host)&63)
		if p.GPUs == all && fast {
			full[w>>1] |= uint64(bit)
			if b[w]&bit == 0 {
				b[w] |= bit
				count++
			}
			continue
		}
		first := b[w]&bit == 0
		if first {
			b[w] |= bit
			acc[p.Host] = p.GPUs
			count++
		} else {
			acc[p.Host] |= p.GPUs
		}
		if res {
			v.addRes(*p, first)
		}
	}
	return count, true
}

// addRes sums pod p's CPU and memory into its host's relRes (first: the
// host's first pod, which overwrites the slot).
func (v *Solver) addRes(p topology.Pod, first bool) {
	r := &v.relRes[p.Host]
	if first {
		*r = [2]int32{}
	}
	r[0] += p.CPUMilli
	r[1] += p.MemoryMiB
}

// wholeEnd writes the count entries of the hosts wholeAdd marked.
func (v *Solver) wholeEnd(count int) {
	v.rel = slices.Grow(v.rel[:0], count)[:count]
	v.relSum = slices.Grow(v.relSum[:0], count+1)[:count+1]
	v.relKeys = slices.Grow(v.relKeys[:0], count)[:count]
	v.wholeEntries(v.relOrder, v.relAcc)
}

// wholeEntries writes an entry per host of bitmap b (interleaved with its
// per-word counts, written here), from relAcc and relRes, and the prefix
// sums of the gains (whole GPUs only: relSumM stays empty); finishWhole's
// work is done inline. It also writes each entry's
// relKeys, what relCapsQuick needs of it in two bytes: its whole-free
// count, 0 when a job that stays holds the host exclusively (hostOK's one
// question then), and its free count. When v.ov's backing array holds them,
// the entries are written there too, where the first install puts them
// (relPlaced: it then writes only their indexes, not reading rel again).
// On trees whose hosts all have uniGPUs GPUs no host's count is read, and
// for requests that ask for neither CPU nor memory no host's free CPU and
// memory (the overlays' are left 0: nothing reads them).
func (v *Solver) wholeEntries(b []int64, acc []uint64) {
	s, t, free, sum, keys := v.s, v.t, v.s.HostFreeCounts(), v.relSum, v.relKeys
	res := v.relUseRes
	placed := cap(v.ov) >= len(v.rel)
	ovs := v.ov[:0]
	if placed {
		ovs = v.ov[:len(v.rel)]
	}
	sum[0] = 0
	n, gpus := 0, int64(0)
	full, allFull := v.relFull, uint64(1)<<uint(v.uniGPUs)-1 // below 64 where relFull is used (wholeAdd)
	for w := 0; w < len(b); w += 2 {
		b[w+1] = int64(n)
		fw := full[w>>1]
		for x := uint64(b[w]); x != 0; x &= x - 1 {
			h := topology.HostID(w<<5 | bits.TrailingZeros64(x))
			mask := allFull // given back whole by one pod
			if fw&(1<<(uint(h)&63)) == 0 {
				whole := acc[h]
				mask = whole
				k := v.uniGPUs
				if k == 0 {
					k = t.HostGPUCount(h)
				}
				if k >= 64 || whole != 1<<uint(k)-1 { // not every GPU back
					mask |= s.HostUnusedMask(h)
				}
			}
			e := hostOv{mask: mask, h: h}
			if res {
				r := &v.relRes[h]
				e.cpu, e.mem = s.HostCPU(h)+r[0], s.HostMemory(h)+r[1]
			}
			if v.rel[n] = e; placed {
				ovs[n] = e
			}
			k := popcount(mask)
			gpus += int64(k - int(free[h]))
			if j, held := s.HostExclusive(h); held && j != v.r.Job && !v.isGone(j) {
				k = 0
			}
			keys[n] = [2]uint8{uint8(k), free[h]}
			n++
			sum[n] = gpus
		}
	}
	v.relPlaced = placed
}
