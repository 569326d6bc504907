package placement

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// Restriction is a set of hosts closed to the requests that carry it
// (Request.Restriction), with per-domain sums of what the closed hosts hold
// free: their GPUs by free count and model (the histograms), their shared
// milli and their partly used GPUs by bucket. A Solver subtracts the sums
// from the State's aggregates, so the aggregates it reads count the open
// hosts only: a request restricted to them is placed from exact capacities
// and fast paths, as an unrestricted one is, where an Eligible bitset alone
// leaves placement upper bounds and host-by-host checks. It suits a closed
// set that changes rarely and is shared by many requests, such as an
// engine's spare hosts.
//
// The sums follow a State through its touch log (State.TouchedHosts): a
// Solver brings them up to date at each call, in time proportional to what
// changed; a State it has not seen, or one whose log overflowed, costs one
// pass over the closed hosts. Closing or opening a host is O(1): the sums
// take it in at the next call. A Restriction is not safe for concurrent use.
type Restriction struct {
	t      *topology.Tree
	open   []uint64 // the open hosts: Request.Eligible
	nm, nb int

	// The counted hosts' figures as last counted (zero for others): 7
	// bytes a host, partly used GPUs packed as the State packs them
	// (State.HostPartialData).
	free   []uint8
	shared []uint16
	part   []uint32

	// Per-domain sums over the closed hosts.
	hist   []int32 // domain × model × free count
	dfree  []int32 // domain × model: free GPUs
	dshare []int64
	dpart  []int32 // domain × bucket

	s   *topology.State // the State the sums describe; nil: none yet
	seq uint64
	gen uint64 // changes whenever a host is closed or opened, or the sums are counted afresh

	// Hosts closed or opened since the sums were last brought up to date
	// (possibly repeated), and the hosts the sums count: closing and opening
	// is O(1), the sums follow at the next sync (settle).
	pend    []topology.HostID
	counted []uint64
}

// maxPend is how many closings and openings wait for a sync before the
// sums are dropped, to be counted afresh at the next one.
const maxPend = 4096

// NewRestriction returns a Restriction over tree t with every host open.
func NewRestriction(t *topology.Tree) *Restriction {
	H, D := t.NumHosts(), t.NumDomains()
	nm, nb := t.NumModels(), t.MaxHostGPUs()+1
	x := &Restriction{
		t: t, open: make([]uint64, (H+63)/64), nm: nm, nb: nb,
		free: make([]uint8, H), shared: make([]uint16, H), part: make([]uint32, H),
		hist: make([]int32, D*nm*nb), dfree: make([]int32, D*nm), dshare: make([]int64, D),
		dpart: make([]int32, D*topology.PartialBuckets), counted: make([]uint64, (H+63)/64),
	}
	for h := range H {
		x.open[h>>6] |= 1 << (uint(h) & 63)
	}
	return x
}

// Eligible is the bitset of the open hosts (bit h: host h is open), the
// value a restricted request's Eligible must have (the slice itself, not a
// copy). It changes as hosts are closed and opened; do not modify it.
func (x *Restriction) Eligible() []uint64 { return x.open }

// Closed reports whether host h is closed (false for a host out of range).
func (x *Restriction) Closed(h topology.HostID) bool {
	return h >= 0 && int(h) < x.t.NumHosts() && x.closed(h)
}

func (x *Restriction) closed(h topology.HostID) bool {
	return x.open[h>>6]&(1<<(uint(h)&63)) == 0
}

// Close closes host h to restricted requests; closing a closed host does
// nothing. It fails, changing nothing, if h is out of range.
func (x *Restriction) Close(h topology.HostID) error {
	if h < 0 || int(h) >= x.t.NumHosts() {
		return fmt.Errorf("%w: restriction: host %d out of range", ErrInvalid, h)
	}
	if x.closed(h) {
		return nil
	}
	x.open[h>>6] &^= 1 << (uint(h) & 63)
	x.changed(h)
	return nil
}

// Open opens host h to restricted requests; opening an open host does
// nothing. It fails, changing nothing, if h is out of range.
func (x *Restriction) Open(h topology.HostID) error {
	if h < 0 || int(h) >= x.t.NumHosts() {
		return fmt.Errorf("%w: restriction: host %d out of range", ErrInvalid, h)
	}
	if !x.closed(h) {
		return nil
	}
	x.open[h>>6] |= 1 << (uint(h) & 63)
	x.changed(h)
	return nil
}

