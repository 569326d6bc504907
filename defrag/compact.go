package defrag

import (
	"container/heap"
	"fmt"
	"slices"

	"github.com/blinksched/blink/topology"
)

// GoalKind says what Compact maximises.
type GoalKind uint8

const (
	// FreeDomains: entirely free domains of the goal's level (every host
	// idle), e.g. empty NVL72 racks.
	FreeDomains GoalKind = iota
	// LargestGang: the most pods of GPUsPerPod whole GPUs that one domain of
	// the level can take (the largest gang placeable with the level required).
	LargestGang
)

func (k GoalKind) String() string {
	switch k {
	case FreeDomains:
		return "free-domains"
	case LargestGang:
		return "largest-gang"
	}
	return "goal(?)"
}

// Goal is what a compaction aims at.
type Goal struct {
	Kind GoalKind
	// Level is a named level (1…) or the host level.
	Level topology.Level
	// Want: for FreeDomains, the domains to free beyond those free now; for
	// LargestGang, the pods wanted in one domain. 0: as many as the budget
	// allows.
	Want int
	// GPUsPerPod: the gang's pod shape (LargestGang only), 1…64.
	GPUsPerPod int
}

// Outcome is what a compaction achieved.
type Outcome struct {
	// Before and After: the free domains of the level, or the largest gang in
	// pods, before and after the plan.
	Before, After int
	// Reached: the goal's Want is met (always true for Want 0).
	Reached bool
	// Tried counts the domains Compact tried to empty (FreeDomains) or
	// simulated (LargestGang).
	Tried int
}

// Compact plans moves, at most cfg.MaxMoves of them and cfg.MaxGPUsMoved
// GPUs moved, towards goal, and writes them to plan. It is greedy (see the
// package doc): the plan is valid move by move, but not proven best. If the
// budget does not reach the goal, Outcome.Reached is false and the plan is
// the best found. s is not changed: the moves are worked out on a clone.
// Errors wrap ErrInvalid.
func (p *Planner) Compact(s *topology.State, goal Goal, cfg Config, plan *Plan) (Outcome, error) {
	if err := cfg.Validate(); err != nil {
		return Outcome{}, err
	}
	t := s.Tree()
	switch {
	case goal.Level < 1 || goal.Level > t.HostLevel():
		return Outcome{}, fmt.Errorf("%w: goal level %d, want 1…%d", ErrInvalid, goal.Level, t.HostLevel())
	case goal.Want < 0:
		return Outcome{}, fmt.Errorf("%w: goal wants %d", ErrInvalid, goal.Want)
	case goal.Kind == LargestGang && (goal.GPUsPerPod < 1 || goal.GPUsPerPod > topology.MaxHostGPUs):
		return Outcome{}, fmt.Errorf("%w: GPUsPerPod %d, want 1…%d", ErrInvalid, goal.GPUsPerPod, topology.MaxHostGPUs)
	case goal.Kind > LargestGang:
		return Outcome{}, fmt.Errorf("%w: unknown goal kind %d", ErrInvalid, goal.Kind)
	}
	plan.reset()
	p.begin(s, cfg)
	defer p.forgetMovers()
	p.c = s.Clone()
	p.moved = p.moved[:0]
	var out Outcome
	if goal.Kind == FreeDomains {
		out = p.freeDomains(goal, plan)
	} else {
		out = p.largestGang(goal, plan)
	}
	plan.seal()
	p.c = nil
	return out, nil
}

// idleCount is the number of entirely free domains of level l in s.
func idleCount(s *topology.State, l topology.Level) int {
	if l == s.Tree().HostLevel() {
		return s.IdleHosts(0)
	}
	return int(s.IdleDomains(l).Count())
}

// domainHosts returns the hosts of domain (or host, at the host level) i of
// level l.
func domainHosts(t *topology.Tree, l topology.Level, i int32) (topology.HostID, topology.HostID) {
	if l == t.HostLevel() {
		return topology.HostID(i), topology.HostID(i) + 1
	}
	return t.Hosts(topology.DomainID(i))
}

// level l's domains as indices: domains [lo, hi), or hosts.
func levelRange(t *topology.Tree, l topology.Level) (int32, int32) {
	if l == t.HostLevel() {
		return 0, int32(t.NumHosts())
	}
	lo, hi := t.LevelDomains(l)
	return int32(lo), int32(hi)
}

