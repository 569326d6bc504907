package placement_test

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// The oracle: a slow, simple model of what a request may use, written from
// the package documentation and the State's primary data (per-GPU milli,
// failed and nominated bits, host health, exclusivity, free CPU and memory),
// never from the solver's code or the State's aggregates (the upper bounds
// the rule orders domains by are recomputed from the primary data).
//
//   - view: per host, what this request may take.
//   - feasible: exact feasibility, by brute force over per-host pod counts.
//   - expect*: the choices the documented rule makes for one pod set.
//   - validate: every constraint of a returned Plan.

// view is one host as a request sees it.
type view struct {
	ok      bool   // the host may take pods of this request at all
	why     string // why not, for messages
	whole   uint64 // GPUs a whole-GPU pod may take: unused, healthy, not nominated against the gang
	milli   []int  // per GPU, free milli a fractional pod may use; -1: unusable
	cpu     int64
	mem     int64
	gpusCnt int

	// What the aggregates see (for the rule's upper bounds and tie-breaks):
	free     int                            // GPUs in the State's free-mask: unused, healthy, not nominated, host healthy and not held
	takeable int                            // GPUs nominated for a job whose nomination admits the gang (any use, any health)
	shared   int64                          // free milli on partly used, healthy, not nominated GPUs of a healthy host not held
	parts    [topology.PartialBuckets]int64 // those GPUs by free-milli bucket
	modelOK  bool
}

// admits is the topology package's nomination rule, restated: the nominee, a
// strictly higher priority, or a gang expected to end by the ready time.
func admits(s *topology.State, r *placement.Request, g topology.GPUID) bool {
	j, nominated := s.GPUNominee(g)
	if !nominated {
		return true
	}
	n, _ := s.NominationOf(j)
	return n.Job == r.Job || r.Priority > n.Priority || (r.HasEnd && r.End <= n.Ready)
}

func viewOf(s *topology.State, r *placement.Request, h topology.HostID) view {
	t := s.Tree()
	lo, hi := t.HostGPUs(h)
	v := view{gpusCnt: int(hi - lo), milli: make([]int, hi-lo), cpu: int64(s.HostCPU(h)), mem: int64(s.HostMemory(h))}
	healthy := s.HostHealth(h) == topology.Healthy
	holder, held := s.HostExclusive(h)
	held = held && holder != r.Job // the gang's own pods (an earlier pod set) do not close a host to it
	hasPods := slices.ContainsFunc(s.AppendHostJobs(nil, h), func(j topology.JobID) bool { return j != r.Job })
	modelOK := len(r.Models) == 0 || slices.Contains(r.Models, t.HostModel(h))
	eligible := r.Eligible == nil || r.Eligible[h/64]&(1<<(uint(h)%64)) != 0
	allAdmitted := true
	for i := range v.gpusCnt {
		g := lo + topology.GPUID(i)
		m := s.GPUMilli(g)
		failed := s.GPUFailed(g)
		_, nominated := s.GPUNominee(g)
		adm := admits(s, r, g)
		allAdmitted = allAdmitted && adm
		if healthy && !held && !failed && !nominated && m == topology.FullGPU {
			v.free++
		}
		if healthy && !held && !failed && !nominated && m > 0 && m < topology.FullGPU {
			v.shared += int64(m)
			v.parts[m/topology.PartialBucketMilli]++
		}
		if nominated && adm {
			v.takeable++
		}
		if failed || !adm {
			v.milli[i] = -1
			continue
		}
		v.milli[i] = m
		if m == topology.FullGPU {
			v.whole |= 1 << uint(i)
		}
	}
	v.modelOK = modelOK
	if !eligible && r.Restriction != nil { // the aggregates a restricted request reads leave closed hosts out
		v.free, v.shared, v.parts = 0, 0, [topology.PartialBuckets]int64{}
	}
	switch {
	case !healthy:
		v.why = s.HostHealth(h).String()
	case held:
		v.why = fmt.Sprintf("held exclusively by job %d", holder)
	case !modelOK:
		v.why = "model " + t.ModelName(t.HostModel(h)) + " not accepted"
	case !eligible:
		v.why = "not eligible"
	case r.Exclusive && hasPods:
		v.why = "exclusive gang, host has pods"
	case r.Exclusive && !allAdmitted:
		v.why = "exclusive gang, host has GPUs nominated for others"
	default:
		v.ok = true
	}
	return v
}