// changed records that host h was closed or opened.
func (x *Restriction) changed(h topology.HostID) {
	x.gen++
	if x.s == nil {
		return // nothing counted yet
	}
	if len(x.pend) == maxPend {
		x.s, x.pend = nil, x.pend[:0] // count afresh at the next sync
		return
	}
	x.pend = append(x.pend, h)
}

// settle brings the sums up to date with the hosts closed and opened since
// the last sync: a host closed is counted, one opened leaves the sums.
func (x *Restriction) settle() {
	for _, h := range x.pend {
		w, bit := &x.counted[h>>6], uint64(1)<<(uint(h)&63)
		switch in := *w&bit != 0; {
		case x.closed(h) && !in:
			*w |= bit
			x.count(h)
		case !x.closed(h) && in:
			*w &^= bit
			x.add(h, -1)
			x.free[h], x.shared[h], x.part[h] = 0, 0, 0
		}
	}
	x.pend = x.pend[:0]
}

// Clone returns an independent copy of the closed set; its sums are
// counted afresh at its first use.
func (x *Restriction) Clone() *Restriction {
	c := NewRestriction(x.t)
	copy(c.open, x.open)
	return c
}

// CloneFor returns an independent copy of the closed set whose sums
// describe State c (over the same tree): typically a clone of the State the
// Restriction has followed, as an engine's Clone makes. The sums are copied
// and each closed host is compared with c, moving the sums where it
// differs, so the copy is exact for any such c; it costs O(hosts + domains)
// rather than the recount of every closed host at every level that Clone's
// copy pays at its first use. A Restriction never counted, or a State over
// another tree, gets Clone's copy.
func (x *Restriction) CloneFor(c *topology.State) *Restriction {
	if x.s == nil || c.Tree() != x.t {
		return x.Clone()
	}
	y := &Restriction{t: x.t, open: slices.Clone(x.open), nm: x.nm, nb: x.nb,
		free: slices.Clone(x.free), shared: slices.Clone(x.shared), part: slices.Clone(x.part),
		hist: slices.Clone(x.hist), dfree: slices.Clone(x.dfree), dshare: slices.Clone(x.dshare),
		dpart: slices.Clone(x.dpart), s: c, seq: c.TouchSeq(), gen: x.gen + 1,
		pend: slices.Clone(x.pend), counted: slices.Clone(x.counted)}
	y.settle()
	for w := range y.open {
		for c := y.closedWord(w); c != 0; c &= c - 1 {
			y.recount(topology.HostID(w*64 + bits.TrailingZeros64(c)))
		}
	}
	return y
}

// Sync counts the sums for State s, or brings them up to date with it, now
// rather than at the next restricted request: an engine calls it when it
// sets the Restriction up, so that its first cycle does not pay the count
// (one pass over the closed hosts). Closing and opening hosts stays O(1):
// the sums follow at the next sync. It does nothing for a State over
// another tree.
func (x *Restriction) Sync(s *topology.State) {
	if s.Tree() == x.t {
		x.sync(s)
	}
}

// sync brings the sums up to date with State s.
func (x *Restriction) sync(s *topology.State) {
	if x.s == s && !s.TouchesLost(x.seq) {
		x.settle()
		if s.TouchSeq() == x.seq {
			return
		}
		first, second, _ := s.TouchedSpans(x.seq)
		x.seq = s.TouchSeq()
		x.recountClosed(first)
		x.recountClosed(second)
		return
	}
	x.rebuild(s)
}

// recountClosed recounts the closed hosts among hosts.
func (x *Restriction) recountClosed(hosts []topology.HostID) {
	for _, h := range hosts {
		if x.closed(h) {
			x.recount(h)
		}
	}
}

// rebuild counts the sums afresh for State s.
func (x *Restriction) rebuild(s *topology.State) {
	x.s, x.seq = s, s.TouchSeq()
	x.gen++
	x.pend = x.pend[:0]
	clear(x.free)
	clear(x.shared)
	clear(x.part)
	for w := range x.counted {
		x.counted[w] = x.closedWord(w)
	}
	clear(x.hist)
	clear(x.dfree)
	clear(x.dshare)
	clear(x.dpart)
	for w := range x.open {
		for c := x.closedWord(w); c != 0; c &= c - 1 {
			x.count(topology.HostID(w*64 + bits.TrailingZeros64(c)))
		}
	}
}

