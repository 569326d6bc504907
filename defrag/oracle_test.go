package defrag_test

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// The oracle solves MakeRoom's model by brute force, independently of the
// planner: for every target domain of the request's target level, a
// breadth-first search over States, where one step moves one movable and
// preemptible job not moved yet to any placement outside the target that
// keeps its constraints (pods on healthy hosts of its GPU model, its
// required level and slices, CPU and memory), applied with State.Apply to a
// clone. States are memoised by the positions of the movable jobs and the
// set moved. The first depth at which the request fits in the target (by a
// host-by-host count) is the fewest moves; among those States, the fewest
// GPUs moved. Whole-GPU pods only: GPUs inside a host are interchangeable,
// so a pod takes the lowest free ones.
type oracle struct {
	s0      *topology.State
	t       *topology.Tree
	r       *placement.Request
	k       int
	movable []topology.JobID // sorted
	cost    map[topology.JobID]int
	states  int                        // States visited
	took    map[topology.HostID]uint64 // nominated GPUs the request may take (moves change no nomination)
}

type oracleState struct {
	s     *topology.State
	moved uint32 // bit i: movable[i] has moved
	gpus  int
}

func newOracle(s *topology.State, r *placement.Request, k int) *oracle {
	o := &oracle{s0: s, t: s.Tree(), r: r, k: k, cost: map[topology.JobID]int{}}
	for j := range s.JobIDBound() {
		info, ok := s.JobInfo(j)
		if !ok || !info.Movable || !info.Preemptible {
			continue
		}
		pods := s.AppendJobPods(nil, j)
		one := true
		for _, p := range pods {
			one = one && o.t.HostModel(p.Host) == o.t.HostModel(pods[0].Host)
		}
		if !one {
			continue
		}
		o.movable = append(o.movable, j)
		n := 0
		for _, p := range pods {
			n += p.NumGPUs()
		}
		o.cost[j] = n
	}
	return o
}

// targetLevel is the model's rule for the level of target domains.
func (o *oracle) targetLevel() topology.Level {
	t, r := o.t, o.r
	if r.Required > 0 {
		return r.Required
	}
	var need, pods int64
	for _, set := range r.Sets {
		pods += int64(set.Pods)
		if set.Milli > 0 {
			need += int64(math.Ceil(float64(int64(set.Pods)*int64(set.Milli)) / 1000))
		} else {
			need += int64(set.Pods) * int64(set.GPUs)
		}
	}
	if need == 0 {
		if pods == 1 || t.HostLevel() == 1 {
			return t.HostLevel()
		}
		return 1
	}
	if int64(t.MaxHostGPUs()) >= need {
		return t.HostLevel()
	}
	for l := t.HostLevel() - 1; l >= 1; l-- {
		lo, hi := t.LevelDomains(l)
		for d := lo; d < hi; d++ {
			if int64(t.DomainGPUs(d)) >= need {
				return l
			}
		}
	}
	return 0
}

// solve returns the fewest moves and then GPUs moved, or ok false when no
// plan of at most k moves exists.
func (o *oracle) solve() (moves, gpus int, ok bool) {
	if o.fitsAnywhere(o.s0) {
		return 0, 0, true
	}
	l := o.targetLevel()
	if l <= 0 {
		return 0, 0, false
	}
	best, bestGPUs := o.k+1, math.MaxInt
	t := o.t
	var targets [][2]topology.HostID
	if l == t.HostLevel() {
		for h := range topology.HostID(t.NumHosts()) {
			targets = append(targets, [2]topology.HostID{h, h + 1})
		}
	} else {
		lo, hi := t.LevelDomains(l)
		for d := lo; d < hi; d++ {
			a, b := t.Hosts(d)
			targets = append(targets, [2]topology.HostID{a, b})
		}
	}
	for _, tg := range targets {
		m, g, found := o.solveTarget(tg[0], tg[1], min(best, o.k))
		if found && (m < best || m == best && g < bestGPUs) {
			best, bestGPUs = m, g
		}
	}
	if best > o.k {
		return 0, 0, false
	}
	return best, bestGPUs, true
}