// shape is a pod set's per-pod demand.
type shape struct{ gpus, milli, cpu, mem int64 }

func shapeOf(p *placement.PodSet) shape {
	sh := shape{cpu: int64(p.CPUMilli), mem: int64(p.MemoryMiB)}
	if p.Milli > 0 {
		sh.milli = int64(p.Milli)
	} else {
		sh.gpus = int64(p.GPUs)
	}
	return sh
}

// fits reports whether the host takes c[k] pods of shape sh[k] together:
// CPU, memory, whole GPUs among the unused ones, and fractions packed exactly
// onto the remaining usable GPUs.
func (v *view) fits(sh [2]shape, c [2]int) bool {
	if c[0] == 0 && c[1] == 0 {
		return true
	}
	if !v.ok {
		return false
	}
	var cpu, mem, whole int64
	var fn, fm [2]int64
	for k := range 2 {
		n := int64(c[k])
		cpu += n * sh[k].cpu
		mem += n * sh[k].mem
		switch {
		case sh[k].milli > 0:
			fn[k], fm[k] = n, sh[k].milli
		case sh[k].gpus > 0:
			whole += n * sh[k].gpus
		}
	}
	if cpu > v.cpu || mem > v.mem {
		return false
	}
	var bins []int64
	unused := int64(0)
	for _, m := range v.milli {
		switch {
		case m == topology.FullGPU:
			unused++
		case m > 0:
			bins = append(bins, int64(m))
		}
	}
	if whole > unused {
		return false
	}
	for range unused - whole { // every unused usable GPU is a whole 1000-milli bin
		bins = append(bins, topology.FullGPU)
	}
	return pack(bins, fn, fm)
}

// pack reports whether n[0] items of size m[0] and n[1] of size m[1] fit in
// bins, by dynamic programming over the counts placed so far.
func pack(bins []int64, n, m [2]int64) bool {
	if n[0]+n[1] == 0 {
		return true
	}
	w := n[1] + 1
	reach := make([]bool, (n[0]+1)*w)
	next := make([]bool, len(reach))
	reach[0] = true
	for _, c := range bins {
		copy(next, reach)
		for x := int64(0); x <= n[0]; x++ {
			for y := int64(0); y <= n[1]; y++ {
				if !reach[x*w+y] {
					continue
				}
				for dx := int64(0); x+dx <= n[0] && dx*m[0] <= c; dx++ {
					for dy := int64(0); y+dy <= n[1] && dx*m[0]+dy*m[1] <= c; dy++ {
						next[(x+dx)*w+y+dy] = true
					}
				}
			}
		}
		reach, next = next, reach
	}
	return reach[n[0]*w+n[1]]
}

// capacity is how many pods of shape sh the host takes alone (the rule's
// per-host capacity: the minimum over GPUs, CPU and memory).
func (v *view) capacity(sh shape) int64 {
	if !v.ok {
		return 0
	}
	c := int64(math.MaxInt64)
	switch {
	case sh.milli > 0:
		c = 0
		for _, m := range v.milli {
			if m > 0 {
				c += int64(m) / sh.milli
			}
		}
	case sh.gpus > 0:
		c = int64(bits.OnesCount64(v.whole)) / sh.gpus
	}
	if sh.cpu > 0 {
		c = min(c, v.cpu/sh.cpu)
	}
	if sh.mem > 0 {
		c = min(c, v.mem/sh.mem)
	}
	return c
}

