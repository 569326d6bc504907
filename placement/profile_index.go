package placement

import (
	"math/bits"

	"github.com/blinksched/blink/topology"
)

// profIndex caches, per host, what the profile's rule needs of it — its
// view in brief (free CPU, memory, unused GPUs, largest free fraction), its
// value Σ W·cap before any placement, its tie-break key and a key of its
// state — and brings them up to date from the State's host generations, so
// only hosts that changed since the last call are read again (one per pod
// under the FGD protocol).
//
// A host's loss for a pod depends only on its state (model, free CPU,
// memory, whole GPUs and multiset of free milli per GPU) and the pod's shape,
// so losses are memoised by (state, shape) in a fixed-size table: a state
// that persists is scored once per shape, and hosts of equal state share the
// score. The table forgets entries when two collide (the older goes, in a
// two-way bucket), which changes only the work, never the answer. States of
// hosts with more than 12 GPUs are not memoised.
type profIndex struct {
	s        *topology.State
	seq      uint64 // the State's TouchSeq at the last sync
	p        *profile
	stamp    []uint32 // per host: generation + 1 when cached; 0: not cached
	cpu, mem []int32
	unused   []uint8
	top      []uint16 // largest free milli on a GPU a fraction may use
	before   []int64  // Σ W·cap
	gc       []int32  // hosts × groups: pods of each GPU group the GPUs hold
	tie      []int64
	key      [][4]uint64          // state; key[1] = 0: not shared
	mask     []uint64             // whole GPUs a pod may take
	milli    []uint16             // per GPU of the tree: free milli a fraction may use
	clean    []bool               // healthy and held by no job: hostOK needs only model and eligibility
	bucket   []uint8              // topBucket(top)
	byTop    [topBuckets][]uint64 // host bitsets by bucket of top
	cand     []uint64             // scratch: hosts a pod's GPUs may fit

	table []profEntry // the memo; key[1] = 0: empty
	shape [2]uint64   // the current pod's shape, for the memo
}

type profEntry struct {
	key   [4]uint64
	shape [2]uint64
	loss  int64
}

// sync refreshes the hosts of [lo, hi) whose generation changed, and all of
// them for a new State, tree or profile, or a State overwritten by a snapshot
// (whose hosts may be back at generations they had with other content).
func (ix *profIndex) sync(v *Solver, lo, hi int32) {
	H := v.t.NumHosts()
	G := len(v.prof.groups)
	if v.s.TouchesLost(ix.seq) || ix.s != v.s || ix.p != v.prof || len(ix.stamp) != H || len(ix.gc) != H*G {
		if ix.p != v.prof {
			clear(ix.table) // the losses of another profile
		}
		ix.s, ix.p = v.s, v.prof
		if len(ix.stamp) != H || len(ix.gc) != H*G {
			*ix = profIndex{s: v.s, p: v.prof, stamp: make([]uint32, H), cpu: make([]int32, H),
				mem: make([]int32, H), unused: make([]uint8, H), top: make([]uint16, H),
				before: make([]int64, H), tie: make([]int64, H), key: make([][4]uint64, H),
				gc: make([]int32, H*len(v.prof.groups)), mask: make([]uint64, H),
				milli: make([]uint16, v.t.NumGPUs()), clean: make([]bool, H),
				bucket: make([]uint8, H), cand: make([]uint64, (H+63)/64),
				table: make([]profEntry, tableSize(H))}
			for b := range ix.byTop {
				ix.byTop[b] = make([]uint64, (H+63)/64)
			}
		}
		clear(ix.stamp)
	}
	ix.seq = v.s.TouchSeq()
	for h := lo; h < hi; h++ {
		if g := v.s.HostGeneration(topology.HostID(h)) + 1; ix.stamp[h] != g {
			ix.refresh(v, h)
			ix.stamp[h] = g
		}
	}
}

// Hosts are kept in bitsets by the largest free milli on one of their GPUs
// (top), in buckets of 100 milli, so a pod visits only hosts whose GPUs may
// hold it: full hosts cost nothing.
const topBuckets = topology.FullGPU/100 + 1

func topBucket(top uint16) uint8 { return uint8(top / 100) }

// candidates fills ix.cand with the hosts whose bucket may hold the current
// set's GPUs (all hosts for a CPU-only pod), and returns it.
func (ix *profIndex) candidates(set *PodSet) []uint64 {
	b := 0
	switch {
	case set.Milli > 0:
		b = int(topBucket(uint16(set.Milli)))
	case set.GPUs > 0:
		b = topBuckets - 1
	}
	copy(ix.cand, ix.byTop[b])
	for b++; b < topBuckets; b++ {
		for w, x := range ix.byTop[b] {
			ix.cand[w] |= x
		}
	}
	return ix.cand
}

// tableSize is the memo's size: 16 entries per host, at least 1,024 and at
// most 65,536 (3.5 MiB).
func tableSize(hosts int) int {
	n := 1024
	for n < 16*hosts && n < 1<<16 {
		n *= 2
	}
	return n
}