// solveTarget searches plans of at most limit moves for target hosts
// [lo, hi).
func (o *oracle) solveTarget(lo, hi topology.HostID, limit int) (int, int, bool) {
	seen := map[string]bool{}
	frontier := []oracleState{{s: o.s0}}
	seen[o.key(o.s0, 0)] = true
	for depth := 0; depth <= limit; depth++ {
		bestGPUs, found := math.MaxInt, false
		for _, st := range frontier {
			if o.fitsIn(st.s, lo, hi) {
				found = true
				bestGPUs = min(bestGPUs, st.gpus)
			}
		}
		if found {
			return depth, bestGPUs, true
		}
		if depth == limit {
			break
		}
		var next []oracleState
		for _, st := range frontier {
			if !o.mayFit(st, lo, hi, limit-depth) {
				continue
			}
			for i, j := range o.movable {
				if st.moved&(1<<uint(i)) != 0 {
					continue
				}
				o.eachPlacement(st.s, j, lo, hi, func(c *topology.State) {
					if depth == limit-1 { // the last move: tested, not kept (keeping them held a cube of States)
						o.states++
						if o.fitsIn(c, lo, hi) {
							found, bestGPUs = true, min(bestGPUs, st.gpus+o.cost[j])
						}
						return
					}
					moved := st.moved | 1<<uint(i)
					k := o.key(c, moved)
					if seen[k] {
						return
					}
					seen[k] = true
					o.states++
					next = append(next, oracleState{s: c, moved: moved, gpus: st.gpus + o.cost[j]})
				})
			}
		}
		if found {
			return depth + 1, bestGPUs, true
		}
		frontier = next
	}
	return 0, 0, false
}

// mayFit prunes: the whole GPUs the request misses in the target must not
// exceed what the left largest unmoved jobs free there.
func (o *oracle) mayFit(st oracleState, lo, hi topology.HostID, left int) bool {
	need := 0
	for _, set := range o.r.Sets {
		need += int(set.Pods) * int(set.GPUs)
	}
	free := 0
	for h := lo; h < hi; h++ {
		free += o.usable(st.s, h)
	}
	var in []int
	for i, j := range o.movable {
		if st.moved&(1<<uint(i)) != 0 {
			continue
		}
		n := 0
		for _, p := range st.s.AppendJobPods(nil, j) {
			if p.Host >= lo && p.Host < hi {
				n += p.NumGPUs()
			}
		}
		in = append(in, n)
	}
	slices.Sort(in)
	slices.Reverse(in)
	for i := 0; i < left && i < len(in); i++ {
		free += in[i]
	}
	return free >= need
}

// usable counts host h's free GPUs and the unused healthy ones nominated
// for jobs whose nomination admits the request (unless a job holds h
// exclusively).
func (o *oracle) usable(s *topology.State, h topology.HostID) int {
	free := s.HostFree(h)
	if _, held := s.HostExclusive(h); !held {
		free += bits.OnesCount64(o.admitted(s, h) & s.HostUnusedMask(h) &^ s.HostFailedMask(h))
	}
	return free
}

// key identifies a State by the pods of the movable jobs and the set moved.
func (o *oracle) key(s *topology.State, moved uint32) string {
	b := binary.LittleEndian.AppendUint32(nil, moved)
	for _, j := range o.movable {
		for _, p := range s.AppendJobPods(nil, j) {
			b = binary.LittleEndian.AppendUint32(b, uint32(p.Host))
			b = binary.LittleEndian.AppendUint64(b, p.GPUs)
		}
	}
	return string(b)
}

// fitsAnywhere: the request fits some domain of its required level (or the
// cluster) as the State is.
func (o *oracle) fitsAnywhere(s *topology.State) bool {
	t := o.t
	l := o.r.Required
	if l <= 0 {
		return o.fitsIn(s, 0, topology.HostID(t.NumHosts()))
	}
	if l == t.HostLevel() {
		for h := range topology.HostID(t.NumHosts()) {
			if o.fitsIn(s, h, h+1) {
				return true
			}
		}
		return false
	}
	lo, hi := t.LevelDomains(l)
	for d := lo; d < hi; d++ {
		if a, b := t.Hosts(d); o.fitsIn(s, a, b) {
			return true
		}
	}
	return false
}

// fitsIn counts, host by host, the request's pods (one set) hosts [lo, hi)
// hold.
func (o *oracle) fitsIn(s *topology.State, lo, hi topology.HostID) bool {
	set := o.r.Sets[0]
	n := 0
	for h := lo; h < hi; h++ {
		if s.HostHealth(h) != topology.Healthy {
			continue
		}
		if len(o.r.Models) > 0 && !contains(o.r.Models, o.t.HostModel(h)) {
			continue
		}
		if e := o.r.Eligible; e != nil && e[h/64]&(1<<(uint(h)%64)) == 0 {
			continue
		}
		c := math.MaxInt
		took := o.admitted(s, h) // nominated GPUs the request may take
		switch {
		case set.Milli > 0:
			c = 0
			glo, _ := o.t.HostGPUs(h)
			bad := s.HostFailedMask(h) | s.HostNominatedMask(h)&^took
			for i := range o.t.HostGPUCount(h) {
				if bad&(1<<uint(i)) == 0 {
					c += s.GPUMilli(glo+topology.GPUID(i)) / int(set.Milli)
				}
			}
		case set.GPUs > 0:
			c = o.usable(s, h) / int(set.GPUs)
		}
		if set.CPUMilli > 0 {
			c = min(c, int(s.HostCPU(h)/set.CPUMilli))
		}
		n += c
		if n >= int(set.Pods) {
			return true
		}
	}
	return false
}