// oracle evaluates one request on one State.
type oracle struct {
	t      *topology.Tree
	s      *topology.State
	r      *placement.Request
	hl     topology.Level
	views  []view
	sh     [2]shape
	pods   [2]int
	slice  [2]int
	sliceL [2]topology.Level
	fit    [][]bool // [h][a*(pods[1]+1)+b]: host h takes a pods of set 0 and b of set 1
	exact  bool     // the doc's exact mode for pod set 0
	// selfErr records an inconsistency of the oracle with itself
	selfErr string
}

func newOracle(s *topology.State, r *placement.Request) *oracle {
	t := s.Tree()
	o := &oracle{t: t, s: s, r: r, hl: t.HostLevel(), slice: [2]int{1, 1}}
	o.views = make([]view, t.NumHosts())
	for h := range o.views {
		o.views[h] = viewOf(s, r, topology.HostID(h))
	}
	if len(r.Sets) > 2 {
		panic("oracle: at most two pod sets")
	}
	for k := range r.Sets {
		set := &r.Sets[k]
		o.sh[k], o.pods[k] = shapeOf(set), int(set.Pods)
		if set.SliceSize > 1 {
			o.slice[k], o.sliceL[k] = int(set.SliceSize), set.SliceLevel
		}
	}
	o.exact = o.exactMode()
	return o
}

// fitTables fills o.fit (once): for every host, which pod counts it takes.
func (o *oracle) fitTables() {
	if o.fit != nil {
		return
	}
	w := o.pods[1] + 1
	o.fit = make([][]bool, o.t.NumHosts())
	for h := range o.fit {
		o.fit[h] = make([]bool, (o.pods[0]+1)*w)
		for a := 0; a <= o.pods[0]; a++ {
			for b := 0; b <= o.pods[1]; b++ {
				o.fit[h][a*w+b] = o.views[h].fits(o.sh, [2]int{a, b})
			}
		}
		// self-check: alone, the exact packing agrees with the rule's capacity
		for k := range 2 {
			c := o.views[h].capacity(o.sh[k])
			for n := 0; n <= o.pods[k]; n++ {
				cnt := [2]int{}
				cnt[k] = n
				if o.views[h].fits(o.sh, cnt) != (int64(n) <= c) {
					panic(fmt.Sprintf("oracle: host %d set %d: packing and capacity disagree at %d pods", h, k, n))
				}
			}
		}
	}
}

// sliceDom is the slice domain of set k holding host h (0 when the set has
// no slices).
func (o *oracle) sliceDom(k int, h topology.HostID) int {
	switch {
	case o.slice[k] <= 1:
		return 0
	case o.sliceL[k] == o.hl:
		return int(h)
	}
	return int(o.t.HostDomain(h, o.sliceL[k]))
}

// feasibleIn decides exactly whether the whole gang fits on hosts [lo, hi):
// a search over hosts in order choosing how many pods of each set each one
// takes, with every slice domain holding whole slices, memoised on (host,
// pods left, pods of the open slice domains mod slice size).
func (o *oracle) feasibleIn(lo, hi topology.HostID) bool {
	o.fitTables()
	memo := map[[5]int]bool{}
	w := o.pods[1] + 1
	var dfs func(h topology.HostID, r0, r1, m0, m1 int) bool
	dfs = func(h topology.HostID, r0, r1, m0, m1 int) bool {
		if h == hi {
			return r0 == 0 && r1 == 0 && m0 == 0 && m1 == 0
		}
		key := [5]int{int(h), r0, r1, m0, m1}
		if v, ok := memo[key]; ok {
			return v
		}
		closes := [2]bool{h+1 == hi || o.sliceDom(0, h) != o.sliceDom(0, h+1), h+1 == hi || o.sliceDom(1, h) != o.sliceDom(1, h+1)}
		res := false
		for a := 0; a <= r0 && !res; a++ {
			for b := 0; b <= r1 && !res; b++ {
				if !o.fit[h][a*w+b] {
					continue
				}
				n0, n1 := (m0+a)%o.slice[0], (m1+b)%o.slice[1]
				if (closes[0] && n0 != 0) || (closes[1] && n1 != 0) {
					continue
				}
				res = dfs(h+1, r0-a, r1-b, n0, n1)
			}
		}
		memo[key] = res
		return res
	}
	return dfs(lo, o.pods[0], o.pods[1], 0, 0)
}

