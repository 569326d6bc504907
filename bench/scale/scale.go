package scale

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/bench"
	"github.com/blinksched/blink/topology"
)

// Config describes a run. The zero values of Load, Events, Patience and
// Shape take the defaults noted on each field (Config.withDefaults).
type Config struct {
	// Shape is the cluster shape, "nvl72" (default) or "hgx" (bench.Shapes).
	Shape string
	// GPUs is the nominal size, one of bench.Sizes ("1M" by default).
	GPUs string
	// Load is the fill's target load, 0 < Load < 1 (default 0.9). The
	// cluster is filled by bench.Loaded with bench.DefaultSeed, so runs of
	// every Seed start from the same cluster.
	Load float64
	// Events is the number of arrivals and departures (default 1000).
	Events int
	// Seed seeds the event stream.
	Seed uint64
	// Patience: a job still pending this many events after it arrived (or
	// was evicted) is cancelled, like a user giving up; it bounds the queue.
	// Default 100.
	Patience int
	// Progress, if not nil, is called every few hundred events with the
	// events done and the total.
	Progress func(done, total int)
}

func (c Config) withDefaults() (Config, error) {
	if c.Shape == "" {
		c.Shape = "nvl72"
	}
	if c.GPUs == "" {
		c.GPUs = "1M"
	}
	if c.Load == 0 {
		c.Load = 0.9
	}
	if c.Events == 0 {
		c.Events = 1000
	}
	if c.Patience == 0 {
		c.Patience = 100
	}
	switch {
	case !(c.Load > 0 && c.Load < 1):
		return c, fmt.Errorf("scale: load %v, want 0 < load < 1", c.Load)
	case c.Events < 0:
		return c, fmt.Errorf("scale: events %d, want ≥ 0", c.Events)
	case c.Patience < 0:
		return c, fmt.Errorf("scale: patience %d, want ≥ 0", c.Patience)
	}
	if _, err := bench.Shape(c.Shape, c.GPUs); err != nil {
		return c, fmt.Errorf("scale: %w", err)
	}
	return c, nil
}

// Mix is the arrivals' job mix, shaped like openb: single pods dominate (a
// fraction of a GPU, 1, 2, 4 or 8 GPUs; 8 as whole-host pods when a host
// has fewer), and rare gangs of whole hosts from one NVL72 rack (72 GPUs) to
// 200k GPUs, each requiring the smallest level that holds it (none above a
// block or an HGX pod). Weights are per 10,000 jobs: gangs are 7.9% of jobs
// but 98% of the GPUs asked for (≈100 of the ≈101 GPUs of a mean arrival).
// A 200k-GPU gang never fits a 90%-loaded 1M cluster without preemption.
var Mix = []bench.JobKind{
	{Name: "frac", Weight: 2400, GPUs: 0},
	{Name: "gpu1", Weight: 4210, GPUs: 1},
	{Name: "gpu2", Weight: 1200, GPUs: 2},
	{Name: "gpu4", Weight: 900, GPUs: 4},
	{Name: "gpu8", Weight: 500, GPUs: 8},
	{Name: "gang72", Weight: 400, GPUs: 72},
	{Name: "gang144", Weight: 200, GPUs: 144},
	{Name: "gang576", Weight: 100, GPUs: 576},
	{Name: "gang1152", Weight: 50, GPUs: 1152},
	{Name: "gang4608", Weight: 20, GPUs: 4608},
	{Name: "gang9216", Weight: 12, GPUs: 9216},
	{Name: "gang36864", Weight: 6, GPUs: 36864},
	{Name: "gang200k", Weight: 2, GPUs: 200000},
}

// Kind classifies a cycle by what it decided.
type Kind uint8

// The kinds, in the order results list them. A cycle has one kind, the
// first that applies: Preempt (it evicted victims), Defrag (it moved jobs),
// Place (it bound something), Reject (an arrival's cycle that bound
// nothing: the new job got nothing), Idle (a departure's cycle that decided
// nothing).
const (
	Place Kind = iota
	Reject
	Preempt
	Defrag
	Idle
	NumKinds
)

var kindNames = [NumKinds]string{"place", "reject", "preempt", "defrag", "idle"}

func (k Kind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return "kind(?)"
}

// Result is what a run measured. Latencies are of the Cycle call alone: the
// event's report (Submit or Finished) and the confirmations are not timed.
type Result struct {
	Shape, GPUs string
	ClusterGPUs int
	Seed        uint64
	// FillLoad is the load the fill achieved; EndLoad the load after the
	// last event (allocated whole GPUs over healthy ones).
	FillLoad, EndLoad float64
	FillJobs          int
	Events            int
	Arrivals          int
	Departures        int
	GaveUp            int // pending jobs cancelled after Patience events
	// Binds, Preemptions, Victims and Moves count the decisions confirmed.
	Binds, Preemptions, Victims, Moves int
	// Latencies holds, per Kind, the Cycle latency of each cycle of that
	// kind, in event order.
	Latencies [NumKinds][]time.Duration
	// FloorNs is F at GPUs (bench.FloorNs), measured in this process.
	FloorNs float64
	// Digest is an FNV-64a hash of every cycle's kind and decisions (job
	// ids, pods, victims): equal for runs that decided the same.
	Digest uint64
}