// freeDomains empties domains of the goal's level, cheapest first: fewest
// moves, then fewest milli-GPU moved (fewest milli-GPU first when
// MaxGPUsMoved bounds the plan). The costs of every candidate are read from
// the clone up front (jobs per domain; a domain holding a job that may not
// move, a failed or draining host or a nominated GPU is not a candidate) and
// read again when a domain comes up if moves landed in it since. The
// domains chosen are closed to moves at once — those still to empty too, so
// no move lands in a domain about to be emptied — and so are the domains
// free already. A domain whose jobs find no home is given back (its moves
// undone, its hosts reopened) and the next one is chosen. When every job
// lives in one domain, domains are independent and this order frees the
// most domains a budget of moves allows.
func (p *Planner) freeDomains(goal Goal, plan *Plan) Outcome {
	s, c, l := p.s, p.c, goal.Level
	out := Outcome{Before: idleCount(s, l)}
	p.closeIdle(l)
	defer p.openAll()
	p.queueDomains(l)
	tl := freeTally{pending: p.pending[:0]}
	for {
		p.chooseDomains(l, goal.Want, &tl)
		if len(tl.pending) == 0 {
			break
		}
		out.Tried++
		p.emptyChosen(l, plan, &tl)
		if goal.Want > 0 && tl.freed >= goal.Want {
			break
		}
	}
	p.pending = tl.pending[:0]
	out.After = idleCount(c, l)
	out.Reached = goal.Want == 0 || out.After-out.Before >= goal.Want
	return out
}

// freeTally is freeDomains' bookkeeping: the domains freed so far, the
// domains chosen and still to empty, and the moves and GPUs planned (those
// done plus the estimates of the domains chosen).
type freeTally struct {
	freed   int
	pending []costItem
	planned int
	gpus    int64
}

// queueDomains fills the cost queue with the candidate domains of level l:
// not free already, healthy, and holding no job that may not move nor a
// nominated GPU (quickCost), ordered by fewest moves, or by fewest
// milli-GPU first when MaxGPUsMoved bounds the plan.
func (p *Planner) queueDomains(l topology.Level) {
	t := p.t
	lo, hi := levelRange(t, l)
	p.cq.items = p.cq.items[:0]
	for i := lo; i < hi; i++ {
		hlo, hhi := domainHosts(t, l, i)
		if p.idle(l, i) || !p.healthy(l, i, hlo, hhi) {
			continue
		}
		it := costItem{idx: i, used: p.usedMilli(l, i)}
		if p.quickCost(l, &it) {
			p.cq.items = append(p.cq.items, it)
		}
	}
	p.cq.byMilli = p.cfg.MaxGPUsMoved > 0
	heap.Init(&p.cq)
}

// chooseDomains takes domains off the cost queue, cheapest first, while the
// budget and the goal (want domains freed; 0: as many as the budget allows)
// allow, closes their hosts and appends them to tl.pending. A domain whose
// milli-GPU in use changed since its cost was read goes back with its cost
// read again; one over the budget is skipped (or, ordered by moves, ends
// the choosing).
func (p *Planner) chooseDomains(l topology.Level, want int, tl *freeTally) {
	for p.cq.Len() > 0 && tl.planned < p.cfg.MaxMoves && (want == 0 || tl.freed+len(tl.pending) < want) {
		it := heap.Pop(&p.cq).(costItem)
		if used := p.usedMilli(l, it.idx); it.used != used {
			it.used = used
			if p.quickCost(l, &it) {
				heap.Push(&p.cq, it)
			}
			continue
		}
		if tl.planned+it.moves > p.cfg.MaxMoves {
			if !p.cq.byMilli {
				break // ordered by moves: no domain left fits the budget
			}
			continue
		}
		if !p.domainCost(l, &it) || p.cfg.MaxGPUsMoved > 0 && tl.gpus+int64(it.gpus) > p.cfg.MaxGPUsMoved {
			continue
		}
		tl.planned += it.moves
		tl.gpus += int64(it.gpus)
		hlo, hhi := domainHosts(p.t, l, it.idx)
		setRange(p.elig, hlo, hhi, false)
		tl.pending = append(tl.pending, it)
	}
}

// emptyChosen empties the first domain of tl.pending in the clone, moves to
// plan, and counts it freed; if its jobs find no home its hosts are
// reopened. The moves done replace its estimate in tl.
func (p *Planner) emptyChosen(l topology.Level, plan *Plan, tl *freeTally) {
	it := tl.pending[0]
	tl.pending = tl.pending[1:]
	start, gpus := len(plan.Moves), plan.GPUs
	if p.empty(l, it.idx, plan) {
		tl.freed++
	} else {
		hlo, hhi := domainHosts(p.t, l, it.idx)
		setRange(p.elig, hlo, hhi, true)
	}
	// The moves done replace the estimate (a job spanning two chosen
	// domains moves once).
	tl.planned += len(plan.Moves) - start - it.moves
	tl.gpus += int64(plan.GPUs-gpus) - int64(it.gpus)
}