// feasible decides whether the gang fits anywhere, honouring the required level.
func (o *oracle) feasible() bool {
	R := o.r.Required
	switch {
	case R <= 0:
		return o.feasibleIn(0, topology.HostID(o.t.NumHosts()))
	case R == o.hl:
		for h := range topology.HostID(o.t.NumHosts()) {
			if o.feasibleIn(h, h+1) {
				return true
			}
		}
		return false
	}
	lo, hi := o.t.LevelDomains(R)
	for d := lo; d < hi; d++ {
		if o.feasibleIn(o.t.Hosts(d)) {
			return true
		}
	}
	return false
}

// node is a domain or a host measured for pod set 0 as the rule measures it.
type node struct {
	l     topology.Level
	i     int32
	cap   int64 // the rule's capacity: exact, or the aggregates' upper bound
	exact int64 // the exact capacity, counting whole slices per slice domain
	free  int64 // the tie-break: free GPUs (for a host, free for this gang)
}

const unbounded = math.MaxInt64

// hostsOf returns the hosts of node (l, i).
func (o *oracle) hostsOf(l topology.Level, i int32) (topology.HostID, topology.HostID) {
	if l == o.hl {
		return topology.HostID(i), topology.HostID(i) + 1
	}
	return o.t.Hosts(topology.DomainID(i))
}

// exactMode: the doc's condition for aggregate capacities being exact —
// whole GPUs only, no CPU, memory, eligibility (but for a Restriction's),
// exclusivity, nor nominated GPUs this gang may take.
func (o *oracle) exactMode() bool {
	sh := o.sh[0]
	if sh.gpus == 0 || sh.milli > 0 || sh.cpu > 0 || sh.mem > 0 || o.r.Eligible != nil && o.r.Restriction == nil || o.r.Exclusive {
		return false
	}
	for h := range o.views {
		if o.views[h].takeable > 0 {
			return false
		}
	}
	return true
}

// bound is the aggregates' upper bound on pods of set 0 in hosts [lo, hi):
// whole GPUs, Σ over hosts of acceptable models of ⌊free/GPUs⌋, plus every
// GPU this gang may take from nominations; fractions, (free GPUs of acceptable
// models + those nominated GPUs)·⌊1000/milli⌋ + what the partly used GPUs
// take: at most ⌊shared milli/milli⌋, and at most, GPU by GPU, what the top
// of its free-milli bucket holds (the rule's "counted by their free-milli
// bucket", topology.PartialGPUs); CPU-only pods, unbounded.
func (o *oracle) bound(lo, hi topology.HostID) int64 {
	sh := o.sh[0]
	var free, take, pods, shared, byBucket int64
	for h := lo; h < hi; h++ {
		v := &o.views[h]
		take += int64(v.takeable)
		shared += v.shared
		if sh.milli > 0 {
			for b, n := range v.parts {
				byBucket += n * ((int64(b+1)*topology.PartialBucketMilli - 1) / sh.milli)
			}
		}
		if v.modelOK {
			free += int64(v.free)
			if sh.gpus > 0 {
				pods += int64(v.free) / sh.gpus
			}
		}
	}
	switch {
	case sh.milli > 0:
		return (free+take)*(topology.FullGPU/sh.milli) + min(shared/sh.milli, byBucket)
	case sh.gpus > 0:
		return pods + take
	}
	return unbounded
}

