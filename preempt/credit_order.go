package preempt

// The credit bound's order (credit.go): cover needs the candidates of a
// domain by credit, most first, only as far as the fewest whose credits
// cover what is missing — a dozen of the thousands a block of a full
// cluster holds — and only when no one credit covers it alone. So the order
// is made on demand: a max-heap of the candidates by credit, made in
// O(candidates) the first time it is asked for, gives them one by one in
// O(log candidates) each, and those given are kept in order for the
// priorities tried after. Equal credits come in any order: cover depends on
// the credits alone.

// creditOrder is the order made so far: order lists, most credit first,
// the indices of creditScratch.jobs given by the heap, which holds the
// others (heaped: it was made for this domain).
type creditOrder struct {
	order  []int32
	heap   []int32
	heaped bool
}

// reset forgets the order, for a new domain.
func (o *creditOrder) reset() { o.order, o.heap, o.heaped = o.order[:0], o.heap[:0], false }

// byCredit returns the index in jobs of the candidate of rank i by credit
// (0: the most), and false past the last.
func (x *creditScratch) byCredit(i int) (int32, bool) {
	if !x.heaped {
		x.heapCredits()
	}
	for len(x.order) <= i && len(x.heap) > 0 {
		x.order = append(x.order, x.heap[0])
		last := len(x.heap) - 1
		x.heap[0] = x.heap[last]
		if x.heap = x.heap[:last]; last > 0 {
			x.siftDown(0)
		}
	}
	if i < len(x.order) {
		return x.order[i], true
	}
	return 0, false
}

// heapCredits makes the heap of all the candidates.
func (x *creditScratch) heapCredits() {
	x.heaped = true
	x.heap = resize(x.heap, len(x.jobs))
	for i := range x.heap {
		x.heap[i] = int32(i)
	}
	for i := len(x.heap)/2 - 1; i >= 0; i-- {
		x.siftDown(i)
	}
}

// siftDown moves the heap's entry at i down to its place.
func (x *creditScratch) siftDown(i int) {
	h, jobs := x.heap, x.jobs
	v := h[i]
	w := jobs[v].w
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && jobs[h[c+1]].w > jobs[h[c]].w {
			c++
		}
		if jobs[h[c]].w <= w {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = v
}

// fewest is the fewest candidates of priority up to prio whose credits
// reach delta (they do), and delta less the credits of all of them but the
// last: what each of that many must have at least.
func (x *creditScratch) fewest(delta int64, prio int32) (k int, sMin int64) {
	sum, last := int64(0), int64(0)
	for i := 0; sum < delta; i++ {
		ci, ok := x.byCredit(i)
		if !ok {
			break // not reached: the caller checked the credits reach delta
		}
		if c := &x.jobs[ci]; c.prio <= prio {
			k++
			sum, last = sum+c.w, c.w
		}
	}
	return k, delta - (sum - last)
}