// costItem is a candidate domain: its moves and milli-GPU to move out.
type costItem struct {
	idx   int32
	moves int
	milli int64
	gpus  int   // GPUs of its jobs, once chosen
	used  int64 // milli in use when the cost was read
}

type costQueue struct {
	items   []costItem
	byMilli bool
}

func (q *costQueue) Len() int { return len(q.items) }
func (q *costQueue) Less(i, j int) bool {
	a, b := &q.items[i], &q.items[j]
	x, y := [2]int64{int64(a.moves), a.milli}, [2]int64{int64(b.moves), b.milli}
	if q.byMilli {
		x[0], x[1], y[0], y[1] = x[1], x[0], y[1], y[0]
	}
	switch {
	case x[0] != y[0]:
		return x[0] < y[0]
	case x[1] != y[1]:
		return x[1] < y[1]
	}
	return a.idx < b.idx
}
func (q *costQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *costQueue) Push(x any)    { q.items = append(q.items, x.(costItem)) }
func (q *costQueue) Pop() any {
	x := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return x
}

// quickCost reads the jobs of domain it.idx in the clone from their
// records: false if one may not move or moved already, or a GPU is
// nominated.
func (p *Planner) quickCost(l topology.Level, it *costItem) bool {
	c := p.c
	hlo, hhi := domainHosts(p.t, l, it.idx)
	seen := p.quick[:0]
	defer func() { p.quick = seen }()
	it.moves, it.milli = 0, 0
	for h := hlo; h < hhi; h++ {
		if c.HostNominatedMask(h) != 0 {
			return false
		}
		if !c.HostHasPods(h) {
			continue
		}
		p.hjobs = c.AppendHostJobs(p.hjobs[:0], h)
		for _, j := range p.hjobs {
			if slices.Contains(seen, j) {
				continue
			}
			info, _ := c.JobInfo(j)
			if !info.Movable || !info.Preemptible || slices.Contains(p.moved, j) {
				return false
			}
			seen = append(seen, j)
			it.moves++
			it.milli += c.JobMilliGPU(j)
		}
	}
	return true
}

// idle reports whether domain i of level l is entirely free in the clone.
func (p *Planner) idle(l topology.Level, i int32) bool {
	if l == p.t.HostLevel() {
		return p.c.HostIdle(topology.HostID(i))
	}
	return p.c.DomainIdle(topology.DomainID(i))
}

// healthy reports whether every GPU of the domain is healthy on a healthy
// host: otherwise it can never be entirely free.
func (p *Planner) healthy(l topology.Level, i int32, hlo, hhi topology.HostID) bool {
	s, t := p.s, p.t
	if l == t.HostLevel() {
		h := topology.HostID(i)
		return s.HostHealth(h) == topology.Healthy && s.HostFailedMask(h) == 0
	}
	return s.HealthyGPUs(topology.DomainID(i)) == t.DomainGPUs(topology.DomainID(i))
}

// usedMilli is the milli-GPU in use in domain i of level l, in the clone.
func (p *Planner) usedMilli(l topology.Level, i int32) int64 {
	c, t := p.c, p.t
	if l == t.HostLevel() {
		h := topology.HostID(i)
		used := int64(t.HostGPUCount(h)-popcount(c.HostUnusedMask(h))) * topology.FullGPU
		lo, _ := t.HostGPUs(h)
		for m := ^c.HostUnusedMask(h) & lowBits(t.HostGPUCount(h)); m != 0; m &= m - 1 {
			if milli := c.GPUMilli(lo + topology.GPUID(trailing(m))); milli > 0 {
				used -= int64(milli)
			}
		}
		return used
	}
	d := topology.DomainID(i)
	return int64(c.HealthyGPUs(d)-c.Free(d))*topology.FullGPU - c.SharedMilli(d)
}