// nodeOf measures node (l, i) for pod set 0. The rule's capacity is exact for
// hosts, and for domains in exact mode (at the slice level counted host by
// host, above it rounded down to whole slices); otherwise it is the bound,
// rounded down to whole slices at and above the slice level.
func (o *oracle) nodeOf(l topology.Level, i int32) node {
	n := node{l: l, i: i}
	lo, hi := o.hostsOf(l, i)
	S, SL := int64(o.slice[0]), o.sliceL[0]
	sliced := S > 1 && l <= SL
	group, cur := -1, int64(0)
	for h := lo; h < hi; h++ {
		n.free += int64(o.views[h].free)
		c := o.views[h].capacity(o.sh[0])
		if !sliced {
			n.exact += c
			continue
		}
		if g := o.sliceDom(0, h); g != group {
			n.exact += cur - cur%S
			group, cur = g, 0
		}
		cur += c
	}
	if sliced {
		n.exact += cur - cur%S
	}
	switch {
	case l == o.hl:
		n.cap = n.exact
		n.free = int64(bits.OnesCount64(o.views[i].whole))
	case o.exact && S > 1 && l == SL:
		n.cap = n.exact
	default:
		n.cap = o.bound(lo, hi)
		if sliced && n.cap != unbounded {
			n.cap -= n.cap % S
		}
	}
	if n.exact > n.cap {
		o.selfErr = fmt.Sprintf("node (%d, %d): exact capacity %d above the bound %d", l, i, n.exact, n.cap)
	}
	return n
}

// better is the policy order of the rule: BestFit smallest capacity, then
// fewest free GPUs; FirstFit neither; then lowest index. byExact orders by
// exact capacities instead (for comparison only).
func better(p placement.Policy, a, b node, byExact bool, hl topology.Level) bool {
	if p == placement.BestFit {
		ac, bc := a.cap, b.cap
		if byExact {
			ac, bc = a.exact, b.exact
		}
		if a.l == hl && a.free != b.free { // hosts: tightest GPUs first
			return a.free < b.free
		}
		if ac != bc {
			return ac < bc
		}
		if a.free != b.free {
			return a.free < b.free
		}
	}
	return a.i < b.i
}

// best returns the node of level l in [lo, hi) the rule chooses for need
// pods: nodes are taken in policy order and one whose capacity is only a
// bound passes on to the next, so it is the policy's best among those that
// hold need pods exactly (every such node's bound holds them too).
func (o *oracle) best(l topology.Level, lo, hi int32, need int64, byExact bool) (node, bool) {
	var b node
	found := false
	for i := lo; i < hi; i++ {
		n := o.nodeOf(l, i)
		if n.exact >= need && (!found || better(o.r.Policy, n, b, byExact, o.hl)) {
			b, found = n, true
		}
	}
	return b, found
}

// levelRange returns the nodes of level l inside node (pl, pi).
func (o *oracle) levelRange(pl topology.Level, pi int32, l topology.Level) (int32, int32) {
	if l == o.hl {
		lo, hi := o.hostsOf(pl, pi)
		return int32(lo), int32(hi)
	}
	lo, hi := o.t.Descendants(topology.DomainID(pi), l)
	return int32(lo), int32(hi)
}

// expectDomain is the required domain (or host) the rule picks for a single
// pod set, or false when none fits.
func (o *oracle) expectDomain(byExact bool) (node, bool) {
	R := o.r.Required
	lo, hi := o.levelRange(0, 0, R)
	return o.best(R, lo, hi, int64(o.pods[0]), byExact)
}

// expectPod is where the rule puts a single pod: the required domain; the
// best domain of the preferred level in it; then level by level the best
// child; on the host, the GPUs of the rule.
func (o *oracle) expectPod(byExact bool) (topology.HostID, uint64, bool) {
	cur := node{l: 0, i: 0}
	if R := o.r.Required; R > 0 {
		d, ok := o.expectDomain(byExact)
		if !ok {
			return 0, 0, false
		}
		cur = d
	}
	if P := o.r.Preferred; P > cur.l {
		lo, hi := o.levelRange(cur.l, cur.i, P)
		n, ok := o.best(P, lo, hi, 1, byExact)
		if !ok {
			return 0, 0, false
		}
		cur = n
	}
	for cur.l < o.hl {
		cl := cur.l + 1
		if lo, hi := o.t.Children(topology.DomainID(cur.i)); lo == hi {
			cl = o.hl
		}
		lo, hi := o.levelRange(cur.l, cur.i, cl)
		n, ok := o.best(cl, lo, hi, 1, byExact)
		if !ok {
			return 0, 0, false
		}
		cur = n
	}
	h := topology.HostID(cur.i)
	return h, o.expectGPUs(h), true
}