// refresh reads host h from the State.
func (ix *profIndex) refresh(v *Solver, h int32) {
	hv := &v.phv
	v.viewHost(topology.HostID(h), hv)
	p, sc := v.prof, &v.psc
	sc.size(p)
	p.groupCaps(hv, sc.gc)
	G := len(p.groups)
	for g, c := range sc.gc {
		ix.gc[int(h)*G+g] = int32(c)
	}
	ix.before[h] = p.value(sc.gc, hv.model, hv.cpu, hv.mem)
	ix.tie[h] = hv.tieKey()
	ix.cpu[h], ix.mem[h] = int32(hv.cpu), int32(hv.mem)
	u := bits.OnesCount64(hv.mask)
	ix.unused[h] = uint8(u)
	top := uint16(0)
	for _, m := range hv.milli[:hv.n] {
		top = max(top, m)
	}
	ix.top[h] = top
	w, bit := h>>6, uint64(1)<<(uint(h)&63)
	ix.byTop[ix.bucket[h]][w] &^= bit
	ix.bucket[h] = topBucket(top)
	ix.byTop[ix.bucket[h]][w] |= bit
	_, held := v.s.HostExclusive(topology.HostID(h))
	ix.clean[h] = v.s.HostHealth(topology.HostID(h)) == topology.Healthy && !held
	ix.key[h] = stateKey(hv, u)
	ix.mask[h] = hv.mask
	lo, _ := v.t.HostGPUs(topology.HostID(h))
	copy(ix.milli[lo:], hv.milli[:hv.n])
}

// view fills hv with host h's cached view.
func (ix *profIndex) view(v *Solver, h int32, hv *hostView) {
	id := topology.HostID(h)
	hv.model, hv.n = v.t.HostModel(id), v.t.HostGPUCount(id)
	hv.mask, hv.cpu, hv.mem = ix.mask[h], int64(ix.cpu[h]), int64(ix.mem[h])
	lo, _ := v.t.HostGPUs(id)
	copy(hv.milli[:hv.n], ix.milli[lo:])
}

// stateKey packs a host's state; [1] = 0 when it is not shared (more than
// 12 GPUs).
func stateKey(hv *hostView, u int) [4]uint64 {
	var k [4]uint64
	if hv.n > 12 {
		return k
	}
	var ms [12]uint16
	copy(ms[:], hv.milli[:hv.n])
	for i := 1; i < hv.n; i++ { // insertion sort: the multiset, not the order
		for j := i; j > 0 && ms[j] < ms[j-1]; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
	k[0] = uint64(uint32(hv.cpu))<<32 | uint64(uint32(hv.mem))
	k[1] = 1<<63 | uint64(hv.model)<<16 | uint64(hv.n)<<8 | uint64(u)
	for i := range hv.n {
		k[2+i/6] |= uint64(ms[i]) << (10 * uint(i%6))
	}
	return k
}

// fits: the current one-pod set fits host h's cached view (GPUs, CPU,
// memory, model); hostOK decides the rest.
func (ix *profIndex) fits(v *Solver, h int32) bool {
	set := v.set
	if ix.cpu[h] < set.CPUMilli || ix.mem[h] < set.MemoryMiB ||
		!v.anyModel && !v.modelOK[v.t.HostModel(topology.HostID(h))] {
		return false
	}
	switch {
	case set.Milli > 0:
		return ix.top[h] >= uint16(set.Milli)
	case set.GPUs > 0:
		return int32(ix.unused[h]) >= set.GPUs
	}
	return true
}

// lossOf is the current set's loss on host h, from the memo if it holds
// the host's state and the pod's shape.
func (ix *profIndex) lossOf(v *Solver, h int32) int64 {
	k := ix.key[h]
	if k[1] == 0 {
		return ix.eval(v, h)
	}
	i := int(mixKey(k, ix.shape)) & (len(ix.table) - 1)
	for _, j := range [2]int{i, i ^ 1} {
		if e := &ix.table[j]; e.key == k && e.shape == ix.shape {
			return e.loss
		}
	}
	l := ix.eval(v, h)
	ix.table[i^1] = ix.table[i] // the older entry of the bucket goes
	ix.table[i] = profEntry{key: k, shape: ix.shape, loss: l}
	return l
}

// setShape records the current set's shape for the memo.
func (ix *profIndex) setShape(set *PodSet) {
	ix.shape = [2]uint64{uint64(uint32(set.GPUs))<<32 | uint64(uint32(set.Milli)),
		uint64(uint32(set.CPUMilli))<<32 | uint64(uint32(set.MemoryMiB))}
}

func (ix *profIndex) eval(v *Solver, h int32) int64 {
	hv := &v.phv
	ix.view(v, h, hv)
	G := len(v.prof.groups)
	l, _, _ := v.lossWith(hv, ix.before[h], ix.gc[int(h)*G:int(h+1)*G])
	return l
}

func mixKey(k [4]uint64, shape [2]uint64) uint64 {
	x := k[0]*0x9e3779b97f4a7c15 ^ k[1]
	x = (x^k[2])*0xbf58476d1ce4e5b9 ^ k[3]
	x = (x^shape[0])*0x94d049bb133111eb ^ shape[1]
	x *= 0x9e3779b97f4a7c15
	return x ^ x>>29
}
