package defrag

import (
	"fmt"
	"math"
	"slices"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Planner plans moves. It holds scratch buffers reused across calls; it is
// not safe for concurrent use (use one per goroutine). The State is only
// read.
type Planner struct {
	v      placement.Solver
	tmp    placement.Plan
	reqTmp placement.Plan
	s      *topology.State
	t      *topology.Tree
	cfg    Config
	r      *placement.Request
	rq     placement.Request // r, restricted to one host for host targets

	jobIdx map[topology.JobID]int32
	movers []*mover
	arena  []topology.Pod

	elig     []uint64 // every host but those closed to the current move
	reqElig  []uint64 // one host (host-level targets)
	eligTree *topology.Tree
	closed   []topology.HostID

	seq     []seqMove // the moves being built
	seqPods []topology.Pod
	seqJobs []topology.JobID
	fitBuf  []topology.Pod

	best     bestPlan
	tg       target
	heap     []target
	cands    []cand
	inD      []hostGPUs
	subs     []subset
	subIdx   []int16
	fitting  []subset
	helpers  []topology.JobID
	helpDone bool // helper pool computed for this target
	helpAll  bool // it holds every movable job outside the target

	hpos      int
	truncated bool
	most      int64 // GPUs the MaxMoves largest movable jobs hold
	mostAll   int64 // GPUs all the movable jobs hold
	// extras are the GPUs nominated for jobs the request may displace: not
	// free, yet placement may give them to the request, so every bound that
	// counts free GPUs (the targets' keys, the GPUs a target misses, its pod
	// capacity) adds them, and stays a bound when nominations exist.
	extras   topology.Admitted
	short    bool // a domain was left out for missing more than that
	idx      freeIndex
	prefix   []int
	pick     []int
	lbWhole  int64
	baseCap  int64
	topUB    []int64 // topUB[j]: the j largest podUB of the candidates, summed
	ubBuf    []int64
	jobsBuf  []topology.JobID
	entries  []uint64 // packed job pods (packJobPod)
	hjobs    []topology.JobID
	goneBuf  []topology.JobID
	moveGone []topology.JobID
	hostPods []topology.HostPod
	mergeBuf []hostGPUs

	levelMax  []int64
	levelTree *topology.Tree

	small    bool // few hosts: destinations are enumerated exhaustively
	all      bool // rehome looks for the cheapest helpers, not the first
	recorded bool // rehome recorded a plan
	memo     map[string]struct{}
	keyBuf   []byte
	order    []int
	dests    []destBuf
	vhs      []vhost
	vhHost   []topology.HostID

	// compaction
	c        *topology.State // the clone moves are applied to
	moved    []topology.JobID
	cq       costQueue
	ops      []topology.Op
	gcands   []gangCand
	ghosts   []gangHost
	gjobs    []topology.JobID
	pending  []costItem
	quick    []topology.JobID
	keep     []Move
	keepPods []topology.Pod

	need   needs
	work   int
	limit  bool // a search limit cut the search short
	budget int  // moves allowed
}

// seqMove is a planned move: its job and its new pods in seqPods.
type seqMove struct {
	job    topology.JobID
	off, n int
}

type bestPlan struct {
	found  bool
	moves  int
	gpus   int
	milli  int64
	target target
	seq    []seqMove
	pods   []topology.Pod
}

// target is a domain (or a host) the request could be placed in.
type target struct {
	key      int64 // GPUs missing: a lower bound on the GPUs to move
	scope    topology.DomainID
	host     topology.HostID // ≥ 0 for host-level targets
	hlo, hhi topology.HostID
}

// cand is a movable job with pods in the target.
type cand struct {
	job      topology.JobID
	gpusInD  int // GPUs of its pods inside the target
	gpus     int
	milli    int64
	off, n   int // its per-host GPUs inside the target, in Planner.inD
	position int
	podUB    int64 // bounds the pods of the primary shape its moving out adds (podBound)
}

type hostGPUs struct {
	h    topology.HostID
	gpus int
}

// subset is a set of candidates (indices in subIdx[off:off+k]) with its cost.
type subset struct {
	off, k int
	gpus   int
	milli  int64
}

// needs summarises the request.
type needs struct {
	whole    int64 // whole GPUs
	frac     int64 // milli of fractional pods
	primary  int   // GPUs per pod of the set with the most whole GPUs per pod
	podsPrim int64 // its pods
}

// MakeRoom plans the fewest moves (then the fewest GPUs moved) after which
// request r fits, at most cfg.MaxMoves of them, and writes the plan
// (with the request's placement after the moves) to plan. The result says
// whether the request fits, and if not why; errors wrap ErrInvalid (a bad
// Config) or placement.ErrInvalid (a malformed request). The model — target
// domains, which jobs move, where to — is in the package doc. s is not
// changed.
func (p *Planner) MakeRoom(s *topology.State, r *placement.Request, cfg Config, plan *Plan) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	t := s.Tree()
	if err := r.Validate(t); err != nil {
		return Result{}, err
	}
	plan.reset()
	p.begin(s, cfg)
	p.r = r
	defer p.forgetMovers()

	res := Result{}
	reason := Reason{Code: Unmovable, Moves: cfg.MaxMoves, Level: r.Required}
	level := p.targetLevel(r)
	p.summarise(r)
	// A plain placement first, unless the targets prove it fails: for a
	// request with a required level, every domain of that level is a target,
	// and a smallest lower bound above 0 means none fits as it is.
	placed := false
	if r.Required <= 0 || cfg.MaxMoves == 0 || level <= 0 {
		if done, err := p.placeAsIs(plan, &reason, &res); done || err != nil {
			return res, err
		}
		placed = true
	}
	if cfg.MaxMoves == 0 {
		return Result{Exact: true, Reason: reason, Work: 1}, nil
	}
	reason.Level = level
	reason.Code = NoTarget
	if level <= 0 {
		return Result{Exact: true, Reason: reason, Work: 1}, nil
	}
	return p.searchTargets(level, placed, plan, reason)
}