// expectGPUs is the rule inside a host for one pod of set 0: whole GPUs, the
// lowest of the smallest run of free GPUs that holds them (if none does, the
// smallest runs first); a fraction, the GPU with the least free milli that fits.
func (o *oracle) expectGPUs(h topology.HostID) uint64 {
	v, sh := &o.views[h], o.sh[0]
	switch {
	case sh.milli > 0:
		best := -1
		for i, m := range v.milli {
			if int64(m) >= sh.milli && (best < 0 || m < v.milli[best]) {
				best = i
			}
		}
		return 1 << uint(best)
	case sh.gpus > 0:
		type run struct{ start, n int }
		var runs []run
		for i := 0; i < v.gpusCnt; {
			if v.whole&(1<<uint(i)) == 0 {
				i++
				continue
			}
			j := i
			for j < v.gpusCnt && v.whole&(1<<uint(j)) != 0 {
				j++
			}
			runs = append(runs, run{i, j - i})
			i = j
		}
		slices.SortStableFunc(runs, func(a, b run) int { return a.n - b.n })
		for _, r := range runs {
			if int64(r.n) >= sh.gpus {
				return (1<<uint(sh.gpus) - 1) << uint(r.start)
			}
		}
		var m uint64
		need := int(sh.gpus)
		for _, r := range runs {
			take := min(r.n, need)
			m |= (1<<uint(take) - 1) << uint(r.start)
			need -= take
			if need == 0 {
				break
			}
		}
		return m
	}
	return 0
}

// validate checks a Plan against every constraint of the request, on the
// State it was made for. It returns the first violation, or "".
func (o *oracle) validate(p *placement.Plan) string {
	t, r := o.t, o.r
	total := 0
	for _, set := range r.Sets {
		total += int(set.Pods)
	}
	if len(p.Pods) != total {
		return fmt.Sprintf("plan has %d pods, request %d", len(p.Pods), total)
	}
	if p.Job != r.Job {
		return fmt.Sprintf("plan job %d, request %d", p.Job, r.Job)
	}
	info := p.Info
	if info.Priority != r.Priority || info.Preemptible != r.Preemptible || info.Exclusive != r.Exclusive ||
		info.HasEnd != r.HasEnd || (r.HasEnd && info.End != r.End) || info.Required != r.Required || info.Preferred != r.Preferred {
		return fmt.Sprintf("plan info %+v does not match the request", info)
	}
	type use struct {
		whole    uint64
		shared   uint64
		milli    []int64
		cpu, mem int64
	}
	uses := make([]use, t.NumHosts())
	rank := 0
	for si := range r.Sets {
		set := &r.Sets[si]
		for j := range int(set.Pods) {
			pod := p.Pods[rank]
			h := pod.Host
			where := fmt.Sprintf("set %d pod %d (rank %d) on host %d", si, j, rank, h)
			rank++
			if h < 0 || int(h) >= t.NumHosts() {
				return where + ": host out of range"
			}
			v := &o.views[h]
			if !v.ok {
				return where + ": host unusable: " + v.why
			}
			if v.gpusCnt < 64 && pod.GPUs>>uint(v.gpusCnt) != 0 {
				return fmt.Sprintf("%s: GPU mask %b beyond the host's %d GPUs", where, pod.GPUs, v.gpusCnt)
			}
			if pod.CPUMilli != set.CPUMilli || pod.MemoryMiB != set.MemoryMiB || pod.Milli != set.Milli {
				return fmt.Sprintf("%s: pod %+v has not the set's shape", where, pod)
			}
			u := &uses[h]
			if u.milli == nil {
				u.milli = make([]int64, v.gpusCnt)
			}
			switch {
			case set.Milli > 0:
				if bits.OnesCount64(pod.GPUs) != 1 {
					return fmt.Sprintf("%s: fractional pod with GPU mask %b", where, pod.GPUs)
				}
				i := bits.TrailingZeros64(pod.GPUs)
				if v.milli[i] < 0 {
					return fmt.Sprintf("%s: GPU %d is failed or nominated for another job", where, i)
				}
				u.shared |= pod.GPUs
				u.milli[i] += int64(pod.Milli)
			case set.GPUs > 0:
				if bits.OnesCount64(pod.GPUs) != int(set.GPUs) {
					return fmt.Sprintf("%s: %d GPUs, set wants %d", where, bits.OnesCount64(pod.GPUs), set.GPUs)
				}
				if bad := pod.GPUs &^ v.whole; bad != 0 {
					return fmt.Sprintf("%s: GPUs %b not free for this gang", where, bad)
				}
				if u.whole&pod.GPUs != 0 {
					return fmt.Sprintf("%s: GPUs %b taken twice", where, u.whole&pod.GPUs)
				}
				u.whole |= pod.GPUs
			default:
				if pod.GPUs != 0 {
					return fmt.Sprintf("%s: CPU-only pod with GPU mask %b", where, pod.GPUs)
				}
			}
			u.cpu += int64(pod.CPUMilli)
			u.mem += int64(pod.MemoryMiB)
		}
	}
	for h := range uses {
		u, v := &uses[h], &o.views[h]
		switch {
		case u.cpu > v.cpu:
			return fmt.Sprintf("host %d: CPU %d over the free %d", h, u.cpu, v.cpu)
		case u.mem > v.mem:
			return fmt.Sprintf("host %d: memory %d over the free %d", h, u.mem, v.mem)
		case u.whole&u.shared != 0:
			return fmt.Sprintf("host %d: GPUs %b both whole and shared", h, u.whole&u.shared)
		}
		for i, m := range u.milli {
			if m > 0 && m > int64(v.milli[i]) {
				return fmt.Sprintf("host %d GPU %d: %d milli over the free %d", h, i, m, v.milli[i])
			}
		}
	}
	if msg := o.validateDomains(p); msg != "" {
		return msg
	}
	return ""
}