// closedWord is word w of the closed hosts' bitset.
func (x *Restriction) closedWord(w int) uint64 {
	closed := ^x.open[w]
	if rest := x.t.NumHosts() - w*64; rest < 64 {
		closed &= 1<<uint(rest) - 1
	}
	return closed
}

// count reads closed host h's figures from the State and adds them to the
// sums.
func (x *Restriction) count(h topology.HostID) {
	s := x.s
	x.free[h], x.shared[h], x.part[h] = s.HostFreeCounts()[h], s.HostSharedData()[h], s.HostPartialData()[h]
	x.add(h, 1)
}

// recount reads closed host h's figures from the State and moves the sums
// by the difference from those last counted.
func (x *Restriction) recount(h topology.HostID) {
	s := x.s
	if s.HostFreeCounts()[h] == x.free[h] && s.HostSharedData()[h] == x.shared[h] && s.HostPartialData()[h] == x.part[h] {
		return
	}
	x.add(h, -1)
	x.count(h)
}

// add adds sign times host h's counted figures to the sums of every domain
// above it.
func (x *Restriction) add(h topology.HostID, sign int32) {
	t := x.t
	m, k := t.HostModel(h), int(x.free[h])
	free, shared, part := sign*int32(k), int64(sign)*int64(x.shared[h]), x.part[h]
	for d := t.HostParent(h); d >= 0; d = t.Parent(d) {
		i := int(d)*x.nm + m
		x.hist[i*x.nb+k] += sign
		x.dfree[i] += free
		if shared != 0 || part != 0 { // a host with partly used GPUs: fractional pods only
			x.dshare[d] += shared
			for b := range topology.PartialBuckets {
				x.dpart[int(d)*topology.PartialBuckets+b] += sign * int32(part>>(8*uint(b))&0xFF)
			}
		}
		if d == 0 {
			break
		}
	}
}

// histRow is domain d's closed hosts by model and free count (models × nb).
func (x *Restriction) histRow(d topology.DomainID) []int32 {
	n := x.nm * x.nb
	return x.hist[int(d)*n : int(d)*n+n]
}

// freeOf is the free GPUs of model m on d's closed hosts.
func (x *Restriction) freeOf(d topology.DomainID, m int) int64 {
	return int64(x.dfree[int(d)*x.nm+m])
}

// freeAll is the free GPUs on d's closed hosts.
func (x *Restriction) freeAll(d topology.DomainID) int64 {
	n := int64(0)
	for _, f := range x.dfree[int(d)*x.nm : int(d)*x.nm+x.nm] {
		n += int64(f)
	}
	return n
}

// partOf is d's partly used GPUs on closed hosts by bucket.
func (x *Restriction) partOf(d topology.DomainID) []int32 {
	return x.dpart[int(d)*topology.PartialBuckets : int(d)*topology.PartialBuckets+topology.PartialBuckets]
}

// histCap is Σ_k hist[k]·perK[k] over k ≥ g and the acceptable models of
// d's closed hosts: the pods of g whole GPUs they would hold.
func (x *Restriction) histCap(d topology.DomainID, g int, modelOK []bool, perK []int64) int64 {
	row := x.histRow(d)
	n := int64(0)
	for m, ok := range modelOK {
		if !ok {
			continue
		}
		for k := g; k < x.nb; k++ {
			n += int64(row[m*x.nb+k]) * perK[k]
		}
	}
	return n
}

// Check brings the sums up to date with State s and compares them with sums
// counted afresh; an error names the first difference.
func (x *Restriction) Check(s *topology.State) error {
	if s.Tree() != x.t {
		return fmt.Errorf("restriction: the State is over another tree")
	}
	x.sync(s)
	c := x.Clone()
	c.rebuild(s)
	for d := range topology.DomainID(x.t.NumDomains()) {
		if !slices.Equal(x.histRow(d), c.histRow(d)) || x.freeAll(d) != c.freeAll(d) ||
			x.dshare[d] != c.dshare[d] || !slices.Equal(x.partOf(d), c.partOf(d)) {
			return fmt.Errorf("restriction: domain %s: the closed hosts' sums differ from a recount", x.t.DomainPath(d))
		}
	}
	return nil
}