// domainCost computes the moves and GPUs that empty domain it.idx in the
// clone; false if it cannot be emptied (a job that may not move or moved
// already, a nominated GPU).
func (p *Planner) domainCost(l topology.Level, it *costItem) bool {
	c := p.c
	hlo, hhi := domainHosts(p.t, l, it.idx)
	jobs := p.jobsBuf[:0]
	for h := hlo; h < hhi; h++ {
		if c.HostNominatedMask(h) != 0 {
			return false
		}
		if c.HostHasPods(h) {
			jobs = c.AppendHostJobs(jobs, h)
		}
	}
	slices.Sort(jobs)
	jobs = slices.Compact(jobs)
	p.jobsBuf = jobs
	it.moves, it.gpus, it.milli = 0, 0, 0
	for _, j := range jobs {
		m := p.moverOf(j)
		if !m.ok || slices.Contains(p.moved, j) {
			return false
		}
		it.moves++
		it.gpus += m.gpus
		it.milli += m.milli
	}
	return true
}

// empty moves every job out of domain i of level l in the clone, largest
// first, appending the moves to plan; if one finds no home it undoes them
// and returns false. The caller has closed the domain's hosts.
func (p *Planner) empty(l topology.Level, i int32, plan *Plan) bool {
	c := p.c
	hlo, hhi := domainHosts(p.t, l, i)
	jobs := p.jobsBuf[:0]
	for h := hlo; h < hhi; h++ {
		if c.HostHasPods(h) {
			jobs = c.AppendHostJobs(jobs, h)
		}
	}
	slices.Sort(jobs)
	jobs = slices.Compact(jobs)
	slices.SortStableFunc(jobs, func(a, b topology.JobID) int { return p.moverOf(b).gpus - p.moverOf(a).gpus })
	p.jobsBuf = jobs
	start := len(plan.Moves)
	for _, j := range jobs {
		if !p.moveInClone(j, plan) {
			p.undo(plan, start)
			return false
		}
	}
	return p.idle(l, i)
}

// moveInClone re-places job j outside the closed hosts, applies the move to
// the clone and appends it to plan.
func (p *Planner) moveInClone(j topology.JobID, plan *Plan) bool {
	m := p.moverOf(j)
	if !m.ok || slices.Contains(p.moved, j) {
		return false
	}
	m.req.Eligible = p.elig
	p.goneBuf = append(p.goneBuf[:0], j)
	p.work++
	ok, _, err := p.v.PlaceWithout(p.c, &m.req, 0, p.goneBuf, &p.tmp)
	if err != nil || !ok {
		return false
	}
	p.ops = append(p.ops[:0], topology.MoveJob(j, p.tmp.Pods...))
	if err := p.c.Apply(topology.Delta{Ops: p.ops}); err != nil {
		return false // the solver's plan should apply; treat as no home
	}
	plan.add(j, p.tmp.Pods, m.gpus, m.milli)
	p.moved = append(p.moved, j)
	return true
}

// undo reverts the clone's moves plan.Moves[start:], last first, and drops
// them from plan.
func (p *Planner) undo(plan *Plan, start int) {
	for k := len(plan.Moves) - 1; k >= start; k-- {
		mv := plan.Moves[k]
		m := p.moverOf(mv.Job)
		p.ops = append(p.ops[:0], topology.MoveJob(mv.Job, m.pods...))
		if err := p.c.Apply(topology.Delta{Ops: p.ops}); err != nil {
			panic(fmt.Sprintf("defrag: undoing move of job %d: %v", mv.Job, err))
		}
		plan.GPUs -= mv.GPUs
		plan.Milli -= mv.Milli
		p.moved = p.moved[:len(p.moved)-1]
	}
	plan.Moves = plan.Moves[:start]
	off := 0
	for _, mv := range plan.Moves {
		off += len(mv.Pods)
	}
	plan.pods = plan.pods[:off]
}

// closeIdle closes the hosts of the domains of level l that are entirely
// free now: moves must keep them free.
func (p *Planner) closeIdle(l topology.Level) {
	s, t := p.s, p.t
	if l == t.HostLevel() {
		idle := s.IdleHostWords()
		for i := range p.elig {
			p.elig[i] = ^idle[i]
		}
		return
	}
	lo, _ := t.LevelDomains(l)
	bs := s.IdleDomains(l)
	for i, ok := bs.NextSet(0); ok; i, ok = bs.NextSet(i + 1) {
		hlo, hhi := t.Hosts(lo + topology.DomainID(i))
		setRange(p.elig, hlo, hhi, false)
	}
}

// openAll reopens every host (the all-ones eligible bitset between calls).
func (p *Planner) openAll() {
	for i := range p.elig {
		p.elig[i] = ^uint64(0)
	}
}