// validateDomains checks the required domain (and the Plan's Domain and
// Host) and the slices.
func (o *oracle) validateDomains(p *placement.Plan) string {
	t, r := o.t, o.r
	R := r.Required
	switch {
	case R <= 0:
		if p.Domain != 0 || p.Host != -1 {
			return fmt.Sprintf("no required level, plan domain %d host %d", p.Domain, p.Host)
		}
	case R == o.hl:
		for _, pod := range p.Pods {
			if pod.Host != p.Pods[0].Host {
				return fmt.Sprintf("required host: pods on hosts %d and %d", p.Pods[0].Host, pod.Host)
			}
		}
		if p.Host != p.Pods[0].Host || p.Domain != t.HostParent(p.Host) {
			return fmt.Sprintf("required host: plan host %d domain %d, pods on host %d", p.Host, p.Domain, p.Pods[0].Host)
		}
	default:
		for _, pod := range p.Pods {
			if d := t.HostDomain(pod.Host, R); d != p.Domain {
				return fmt.Sprintf("required %s: pod on host %d is in domain %d, plan says %d", t.LevelName(R), pod.Host, d, p.Domain)
			}
		}
		if p.Host != -1 || t.DomainLevel(p.Domain) != R {
			return fmt.Sprintf("required %s: plan domain %d (level %d) host %d", t.LevelName(R), p.Domain, t.DomainLevel(p.Domain), p.Host)
		}
	}
	off := 0
	for k := range r.Sets {
		S := o.slice[k]
		for i := range int(r.Sets[k].Pods) {
			if S > 1 && i%S != 0 {
				first, this := p.Pods[off+i-i%S].Host, p.Pods[off+i].Host
				if o.sliceDom(k, first) != o.sliceDom(k, this) {
					return fmt.Sprintf("set %d slice %d: ranks %d and %d in different %s domains (hosts %d, %d)",
						k, i/S, i-i%S, i, t.LevelName(o.sliceL[k]), first, this)
				}
			}
		}
		off += int(r.Sets[k].Pods)
	}
	return ""
}
