package preempt

import "github.com/blinksched/blink/topology"

// entry is a node of the best-first search: domain node not yet examined
// (next < 0), or node's children from next on, which still have node's bound.
type entry struct {
	lb    Cost
	node  topology.DomainID
	next  topology.DomainID
	level topology.Level
	// credited: a leaf whose bound the credit bound (credit.go) raised
	// already.
	credited bool
	// soloed: a leaf whose bound the single-victim bound (solo.go) raised
	// already.
	soloed bool
}

// before orders entries: cheaper bound first; then deeper (depth-first among
// equals, so a descent finishes before its siblings start); then index.
func (a *entry) before(b *entry) bool {
	if c := a.lb.Compare(b.lb); c != 0 {
		return c < 0
	}
	if a.level != b.level {
		return a.level > b.level
	}
	if a.node != b.node {
		return a.node < b.node
	}
	return a.next < b.next
}

// entryHeap is a binary min-heap of entries (container/heap would box them).
type entryHeap []entry

func (h *entryHeap) push(e entry) {
	*h = append(*h, e)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if !a[i].before(&a[p]) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *entryHeap) pop() entry {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && a[l].before(&a[m]) {
			m = l
		}
		if r := l + 1; r < n && a[r].before(&a[m]) {
			m = r
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}
