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
	if a.lb != b.lb {
		return a.lb.Less(b.lb)
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

// push adds e. It sifts a hole up rather than swapping: each entry above
// moves once, and e is written once, where it stops.
func (h *entryHeap) push(e entry) {
	*h = append(*h, e)
	a := *h
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !e.before(&a[p]) {
			break
		}
		a[i] = a[p]
		i = p
	}
	a[i] = e
}

// pop removes and returns the least entry: the last entry fills the hole
// left at the top, sifted down as push sifts up (the lesser child moves up
// while it is before the last entry; the same heap as swapping would leave,
// before being a strict order).
func (h *entryHeap) pop() entry {
	a := *h
	top := a[0]
	n := len(a) - 1
	last := a[n]
	a = a[:n]
	if n > 0 {
		i := 0
		for {
			m := 2*i + 1
			if m >= n {
				break
			}
			if r := m + 1; r < n && a[r].before(&a[m]) {
				m = r
			}
			if !a[m].before(&last) {
				break
			}
			a[i] = a[m]
			i = m
		}
		a[i] = last
	}
	*h = a
	return top
}