// Percentile returns the p-th percentile (nearest rank, 0 < p ≤ 100) of
// kind k's latencies, 0 when there are none.
func (r *Result) Percentile(k Kind, p float64) time.Duration {
	return percentile(sorted(r.Latencies[k]), p)
}

// All returns the latencies of every cycle, sorted.
func (r *Result) All() []time.Duration {
	var all []time.Duration
	for _, l := range r.Latencies {
		all = append(all, l...)
	}
	slices.Sort(all)
	return all
}

func sorted(d []time.Duration) []time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s
}

// percentile of sorted latencies s, nearest rank.
func percentile(s []time.Duration, p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// Start builds cfg's starting engine: an Engine (bench.EngineConfig, no
// spares) over a clone of bench.Loaded(cfg.Shape, cfg.GPUs, cfg.Load,
// bench.DefaultSeed), its fill jobs adopted as running. Play takes it over;
// Clone it to play it more than once.
func Start(cfg Config) (*blink.Engine, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s, _, err := bench.Loaded(cfg.Shape, cfg.GPUs, cfg.Load, bench.DefaultSeed)
	if err != nil {
		return nil, fmt.Errorf("scale: %w", err)
	}
	e, err := blink.New(s.Clone(), bench.EngineConfig(s.Tree(), false))
	if err != nil {
		return nil, fmt.Errorf("scale: %w", err)
	}
	return e, nil
}

// Run is Start then Play.
func Run(cfg Config) (*Result, error) {
	e, err := Start(cfg)
	if err != nil {
		return nil, err
	}
	return Play(e, cfg)
}

// tracked is the controller's view of a live job: where it is in the running
// list (-1: pending) and, when pending, the event it became pending at.
type tracked struct {
	run   int32
	since int32
}

type waiter struct {
	id    blink.JobID
	since int32
}

// player is the controller: it draws events, reports them, runs cycles and
// confirms their decisions.
type player struct {
	e       *blink.Engine
	t       *topology.Tree
	cfg     Config
	rng     *rand.Rand
	jobs    map[blink.JobID]tracked // looked up only, never ranged over
	running []blink.JobID
	queue   []waiter // pending jobs by the event they became pending at
	res     *Result
	buf     [8]byte
}

// Play runs cfg's event stream against e, which it changes (see the package
// documentation for the events and the controller).
func Play(e *blink.Engine, cfg Config) (*Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	f, err := bench.FloorNs(cfg.GPUs)
	if err != nil {
		return nil, fmt.Errorf("scale: %w", err)
	}
	s := e.State()
	p := &player{e: e, t: s.Tree(), cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x7363616c65)),
		jobs: map[blink.JobID]tracked{},
		res: &Result{Shape: cfg.Shape, GPUs: cfg.GPUs, ClusterGPUs: s.Tree().NumGPUs(), Seed: cfg.Seed,
			Events: cfg.Events, FloorNs: f}}
	for _, id := range e.AppendJobs(nil) {
		st, _ := e.Status(id)
		if st == blink.Running {
			p.addRunning(id)
		}
	}
	p.res.FillJobs = len(p.running)
	p.res.FillLoad = p.load()
	h := fnv.New64a()
	for ev := range cfg.Events {
		if err := p.step(int32(ev), h); err != nil {
			return nil, fmt.Errorf("scale: event %d: %w", ev, err)
		}
		if cfg.Progress != nil && (ev%256 == 255 || ev == cfg.Events-1) {
			cfg.Progress(ev+1, cfg.Events)
		}
	}
	p.res.EndLoad = p.load()
	p.res.Digest = h.Sum64()
	return p.res, nil
}

// load is the allocated fraction of healthy GPUs.
func (p *player) load() float64 {
	s := p.e.State()
	c := s.HealthyGPUs(0)
	if c == 0 {
		return 0
	}
	return 1 - float64(s.Free(0))/float64(c)
}

// step draws event ev, reports it, runs the cycle and confirms it.
func (p *player) step(ev int32, h interface{ Write([]byte) (int, error) }) error {
	now := int64(ev) + 1
	if err := p.giveUp(ev); err != nil {
		return err
	}
	pArrive := 0.9
	if p.load() >= p.cfg.Load {
		pArrive = 0.1
	}
	arrival := len(p.running) == 0 || p.rng.Float64() < pArrive
	if arrival {
		id, err := p.e.Submit(now, p.spec())
		if err != nil {
			return err
		}
		p.setPending(id, ev)
		p.res.Arrivals++
	} else {
		i := p.rng.IntN(len(p.running))
		id := p.running[i]
		if err := p.e.Finished(id); err != nil {
			return err
		}
		p.removeRunning(id)
		delete(p.jobs, id)
		p.res.Departures++
	}
	start := time.Now()
	d := p.e.Cycle(now)
	lat := time.Since(start)
	k := Idle
	switch {
	case len(d.Preemptions) > 0:
		k = Preempt
	case len(d.Moves) > 0:
		k = Defrag
	case len(d.Binds) > 0:
		k = Place
	case arrival:
		k = Reject
	}
	p.res.Latencies[k] = append(p.res.Latencies[k], lat)
	p.hash(h, k, &d)
	return p.confirm(&d, ev)
}