// searchTargets selects the target domains of level and examines them,
// fewest GPUs missing first, then writes the best plan found to plan, or
// says why there is none. placed: the request was tried as the cluster is
// already; if not, it is tried when the targets do not rule it out.
func (p *Planner) searchTargets(level topology.Level, placed bool, plan *Plan, reason Reason) (Result, error) {
	res := Result{}
	p.budget = p.cfg.MaxMoves
	p.most, p.mostAll, p.short = p.s.MovableGPUsBound(p.cfg.MaxMoves), p.s.MovableGPUsBound(math.MaxInt), false
	p.selectTargets(level)
	if !placed && (len(p.heap) == 0 || p.heap[0].key == 0) {
		if done, err := p.placeAsIs(plan, &reason, &res); done || err != nil {
			return res, err
		}
		placed = true
	}
	examined, possible := p.examineTargets()
	res.Domains, res.Work = examined, p.work
	if !p.best.found {
		return p.noPlan(placed, possible, plan, reason, res)
	}
	if err := p.writePlan(plan); err != nil {
		return Result{}, err
	}
	res.Fits, res.Exact = true, !p.limit
	return res, nil
}

// examineTargets examines the targets in p.heap from p.hpos on until no
// later one can beat the best plan (one move of fewer GPUs than its lower
// bound) or the work runs out, and sets p.limit if the search was cut
// short. It returns the targets examined, and possible: one of them could
// hold the request.
func (p *Planner) examineTargets() (examined int, possible bool) {
	proven := false
	for ; p.hpos < len(p.heap); p.hpos++ {
		tg := p.heap[p.hpos]
		if p.best.found && p.best.moves == 1 && tg.key >= int64(p.best.gpus) {
			proven = true // no later target beats one move of best.gpus GPUs
			break
		}
		if p.work >= p.cfg.MaxWork {
			p.limit = true
			break
		}
		examined++
		if p.examine(tg) {
			possible = true
		}
	}
	if p.truncated && !proven && !(p.best.found && p.best.moves == 1 && p.heap[len(p.heap)-1].key >= int64(p.best.gpus)) {
		p.limit = true
	}
	return examined, possible
}

// noPlan is MakeRoom's answer when no target gave a plan: the request as
// the cluster is, if not tried yet (placed false) and it fits, else res
// with the reason it does not fit.
func (p *Planner) noPlan(placed, possible bool, plan *Plan, reason Reason, res Result) (Result, error) {
	if !placed {
		if done, err := p.placeAsIs(plan, &reason, &res); done || err != nil {
			return res, err // cannot fit: the lower bounds said so
		}
	}
	reason.Code = NoTarget
	if possible || p.short || p.limit {
		reason.Code = NoPlan
	}
	res.Reason, res.Exact = reason, !p.limit
	res.Work = p.work // placeAsIs counts as work
	return res, nil
}

// placeAsIs tries the request as the cluster is; done when it fits (res
// then says so), else reason.Place says why.
func (p *Planner) placeAsIs(plan *Plan, reason *Reason, res *Result) (done bool, err error) {
	p.work++
	ok, why, err := p.v.Place(p.s, p.r, &plan.Request)
	if err != nil {
		return true, err
	}
	if ok {
		plan.Target, plan.TargetHost = plan.Request.Domain, plan.Request.Host
		*res = Result{Fits: true, Exact: true, Work: p.work}
		return true, nil
	}
	plan.Request.Pods = plan.Request.Pods[:0]
	reason.Place = why
	return false, nil
}

