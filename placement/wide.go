package placement

import "github.com/blinksched/blink/topology"

// wideMin answers "the root's best child for need pods of g whole GPUs
// (need up to wideNeedMax), or for one pod of milli of one GPU" (the
// BestFit key: smallest capacity ≥ need, then fewest free GPUs, then lowest
// index; capacities are those bestChild's scan uses, from the aggregates
// alone) in O(1) when the root has many children, so that a small job's
// decision does not grow with the number of blocks. It is a tournament tree
// over the level-1 domains, kept per GPU count and count of pods (per milli
// for fractions) and brought up to date from the State's touch log:
// O(log children) per level-1 domain changed since the last call. Used only
// when no nominated or released GPUs are in play and every model is
// acceptable.
type wideMin struct {
	s     *topology.State
	gen   uint64 // the Solver's wideLog generation and entry count when last synced
	pos   uint64
	g     int32
	milli int32 // > 0: pods of milli of one GPU; capacities are upper's
	need  int64 // the pods a child must hold (1, or up to wideNeedMax for whole GPUs)
	lo    topology.DomainID
	n     int
	size  int
	node  []wideKey
	rx    *Restriction // the closed set the capacities leave out (nil: none)
	rxGen uint64       // its gen when last synced
}

type wideKey struct {
	key uint64 // capacity << 32 | free GPUs (pathKey's packing); noWide: no child with capacity
	idx int32  // -1: no child with capacity
}

// noWide is the key of a leaf with no child of capacity: after every other.
const noWide = ^uint64(0)

// wideFanout is the fan-out above which the root's children are indexed.
const wideFanout = 64

// wideNeedMax is the most pods of whole GPUs a root index is kept for: an
// index answers for one count of pods, and small jobs of several pods are
// common (an 8-GPU job as two 4-GPU pods on NVL72 hosts: a scan of the 109
// blocks of 1M GPUs cost each such job ~3,300 instructions).
const wideNeedMax = 4

func (a wideKey) less(b wideKey) bool {
	return a.key < b.key || a.key == b.key && a.idx < b.idx
}

// wideBest returns the root's best child for need pods of the current set
// (need 1, or up to wideNeedMax of whole GPUs).
func (v *Solver) wideBest(need int64) (int32, bool) {
	all := &v.wide
	if v.rx != nil {
		all = &v.wideRx
	}
	w := shapeSlot(all, v.wideSlot(need))
	w.g, w.milli, w.need = v.set.GPUs, v.set.Milli, need // the same for every set of this slot
	w.sync(v)
	k := w.node[1]
	if k.idx >= 0 {
		v.keyOf(k.key)
	}
	return v.chose(k.idx, int64(k.key>>32))
}

func (w *wideMin) sync(v *Solver) {
	s := v.s
	if w.rx != v.rx || v.rx != nil && w.rxGen != v.rx.gen {
		w.s, w.rx = nil, v.rx // another closed set, or sums counted afresh: start over
	}
	if v.rx != nil {
		w.rxGen = v.rx.gen
	}
	l := &v.wlog
	l.sync(s)
	if w.s == s && !l.fresh(w.gen) {
		for c := l.last; c >= 0 && l.at[c] > w.pos; c = l.prev[c] { // each child changed since, once
			w.set(v, l.lo+topology.DomainID(c))
		}
		w.pos = l.n
		return
	}
	w.s, w.gen, w.pos = s, l.gen, l.n
	lo, hi := v.t.Children(0)
	w.lo, w.n = lo, int(hi-lo)
	w.size = 1
	for w.size < w.n {
		w.size *= 2
	}
	if cap(w.node) < 2*w.size {
		w.node = make([]wideKey, 2*w.size)
	}
	w.node = w.node[:2*w.size]
	for i := range w.size {
		w.node[w.size+i] = wideKey{key: noWide, idx: -1}
		if i < w.n {
			w.node[w.size+i] = w.leaf(v, w.lo+topology.DomainID(i))
		}
	}
	for i := w.size - 1; i >= 1; i-- {
		w.node[i] = minKey(w.node[2*i], w.node[2*i+1])
	}
}

func (w *wideMin) leaf(v *Solver, d topology.DomainID) wideKey {
	var c int64
	if w.milli > 0 {
		c = v.fracBound(d)
	} else {
		c = v.histCap(d)
	}
	if c < w.need {
		return wideKey{key: noWide, idx: -1}
	}
	return wideKey{key: uint64(c)<<32 | uint64(v.domFree(d)), idx: int32(d)}
}

// set refreshes level-1 domain d and its path to the top, as far as a node
// changes: above a node that stays, nothing does.
func (w *wideMin) set(v *Solver, d topology.DomainID) {
	i := w.size + int(d-w.lo)
	k := w.leaf(v, d)
	old := w.node[i]
	if old == k {
		return
	}
	w.node[i] = k
	if k.less(old) { // d wins where it won (there the node holds old) and where it now beats the winner
		for i /= 2; i >= 1 && k.less(w.node[i]); i /= 2 {
			w.node[i] = k
		}
		return
	}
	for i /= 2; i >= 1; i /= 2 {
		m := minKey(w.node[2*i], w.node[2*i+1])
		if w.node[i] == m {
			return
		}
		w.node[i] = m
	}
}

func minKey(a, b wideKey) wideKey {
	if b.less(a) {
		return b
	}
	return a
}

// shapeIndex numbers the current set's pod shape for the per-shape caches:
// its GPU count, fractions after the counts 0…MaxHostGPUs by milli.
func (v *Solver) shapeIndex() int {
	if v.set.Milli > 0 {
		return topology.MaxHostGPUs + int(v.set.Milli)
	}
	return int(v.set.GPUs)
}

// wideSlot numbers the root indexes: shapeIndex for one pod, then per
// count of pods above one and GPUs a pod, after every shapeIndex.
func (v *Solver) wideSlot(need int64) int {
	if need == 1 {
		return v.shapeIndex()
	}
	const shapes = topology.MaxHostGPUs + 1 + topology.FullGPU // shapeIndex's range
	return shapes + int(need-2)*(topology.MaxHostGPUs+1) + int(v.set.GPUs)
}

// shapeSlot returns (*all)[i], made on first use.
func shapeSlot[T any](all *[]*T, i int) *T {
	for len(*all) <= i {
		*all = append(*all, nil)
	}
	if (*all)[i] == nil {
		(*all)[i] = new(T)
	}
	return (*all)[i]
}