// spec draws one arrival from Mix. Single pods take the fill's priority
// classes (1, 10, 100, 1000 with weights 4:3:2:1; 1 and 10 preemptible, and
// movable); gangs are production work: 100 or 1000 (2:1), never preemptible.
func (p *player) spec() blink.JobSpec { return bench.DrawSpec(p.t, p.rng, Mix, true) }

// giveUp cancels the jobs pending since Patience events or more.
func (p *player) giveUp(ev int32) error {
	n := 0
	for ; n < len(p.queue) && p.queue[n].since+int32(p.cfg.Patience) <= ev; n++ {
		w := p.queue[n]
		tr, ok := p.jobs[w.id]
		if !ok || tr.run >= 0 || tr.since != w.since {
			continue // finished, running again, or pending anew later
		}
		if err := p.e.Cancel(w.id); err != nil {
			return err
		}
		delete(p.jobs, w.id)
		p.res.GaveUp++
	}
	p.queue = p.queue[n:]
	return nil
}

// confirm reports what the embedder did with d, in the order Decisions
// prescribes: repairs, evictions, moves, binds.
func (p *player) confirm(d *blink.Decisions, ev int32) error {
	for _, r := range d.Repairs {
		for _, v := range r.Victims {
			if err := p.evicted(v, ev); err != nil {
				return err
			}
		}
		if r.Requeued {
			p.removeRunning(r.Job)
			p.setPending(r.Job, ev)
			continue
		}
		if err := p.e.Bound(r.Job); err != nil {
			return err
		}
	}
	for _, pr := range d.Preemptions {
		p.res.Preemptions++
		for _, v := range pr.Victims {
			if err := p.evicted(v, ev); err != nil {
				return err
			}
		}
	}
	for _, m := range d.Moves {
		if err := p.e.Moved(m.Job); err != nil {
			return err
		}
		p.res.Moves++
	}
	for _, b := range d.Binds {
		if err := p.e.Bound(b.Job); err != nil {
			return err
		}
		if tr, ok := p.jobs[b.Job]; !ok || tr.run < 0 {
			p.addRunning(b.Job)
		}
		p.res.Binds++
	}
	for _, x := range d.Expired {
		if x.What == blink.BindExpired {
			return fmt.Errorf("%w: bind of %v expired though confirmed", errBroken, x.Job)
		}
	}
	return nil
}

var errBroken = errors.New("scale: the engine and the controller disagree")

func (p *player) evicted(id blink.JobID, ev int32) error {
	if err := p.e.Evicted(id); err != nil {
		return err
	}
	p.removeRunning(id)
	p.setPending(id, ev)
	p.res.Victims++
	return nil
}

func (p *player) addRunning(id blink.JobID) {
	p.jobs[id] = tracked{run: int32(len(p.running))}
	p.running = append(p.running, id)
}

// removeRunning takes id out of the running list (swap with the last).
func (p *player) removeRunning(id blink.JobID) {
	tr, ok := p.jobs[id]
	if !ok || tr.run < 0 {
		return
	}
	last := len(p.running) - 1
	moved := p.running[last]
	p.running[tr.run] = moved
	p.running = p.running[:last]
	if moved != id {
		m := p.jobs[moved]
		m.run = tr.run
		p.jobs[moved] = m
	}
	p.jobs[id] = tracked{run: -1}
}

func (p *player) setPending(id blink.JobID, ev int32) {
	p.jobs[id] = tracked{run: -1, since: ev}
	p.queue = append(p.queue, waiter{id, ev})
}

// hash adds cycle kind k and its decisions to h.
func (p *player) hash(h interface{ Write([]byte) (int, error) }, k Kind, d *blink.Decisions) {
	w := func(v uint64) {
		binary.LittleEndian.PutUint64(p.buf[:], v)
		h.Write(p.buf[:])
	}
	pods := func(ps []topology.Pod) {
		for _, x := range ps {
			w(uint64(x.Host))
			w(x.GPUs)
			w(uint64(x.Milli))
		}
	}
	w(uint64(k))
	for _, b := range d.Binds {
		w(uint64(b.Job))
		pods(b.Pods)
	}
	for _, pr := range d.Preemptions {
		w(uint64(pr.Job))
		for _, v := range pr.Victims {
			w(uint64(v))
		}
	}
	for _, m := range d.Moves {
		w(uint64(m.Job))
		pods(m.Pods)
	}
	for _, r := range d.Repairs {
		w(uint64(r.Job))
		pods(r.Pods)
	}
}