// begin resets the per-call state for s.
func (p *Planner) begin(s *topology.State, cfg Config) {
	p.s, p.t, p.cfg = s, s.Tree(), cfg
	if p.jobIdx == nil {
		p.jobIdx = map[topology.JobID]int32{}
		p.memo = map[string]struct{}{}
	}
	p.Prepare(p.t)
	p.best.found = false
	p.best.seq, p.best.pods = p.best.seq[:0], p.best.pods[:0]
	p.seq, p.seqPods, p.seqJobs = p.seq[:0], p.seqPods[:0], p.seqJobs[:0]
	p.work, p.limit = 0, false
	p.heap = p.heap[:0]
}

// targetLevel is the level of the domains the request may be placed in: its
// required level, or the deepest level (hosts included) whose largest domain
// has as many GPUs as the request. A request of CPU-only pods targets a host
// when it has one pod, else a domain of the first named level.
func (p *Planner) targetLevel(r *placement.Request) topology.Level {
	if r.Required > 0 {
		return r.Required
	}
	t := p.t
	hl := t.HostLevel()
	var need, pods int64
	for _, set := range r.Sets {
		pods += int64(set.Pods)
		if set.Milli > 0 {
			need += (int64(set.Pods)*int64(set.Milli) + topology.FullGPU - 1) / topology.FullGPU
		} else {
			need += int64(set.Pods) * int64(set.GPUs)
		}
	}
	if need == 0 {
		if pods == 1 || hl == 1 {
			return hl
		}
		return 1
	}
	if int64(t.MaxHostGPUs()) >= need {
		return hl
	}
	p.levelSizes()
	for l := hl - 1; l >= 1; l-- {
		if p.levelMax[l] >= need {
			return l
		}
	}
	return 0
}

// levelSizes computes, once per tree, the GPUs of the largest domain of
// each level.
func (p *Planner) levelSizes() {
	if p.levelTree == p.t {
		return
	}
	t := p.t
	p.levelMax = make([]int64, t.HostLevel())
	for l := topology.Level(0); l < t.HostLevel(); l++ {
		lo, hi := t.LevelDomains(l)
		for d := lo; d < hi; d++ {
			p.levelMax[l] = max(p.levelMax[l], int64(t.DomainGPUs(d)))
		}
	}
	p.levelTree = p.t
}

// summarise fills p.need from the request, and p.extras with the GPUs
// nominated for jobs it may displace.
func (p *Planner) summarise(r *placement.Request) {
	info := topology.Job{Priority: r.Priority, HasEnd: r.HasEnd, End: r.End}
	p.extras.Collect(p.s, r.Job, &info)
	var n needs
	for _, set := range r.Sets {
		switch {
		case set.Milli > 0:
			n.frac += int64(set.Pods) * int64(set.Milli)
		case set.GPUs > 0:
			n.whole += int64(set.Pods) * int64(set.GPUs)
			if int(set.GPUs) > n.primary {
				n.primary, n.podsPrim = int(set.GPUs), int64(set.Pods)
			}
		}
	}
	p.need = n
}

// writePlan turns the best plan into plan: the moves, then the request's
// placement after them.
func (p *Planner) writePlan(plan *Plan) error {
	b := &p.best
	gone := p.goneBuf[:0]
	for _, mv := range b.seq {
		m := p.moverOf(mv.job)
		plan.add(mv.job, b.pods[mv.off:mv.off+mv.n], m.gpus, m.milli)
		gone = append(gone, mv.job)
	}
	plan.seal()
	slices.Sort(gone)
	p.goneBuf = gone
	plan.Target, plan.TargetHost = b.target.scope, b.target.host
	rq := p.requestFor(b.target)
	ok, why, err := p.v.PlaceWithout(p.s, rq, b.target.scope, gone, &plan.Request)
	if err != nil || !ok {
		return fmt.Errorf("defrag: internal error: the request no longer fits its target: %v %s", err, why.Format(p.t))
	}
	if b.target.host >= 0 {
		plan.Request.Host = b.target.host
	}
	return nil
}

// requestFor is the request restricted to target tg.
func (p *Planner) requestFor(tg target) *placement.Request {
	if tg.host < 0 {
		return p.r
	}
	p.rq = *p.r
	p.rq.Restriction = nil // its Eligible becomes one host's bitset
	clear(p.reqElig)
	p.reqElig[tg.host>>6] = 1 << (uint(tg.host) & 63)
	p.rq.Eligible = p.reqElig
	return &p.rq
}