// admitted is the mask of host h's GPUs nominated for jobs whose
// nomination admits the request.
func (o *oracle) admitted(s *topology.State, h topology.HostID) uint64 {
	if o.took == nil {
		o.took = map[topology.HostID]uint64{}
		info := topology.Job{Priority: o.r.Priority, HasEnd: o.r.HasEnd, End: o.r.End}
		for _, e := range s.AppendAdmitted(nil, o.r.Job, &info) {
			o.took[e.Host] |= e.Mask
		}
	}
	return o.took[h]
}

// eachPlacement calls f with a clone of s in which job j moved to each of
// its valid placements outside hosts [lo, hi).
func (o *oracle) eachPlacement(s *topology.State, j topology.JobID, lo, hi topology.HostID, f func(*topology.State)) {
	t := o.t
	info, _ := s.JobInfo(j)
	old := s.AppendJobPods(nil, j)
	model := t.HostModel(old[0].Host)
	var groups [][2]topology.HostID
	switch l := info.Required; {
	case l <= 0:
		groups = append(groups, [2]topology.HostID{0, topology.HostID(t.NumHosts())})
	case l == t.HostLevel():
		for h := range topology.HostID(t.NumHosts()) {
			groups = append(groups, [2]topology.HostID{h, h + 1})
		}
	default:
		dlo, dhi := t.LevelDomains(l)
		for d := dlo; d < dhi; d++ {
			a, b := t.Hosts(d)
			groups = append(groups, [2]topology.HostID{a, b})
		}
	}
	slice := 0
	if len(info.Sets) > 0 && info.Sets[0].SliceSize > 1 {
		slice = int(info.Sets[0].SliceSize) // slices at the host level in generated jobs
	}
	base := s.Clone()
	mustApply(base, topology.RemoveJob(j))
	seen := map[string]bool{}
	for _, g := range groups {
		var hosts []topology.HostID
		for h := g[0]; h < g[1]; h++ {
			if (h < lo || h >= hi) && s.HostHealth(h) == topology.Healthy && t.HostModel(h) == model {
				hosts = append(hosts, h)
			}
		}
		choice := make([]int, len(old))
		var rec func(i, from int)
		rec = func(i, from int) {
			if i == len(old) {
				pods, ok := o.layout(base, old, hosts, choice)
				if !ok {
					return
				}
				k := podsKey(pods)
				if seen[k] {
					return
				}
				seen[k] = true
				c := s.Clone()
				if c.Apply(topology.Delta{Ops: []topology.Op{topology.MoveJob(j, pods...)}}) == nil {
					f(c)
				}
				return
			}
			if slice > 1 && i%slice != 0 {
				choice[i] = choice[i-1]
				rec(i+1, choice[i])
				return
			}
			for k := from; k < len(hosts); k++ {
				choice[i] = k
				rec(i+1, k)
			}
		}
		rec(0, 0)
	}
}

// layout gives pod i host hosts[choice[i]] and its lowest free GPUs there
// (in base, where the job is gone), or false if they do not fit.
func (o *oracle) layout(base *topology.State, old []topology.Pod, hosts []topology.HostID, choice []int) ([]topology.Pod, bool) {
	used := map[topology.HostID]uint64{}
	pods := make([]topology.Pod, len(old))
	for i, p := range old {
		h := hosts[choice[i]]
		free := base.HostFreeMask(h) &^ used[h]
		n := p.NumGPUs()
		if bits.OnesCount64(free) < n {
			return nil, false
		}
		var m uint64
		for range n {
			m |= free & -free
			free &= free - 1
		}
		used[h] |= m
		pods[i] = topology.Pod{Host: h, GPUs: m, Milli: p.Milli, CPUMilli: p.CPUMilli, MemoryMiB: p.MemoryMiB}
	}
	return pods, true
}

func podsKey(pods []topology.Pod) string {
	var b []byte
	for _, p := range pods {
		b = binary.LittleEndian.AppendUint32(b, uint32(p.Host))
		b = binary.LittleEndian.AppendUint64(b, p.GPUs)
	}
	return string(b)
}
