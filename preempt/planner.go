package preempt

import (
	"fmt"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Config bounds the search. The zero value means the defaults; a field ≤ 0
// takes its default.
type Config struct {
	// ExactVictims: a scope whose candidates, beyond those every answer in
	// it needs, number at most this is searched over all their subsets in
	// cost order; a larger one greedily (Result.Exact then says whether the
	// bound proves the answer anyway). Default 14.
	ExactVictims int
	// MaxSubsets bounds the subsets tried in one scope. Default 1<<15.
	MaxSubsets int
	// MaxScopes bounds the scopes (domains of the required level, or hosts)
	// examined once an answer exists. Default 1<<14.
	MaxScopes int
	// MaxTests bounds the placement calls made once an answer exists (the
	// ones that check an answer are always made). Default 1024.
	MaxTests int
	// NoNomination leaves Result.Nomination and Result.Displaced empty
	// (and so Result.Delta), for a caller that nominates the plan's GPUs
	// itself, as the blink engine does: the plan's GPUs are not read once
	// more for it (thousands for a gang of whole hosts).
	NoNomination bool
}

func (c *Config) withDefaults() Config {
	d := *c
	if d.ExactVictims <= 0 {
		d.ExactVictims = 14
	}
	d.ExactVictims = min(d.ExactVictims, 24)
	if d.MaxSubsets <= 0 {
		d.MaxSubsets = 1 << 15
	}
	if d.MaxScopes <= 0 {
		d.MaxScopes = 1 << 14
	}
	if d.MaxTests <= 0 {
		d.MaxTests = 1024
	}
	return d
}

// Where the request's pods can go, which decides the scopes searched.
const (
	hostMode   = iota // one host: one pod, or the host level required
	domainMode        // one domain of the required level
	rootMode          // anywhere: several pods, no required level
)

// setInfo is one pod set's demand (plus, for several sets, a last pseudo
// set of one whole GPU per pod counting all their whole GPUs together).
type setInfo struct{ pods, gpus, milli, cpu, mem int64 }

// Planner finds preemption plans. It holds scratch buffers reused across
// calls, so a warmed-up Planner allocates little; it is not safe for
// concurrent use. The State is only read.
type Planner struct {
	// Config bounds the search; change it between calls, not during one.
	Config Config
	cfg    Config

	solver  placement.Solver
	scratch placement.Plan

	s    *topology.State
	t    *topology.Tree
	r    *placement.Request
	hreq placement.Request // r restricted to one host (hostMode)
	helg []uint64          // its eligible-host words
	hbit topology.HostID   // the bit set in helg, or -1
	pb   int               // bucketOf(r.Priority)

	sets       []setInfo
	primary    int // the set with most GPUs
	modelExact bool
	needMilli  int64
	modelOK    []bool
	anyModel   bool
	eligible   []uint64
	extras     topology.Admitted // nominated GPUs the request may take

	mode      int
	below     int32 // modeBelow's priority edge
	leafLevel topology.Level

	// The State's compact job view (topology jobs_compact.go), per job id.
	prios  []int32
	npods  []int32
	millis []uint64
	preW   []uint64 // bit j: live and preemptible

	// Per job id, stamped per model (candEp; between builds, per domain
	// the credit bound reads) or per marking (markEp).
	candEpoch uint32
	candEp    []uint32
	candIdx   []int32
	markEpoch uint32
	markEp    []uint32

	hpBuf   []topology.HostPod
	jgBuf   []topology.JobGPUs // creditHost's pods
	idBuf   []topology.JobID
	gone    []topology.JobID
	podBuf  []topology.Pod
	order   []int32
	keys    []int64
	flags   []bool
	m2caps  []int64
	sortBuf []int64
	leafBuf []leafScope
	prioBuf []int32
	rkeys   []restKey
	radixA  []radixKey
	radixB  []radixKey
	// A job-first build (modeljobs.go): candLinks chains the candidate pods
	// in podBuf per host, hostAcc is what it gathers per host (stamped with
	// accEpoch), scanJobs the candidate jobs in the order it met them and
	// scanCand their model candidates (-1: none yet).
	candLinks []podLink
	hostAcc   []hostAcc
	accEpoch  uint32
	scanJobs  []scanJob
	scanCand  []int32
	// The top-down construction (topdown.go): per host, stamped with tdEp
	// (and tdSeen, per loss counted); per collected job, whether it is in V;
	// the collected jobs; where the pods of each fetched one are in podBuf
	// (tdSpan, per collected job); tdFetch's and tdByID's scratch.
	tdAcc     []tdHost
	tdEp      uint32
	tdSeen    uint32
	tdNom     bool      // the State has nominations (none the request may take)
	tdPlain   bool      // the State has no nomination, failed GPU or unhealthy host
	tdPer     [65]int32 // per count of GPUs, the request's pods they hold
	tdGain    []int16   // per pod of podBuf evicted alone on its host: what it gains (tdSole), else -1
	tdIn      []bool
	tdJobs    []tdJob
	tdSpan    [][2]int32
	tdStarts  []int32
	tdMarks   []uint64
	tdFirst   []int32
	tdWords   []uint64       // the preemptible jobs tdCollect reads (State.PreemptibleSizeWords)
	tdFetched int            // candidates tdEvict fetched
	tdUnread  int            // candidates in V of whole hosts, their pods not read (tdWholeHosts)
	tdRead    []int32        // tdToRead's scratch
	tdWhole   []bool         // per collected job fetched or not: of whole hosts (tdToRead)
	vPods     []topology.Pod // tdVictimPods' copy
	// The best answer's victims' pods, when the top-down answer read them
	// (bestPodsOK): the final placement need not read them again.
	bestPods    []topology.Pod
	bestPodsOK  bool
	bestTopDown bool // the best answer is the top-down one (its cost counted as it was built)
	// milliHist counts GPUs by the milli freeing them costs (milliFloor).
	milliHist []int64
	// gpuBits is gpusByBitmap's bitmap of the cluster's GPUs.
	gpuBits []uint64
	// hostOrder is nominate's pods in order of host (byHost), hostKeys
	// their sort keys.
	hostOrder []int32
	hostKeys  []uint64

	m, m2 model
	ex    exSearch
	heap  entryHeap

	// The search's state.
	found     bool
	best      Cost
	bestV     []topology.JobID // sorted
	bestDom   topology.DomainID
	bestHost  topology.HostID
	bestModel bool // p.m still models the answer's scope
	// plan is the caller's Result.Plan during a search; bestPlaced: the
	// best answer's placement is in it already (single's).
	plan       *placement.Plan
	bestPlaced bool
	// irreducible: the best answer was checked irreducible already (the
	// top-down answer's proof); verify has nothing to do.
	irreducible bool
	bound       Cost               // the least bound of scopes not searched exactly
	scopes      int                // leaf scopes examined since the first answer
	modelled    int                // leaf scopes modelled
	soloReady   bool               // solo counts this search's victims (solo.go)
	soloMin     [soloBuckets]int64 // per bucket, the least milli of its jobs (solo.go)
	soloMax     [soloBuckets]int64 // and the most (-1: none)
	tests       int                // placement calls
	testsLate   int                // placement calls since the first answer
	stopped     bool               // a budget ran out
	fallbacks   int                // model/placement disagreements (a bug: tests check it stays 0)

	// The slot bound (slots.go): whether the request allows it, the
	// candidates' summary, and the hosts of the leaves searched so far.
	// slotForce, set by tests only: > 0 makes the summary at once, < 0
	// never.
	slotOK       bool
	slots        slotSummary
	leafHosts    int64
	creditLeaves int // the leaves the credit bound read (for solo.go)
	slotForce    int
	// The credit bound (credit.go): whether the request allows it, its
	// scratch, creditForce, set by tests only (< 0: never; otherwise on
	// every leaf), and singles, the leaves it answered alone (search.go's
	// single) in the last Plan.
	creditOK    bool
	cred        creditScratch
	creditForce int
	singles     int
	// noSoleRuns makes the credit bound read every host's pods, never a
	// run of sole-pod hosts at once (credit_whole.go): set by tests that
	// compare the two.
	noSoleRuns bool
	soleRuns   int // the runs it read at once (tests)

	// unfolded models dead hosts like any other (modelhost.go): set by
	// tests only, to compare folding with its absence.
	unfolded bool
	// fetch chooses fetchPods' walk: 0 by the candidates' share of the
	// pods, 1 the candidates' jobs, 2 every job (set by tests only).
	fetch int
	// noTopDown turns the top-down answer (topdown.go) off: set by tests
	// only, to compare it with the model's search.
	noTopDown bool
	// noSolo turns the single-victim bound (solo.go) off: set by tests
	// that compare answers with and without it.
	noSolo bool
	// noLone turns the lone-victim answer (lone.go) off: set by tests that
	// compare answers with and without it.
	noLone bool
	// loneTried: this search tried the lone-victim answer for a gang
	// required in a domain or on one host (loneLeaf); loneNow, set by tests only, makes
	// it try at the first leaf.
	loneTried, loneNow bool
	// noRuns makes the greedy drop its candidates one at a time instead of
	// in runs (dropRuns): set by tests that compare the two.
	noRuns bool
	low    []int64    // dropModel's bounds on the totals (scratch)
	lost   []int64    // and the capacity a drop may lose (scratch)
	lones  int        // answers the lone-victim answer gave (tests)
	lone   []loneCand // its candidates (scratch)
	// lonePods and loneJobs: scratch of opensHost
	lonePods []topology.Pod
	loneJobs []topology.JobID
	lone2    []loneCand // and in bucket order
	loneW    []uint64   // its candidate jobs (scratch)
	// Answers the top-down construction proved, and of those the ones it
	// pruned (tests read them).
	topDowns, topDownsPruned int

	lastJob  topology.JobID // hostMayBeat's last one-job host, and its verdict
	lastBeat bool

	// For the no-fit reason: the scope examined that came closest.
	near      Reason
	nearScore int64
}

// Plan finds the cheapest irreducible set of jobs to evict so that request r
// fits in s, the placement it gets once they are gone, and the nomination
// reserving it; ready and expiry are the nomination's (abstract) times. It
// writes the answer to out (reusing its buffers) and returns true, or false
// and a Reason when no victim set makes r fit. Errors (wrapping ErrInvalid)
// are for malformed requests and a request whose job is already running; an
// error wrapping ErrInternal means the Planner's model and placement
// disagreed. s is never changed.
//
// Victims are whole jobs that are preemptible and of priority strictly below
// r.Priority; if r fits as the cluster is, there are none and out.Plan is
// Place's answer. See the package documentation for the cost, the search and
// its guarantees.
func (p *Planner) Plan(s *topology.State, r *placement.Request, ready, expiry int64, out *Result) (bool, Reason, error) {
	out.reset()
	if err := validate(s, r); err != nil {
		return false, Reason{}, err
	}
	p.begin(s, r)
	ok, why, err := p.solver.Place(s, r, &out.Plan)
	if err != nil {
		return false, Reason{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if ok {
		out.Cost = Cost{Priority: NoPriority}
		out.Bound, out.Exact, out.Scope = out.Cost, true, out.Plan.Domain
		return true, Reason{}, nil
	}
	if why.Code.Permanent() {
		return false, Reason{Code: Unplaceable, Host: -1, Request: r.Priority, Place: why}, nil
	}
	found, err := p.searchAndPlace(out)
	if err != nil {
		return false, Reason{}, err
	}
	if !found {
		out.Tests, out.Scopes = p.tests, p.modelled
		return false, p.noFit(), nil
	}
	p.answer(out, ready, expiry)
	return true, Reason{}, nil
}

// validate checks request r against s: well formed, and its job not
// running already (errors wrap ErrInvalid).
func validate(s *topology.State, r *placement.Request) error {
	if err := r.Validate(s.Tree()); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if s.HasJob(r.Job) {
		return fmt.Errorf("%w: job %d is already running", ErrInvalid, r.Job)
	}
	return nil
}

// searchAndPlace searches for the best answer and places the request with
// its victims gone, into out.Plan. It returns false if no victim set makes
// the request fit. If placement refuses an answer of the exact model, it
// searches once more asking placement everything; a second refusal is an
// error wrapping ErrInternal.
func (p *Planner) searchAndPlace(out *Result) (bool, error) {
	p.plan = &out.Plan
	defer func() { p.plan = nil }()
	for attempt := 0; ; attempt++ {
		p.search()
		if !p.found {
			return false, nil
		}
		p.verify()
		if p.placeBest(out) {
			return true, nil
		}
		if attempt > 0 || !p.modelExact {
			return false, fmt.Errorf("%w: victims %v do not make the request fit in %s", ErrInternal, p.bestV, p.s.Tree().DomainPath(p.bestDom))
		}
		p.fallbacks++
		p.modelExact = false // search again, asking placement everything
	}
}

// placeBest places the request in the best answer's scope with its victims
// gone, into out.Plan, and reports whether it fits.
func (p *Planner) placeBest(out *Result) bool {
	req := p.r
	if p.bestHost >= 0 {
		req = p.hostReq(p.bestHost)
	}
	p.tests++
	if p.bestPlaced {
		return true // single placed the request with these victims gone
	}
	var ok bool
	var err error
	if p.bestPodsOK { // the top-down answer read the victims' pods already
		ok, _, err = p.solver.PlaceWithoutPods(p.s, req, p.bestDom, p.bestV, p.bestPods, &out.Plan)
	} else {
		ok, _, err = p.solver.PlaceWithout(p.s, req, p.bestDom, p.bestV, &out.Plan)
	}
	return err == nil && ok
}

// answer writes the best answer to out (its placement is there already):
// victims, cost, bound, scope, the search's counts, and the nomination.
func (p *Planner) answer(out *Result, ready, expiry int64) {
	out.Victims = append(out.Victims, p.bestV...)
	out.Cost = p.best // the top-down answer's, counted from its candidates
	if !p.bestTopDown {
		out.Cost = p.costOf(p.bestV)
	}
	out.Bound = p.best
	if p.bound.Less(out.Bound) {
		out.Bound = p.bound
	}
	out.Exact = !out.Bound.Less(out.Cost)
	out.Scope = p.bestDom
	out.Tests, out.Scopes = p.tests, p.modelled
	if !p.cfg.NoNomination {
		p.nominate(out, ready, expiry)
	}
}

// begin sets up the per-call state: the request's demand, models,
// eligibility, admitted nominations, the search mode, and the job caches.
func (p *Planner) begin(s *topology.State, r *placement.Request) {
	p.cfg = p.Config.withDefaults()
	t := s.Tree()
	p.Prepare(t)
	p.s, p.r = s, r
	p.pb = bucketOf(r.Priority)
	p.hreq = *r
	p.hreq.Restriction = nil // its Eligible becomes one host's bitset (hostReq)
	p.eligible = r.Eligible

	pods := p.demand(r)
	p.allowModels(t, r)
	p.collectExtras()
	p.setMode(t, r, pods)
	p.jobCaches(s)
	p.fallbacks, p.singles = 0, 0
	p.slotOK = p.slotAllowed()
	p.creditOK = p.slotOK && p.creditForce >= 0
}

// demand reads the request's pod sets into p.sets (with the pseudo set of
// all whole GPUs, for several sets), the milli-GPUs needed, the primary
// set and whether the model is exact; it returns the request's pods.
func (p *Planner) demand(r *placement.Request) int64 {
	p.sets = p.sets[:0]
	p.needMilli = 0
	whole, pods, bestG := int64(0), int64(0), int64(-1)
	for i := range r.Sets {
		set := &r.Sets[i]
		si := setInfo{pods: int64(set.Pods), gpus: int64(set.GPUs), milli: int64(set.Milli),
			cpu: int64(set.CPUMilli), mem: int64(set.MemoryMiB)}
		if si.milli > 0 {
			si.gpus = 0
			p.needMilli += si.pods * si.milli
		} else {
			whole += si.pods * si.gpus
		}
		pods += si.pods
		if g := si.pods * max(si.gpus, 1); g > bestG {
			p.primary, bestG = i, g
		}
		p.sets = append(p.sets, si)
	}
	p.needMilli += 1000 * whole
	if len(r.Sets) > 1 && whole > 0 {
		p.sets = append(p.sets, setInfo{pods: whole, gpus: 1})
	}
	p.modelExact = len(r.Sets) == 1 && r.Sets[0].SliceSize <= 1
	return pods
}

// allowModels marks in p.modelOK the GPU models of t the request accepts
// (all when it names none).
func (p *Planner) allowModels(t *topology.Tree, r *placement.Request) {
	p.modelOK = resize(p.modelOK, t.NumModels())
	p.anyModel = len(r.Models) == 0
	for m := range p.modelOK {
		p.modelOK[m] = p.anyModel
	}
	for _, m := range r.Models {
		p.modelOK[m] = true
	}
}

// setMode chooses the search mode and its leaf level from the request's
// required level and its pods.
func (p *Planner) setMode(t *topology.Tree, r *placement.Request, pods int64) {
	hl := t.HostLevel()
	switch {
	case r.Required == hl || pods == 1:
		p.mode, p.leafLevel = hostMode, hl-1
	case r.Required > 0:
		p.mode, p.leafLevel = domainMode, r.Required
	default:
		p.mode, p.leafLevel = rootMode, 0
	}
}

// jobCaches sizes the per-job stamps for s's job ids (with room to grow;
// resetting the epochs when they are new) and takes s's compact job view.
func (p *Planner) jobCaches(s *topology.State) {
	if n := int(s.JobIDBound()); len(p.candEp) < n {
		n += n / 4 // room for the job table to grow, not a copy for every new job id
		p.candEp = make([]uint32, n)
		p.candIdx = make([]int32, n)
		p.markEp = make([]uint32, n)
		p.candEpoch, p.markEpoch = 0, 0
	}
	p.prios, p.npods, p.millis, p.preW = s.JobPriorities(), s.JobPodCounts(), s.JobMilliGPUs(), s.PreemptibleJobWords()
}

// collectExtras collects the nominated GPUs the request may take (the
// topology package's nomination rule).
func (p *Planner) collectExtras() {
	r := p.r
	info := topology.Job{Priority: r.Priority, HasEnd: r.HasEnd, End: r.End}
	p.extras.Collect(p.s, r.Job, &info)
}

// extraIn counts the GPUs of d nominated for jobs the request may displace.
func (p *Planner) extraIn(d topology.DomainID) int64 { return p.extras.GPUs(p.t.Hosts(d)) }

// hostReq is the request restricted to host h (its eligible hosts, if any,
// intersected with h), for placement calls of one-host scopes.
func (p *Planner) hostReq(h topology.HostID) *placement.Request {
	if p.hbit >= 0 {
		p.helg[p.hbit>>6] = 0
	}
	p.hbit = h
	p.helg[h>>6] = 1 << (uint(h) & 63)
	if e := p.r.Eligible; e != nil {
		p.helg[h>>6] &= e[h>>6]
	}
	p.hreq.Eligible = p.helg
	return &p.hreq
}

// info returns job j's priority and preemptibility (j live). O(1): the
// State's compact job view.
func (p *Planner) info(j topology.JobID) (prio int32, pre bool) {
	return p.prios[j], p.preW[j>>6]&(1<<(uint(j)&63)) != 0
}

// milli is the milli-GPU job j holds (all its pods).
func (p *Planner) milli(j topology.JobID) int64 { return int64(p.millis[j]) }

// isCand reports whether job j is a candidate under mode.
func (p *Planner) isCand(j topology.JobID, mode int) bool {
	switch mode {
	case modeAll:
		return true
	case modeMarked:
		return p.markEp[j] == p.markEpoch
	case modeBelow:
		prio, pre := p.info(j)
		return pre && prio < p.r.Priority && prio < p.below
	}
	prio, pre := p.info(j)
	return pre && prio < p.r.Priority
}

// markSet marks the jobs of v for modeMarked.
func (p *Planner) markSet(v []topology.JobID) {
	p.markEpoch++
	if p.markEpoch == 0 {
		clear(p.markEp)
		p.markEpoch = 1
	}
	for _, j := range v {
		p.markEp[j] = p.markEpoch
	}
}

// costOf is the cost of victim set v.
func (p *Planner) costOf(v []topology.JobID) Cost {
	c := Cost{Priority: NoPriority, Victims: len(v)}
	for _, j := range v {
		prio, _ := p.info(j)
		c.Priority = max(c.Priority, prio)
		c.Milli += p.milli(j)
	}
	return c
}
