package blink_test

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Randomised loops: an embedder that submits, cycles, confirms, fails,
// recovers, drains, cancels and sends bad reports at random, with Check
// after every event, every cycle's decisions verified against the State
// (verify), its "does not fit" answers against a fresh placement
// (checkNoFit, nofit_test.go), its elastic binds' sizes against the next
// size up (checkElastic, elastic_check_test.go) and its requeued repairs
// against the free GPUs of the job's domain (checkRequeue,
// requeue_check_test.go), and every job's required domain, slices and
// models after every event (wantKeepsDomains, wantModels). BLINK_STEPS sets
// the number of events (default 10,000); BLINK_SEED the seed (default 1),
// logged so a failure can be replayed.

func envInt(t *testing.T, name string, def uint64) uint64 {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", name, v, err)
		}
		return n
	}
	return def
}

func TestRandomLoops(t *testing.T) {
	steps := int(envInt(t, "BLINK_STEPS", 10000))
	seed := envInt(t, "BLINK_SEED", 1)
	t.Logf("BLINK_SEED=%d BLINK_STEPS=%d", seed, steps)
	configs := loopConfigs()
	for i, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			n := steps / len(configs)
			a := runLoop(t, seed+uint64(i), n, c)
			b := runLoop(t, seed+uint64(i), n, c)
			if !bytes.Equal(a.digest, b.digest) {
				t.Fatalf("seed %d: two runs of the same calls gave different decisions", seed+uint64(i))
			}
			t.Logf("%s", a.stats)
		})
	}
}

// loopConfig: spares adds a spare policy and a default run time, plans the
// test planners; with noEnds no job gives a run time; with extremes,
// priorities, run times and the clock take values at the ends of their
// ranges (MinInt32, MaxInt32, MaxInt64…), and the default run time is
// MaxInt64 - 1; with moves, nearly every job is preemptible and movable and
// blocked jobs get defragmentation (the package's planner, three moves a
// plan, three attempts a cycle) instead of preemption.
type loopConfig struct {
	name                                   string
	spares, plans, noEnds, extremes, moves bool
}

func loopConfigs() []loopConfig {
	return []loopConfig{{name: "plain"}, {name: "spares+planners", spares: true, plans: true},
		{name: "planners/no-ends", plans: true, noEnds: true}, {name: "planners/extremes", plans: true, extremes: true},
		{name: "moves", moves: true}}
}

type loopResult struct {
	digest []byte
	stats  string
}

type loop struct {
	t    *testing.T
	rng  *rand.Rand
	h    *harness
	now  int64
	ids  []blink.JobID
	todo []blink.JobID // jobs decisions asked to act on
	hash []byte
	n    map[string]int
	c    loopConfig
}

func runLoop(t *testing.T, seed uint64, steps int, c loopConfig) loopResult {
	return runLoopWith(t, rand.New(rand.NewPCG(seed, 42)), fmt.Sprintf("seed %d", seed), steps, c)
}

// runLoopWith runs steps random events drawn from rng (what names it in
// messages) under config c.
func runLoopWith(t *testing.T, rng *rand.Rand, what string, steps int, c loopConfig) loopResult {
	sh := topology.Shape{Levels: []string{"su", "rack"}, FanOut: []int{2, 3, 4}, GPUsPerHost: 4,
		CPUMilli: 16000, MemoryMiB: 65536}
	cfg := blink.Config{BindTimeout: 20, EvictTimeout: 30, MoveTimeout: 40, ReservationTimeout: 100, MaxMoves: 2}
	if c.spares {
		cfg.Spares = []blink.SparePolicy{{Level: 2, Hosts: 1}}
		cfg.DefaultRunTime = 50
	}
	if c.plans {
		cfg.Preempter = &greedyPreempter{}
		cfg.Defragmenter = &oneMoveDefragmenter{}
	}
	if c.extremes {
		cfg.DefaultRunTime = math.MaxInt64 - 1
	}
	if c.moves {
		cfg.MaxPreemptAttempts, cfg.MaxDefragAttempts, cfg.MaxMoves = -1, 3, 3
	}
	l := &loop{t: t, rng: rng, h: newHarness(t, sh, cfg), n: map[string]int{}, c: c}
	for step := range steps {
		l.step(step)
		if err := l.h.e.Check(); err != nil {
			t.Fatalf("%s step %d: %v", what, step, err)
		}
		if err := l.h.e.ReadyAgrees(); err != nil {
			t.Fatalf("%s step %d: %v", what, step, err)
		}
		if err := l.h.e.CandsAgree(); err != nil {
			t.Fatalf("%s step %d: %v", what, step, err)
		}
		wantKeepsDomains(t, step, l.h.e.State())
		wantModels(t, step, l.h.e)
		if step%97 == 48 {
			l.cloneAndCycle(step)
		}
	}
	sum := fnv.New128a()
	sum.Write(l.hash)
	keys := make([]string, 0, len(l.n))
	for k := range l.n {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var stats bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&stats, "%s=%d ", k, l.n[k])
	}
	return loopResult{digest: sum.Sum(nil), stats: stats.String()}
}

func (l *loop) pick() (blink.JobID, bool) {
	if len(l.ids) == 0 {
		return 0, false
	}
	return l.ids[l.rng.IntN(len(l.ids))], true
}

func (l *loop) forget(id blink.JobID) {
	if i := slices.Index(l.ids, id); i >= 0 {
		l.ids = slices.Delete(l.ids, i, i+1)
	}
}

func (l *loop) spec() blink.JobSpec {
	r := l.rng
	var s blink.JobSpec
	for range 1 + r.IntN(2) {
		set := placement.PodSet{Pods: int32(1 + r.IntN(4))}
		switch r.IntN(5) {
		case 0:
			set.GPUs, set.Milli = 1, []int32{300, 500, 500, 700}[r.IntN(4)]
		default:
			set.GPUs = []int32{1, 2, 4, 4}[r.IntN(4)]
		}
		if r.IntN(2) == 0 { // CPU and memory, now and then more than a host has (never fits)
			set.CPUMilli = []int32{1000, 2000, 4000, 8000, 16000, 20000}[r.IntN(6)]
			set.MemoryMiB = []int32{0, 4096, 16384, 65536, 70000}[r.IntN(5)]
		}
		s.Sets = append(s.Sets, set)
	}
	if r.IntN(5) == 0 {
		s.MinPods = make([]int32, len(s.Sets))
		for i := range s.Sets {
			s.MinPods[i] = int32(1 + r.IntN(int(s.Sets[i].Pods)))
		}
	}
	switch r.IntN(5) {
	case 0:
		s.Required = 2 // rack
	case 1:
		s.Required = 1 // su
	case 2:
		if r.IntN(2) == 0 {
			s.Required = l.h.tree.HostLevel() // one host: gangs of several sets that no host holds never fit
		}
	}
	s.Priority = int32(r.IntN(4))
	s.Preemptible = r.IntN(2) == 0
	s.Movable = r.IntN(2) == 0
	if l.c.moves {
		s.Preemptible, s.Movable = r.IntN(5) > 0, r.IntN(10) > 0
	}
	if r.IntN(3) == 0 && !l.c.noEnds {
		s.RunTime = int64(5 + r.IntN(60))
	}
	if l.c.extremes {
		s.Priority = []int32{math.MinInt32, -1, 0, 1, math.MaxInt32}[r.IntN(5)]
		s.RunTime = []int64{0, 1, 50, math.MaxInt64 - 1, math.MaxInt64}[r.IntN(5)]
	}
	if r.IntN(4) == 0 {
		l.slice(&s)
	}
	return s
}

// slice cuts the sets of s of two pods or more into slices of two pods
// that share a rack or a host (sizes and minimums rounded to even).
func (l *loop) slice(s *blink.JobSpec) {
	for i := range s.Sets {
		set := &s.Sets[i]
		if set.Pods < 2 {
			continue
		}
		set.Pods -= set.Pods % 2
		set.SliceSize, set.SliceLevel = 2, max(s.Required, topology.Level(2+l.rng.IntN(2))) // not above the required level
		if s.MinPods != nil {
			s.MinPods[i] = min(set.Pods, s.MinPods[i]+s.MinPods[i]%2)
		}
	}
}

func (l *loop) step(step int) {
	r, e := l.rng, l.h.e
	if d := int64(r.IntN(3)); l.now < math.MaxInt64-d {
		l.now += d
	}
	if l.c.extremes && r.IntN(400) == 0 { // the clock jumps to the end of time
		l.now = max(l.now, math.MaxInt64-int64(r.IntN(100)))
	}
	tree := l.h.tree
	switch x := r.IntN(100); {
	case x < 18:
		id, err := e.Submit(l.now, l.spec())
		if err != nil {
			l.t.Fatalf("step %d: submit: %v", step, err)
		}
		l.ids = append(l.ids, id)
		l.n["submit"]++
	case x < 36:
		before := snapNoms(e.State())
		pre := snapPre(e)
		d := e.Cycle(l.now)
		l.record(d)
		l.verify(step, d)
		l.checkNoFit(step, d, before)
		l.checkElastic(step, d, before)
		l.checkRequeue(step, d, pre)
	case x < 70:
		for range 1 + r.IntN(4) {
			id, ok := l.pick()
			if len(l.todo) > 0 && r.IntN(5) > 0 { // mostly act on decisions, oldest first
				id, ok = l.todo[0], true
				l.todo = l.todo[1:]
			}
			if ok {
				l.act(step, id)
			}
		}
	case x < 73:
		id, ok := l.pick()
		if ok {
			l.must(step, e.Cancel(id), "cancel")
			l.forget(id)
		}
	case x < 76:
		h := topology.HostID(r.IntN(tree.NumHosts()))
		if e.State().HostHealth(h) != topology.Failed {
			l.must(step, e.HostFailed(h), "hostfailed")
		}
	case x < 78:
		g := topology.GPUID(r.IntN(tree.NumGPUs()))
		if !e.State().GPUFailed(g) {
			l.must(step, e.GPUFailed(g), "gpufailed")
		}
	case x < 84:
		h := topology.HostID(r.IntN(tree.NumHosts()))
		if e.State().HostHealth(h) != topology.Healthy || e.State().HostFailedMask(h) != 0 {
			l.must(step, e.Recovered(h), "recovered")
		}
	case x < 85:
		h := topology.HostID(r.IntN(tree.NumHosts()))
		if e.State().HostHealth(h) == topology.Healthy {
			l.must(step, e.Drain(h), "drain")
		}
	case x < 86 && r.IntN(4) == 0:
		lo, hi := tree.LevelDomains(2)
		d := lo + topology.DomainID(r.IntN(int(hi-lo)))
		hl, hh := tree.Hosts(d)
		for h := hl; h < hh; h++ {
			if e.State().HostHealth(h) != topology.Failed {
				l.must(step, e.DomainFailed(d), "domainfailed")
				break
			}
		}
	case x >= 90:
		l.badReport(step)
	}
}

// act confirms (or fails, or finishes) what job id is doing.
func (l *loop) act(step int, id blink.JobID) {
	r, e := l.rng, l.h.e
	st, err := e.Status(id)
	if err != nil {
		if slices.Contains(l.ids, id) {
			l.t.Fatalf("step %d: %v", step, err)
		}
		return // a todo entry for a job since gone
	}
	switch {
	case (st == blink.Binding || st == blink.Repairing) && r.IntN(8) > 0:
		l.must(step, e.Bound(id), "bound")
	case st == blink.Binding || st == blink.Repairing:
		l.must(step, e.BindFailed(id), "bindfailed")
	case st == blink.Moving && r.IntN(4) > 0:
		l.must(step, e.Moved(id), "moved")
	case st == blink.Evicting && r.IntN(4) > 0:
		l.must(step, e.Evicted(id), "evicted")
	case st == blink.Running && r.IntN(2) == 0:
		l.must(step, e.Finished(id), "finished")
		l.forget(id)
	case st == blink.Running && r.IntN(20) == 0:
		l.must(step, e.Evicted(id), "evicted-external")
	}
}

func (l *loop) must(step int, err error, what string) {
	if err != nil {
		l.t.Fatalf("step %d: %s: %v", step, what, err)
	}
	l.n[what]++
}

// cloneAndCycle continues the loop on a clone of the engine, after checking
// that the clone's next cycle decides what the original's does.
func (l *loop) cloneAndCycle(step int) {
	c := l.h.e.Clone()
	want := fmt.Sprintf("%+v", l.h.e.Cycle(l.now))
	d := c.Cycle(l.now)
	if got := fmt.Sprintf("%+v", d); got != want {
		l.t.Fatalf("step %d: a clone's cycle decided\n%s\nthe original's\n%s", step, got, want)
	}
	l.h.e = c
	l.record(d)
	l.verify(step, d)
	if err := c.Check(); err != nil {
		l.t.Fatalf("step %d: clone: %v", step, err)
	}
	l.n["clones"]++
}

// record folds the decisions into the run's digest.
func (l *loop) record(d blink.Decisions) {
	l.hash = fmt.Appendf(l.hash, "%d|%v|%v|%v|%v|%v|%v\n", d.Now, d.Binds, d.Repairs, d.Preemptions, d.Moves, d.Expired, d.Pending)
	for _, b := range d.Binds {
		l.todo = append(l.todo, b.Job)
	}
	for _, r := range d.Repairs {
		l.todo = append(l.todo, r.Job)
		l.todo = append(l.todo, r.Victims...)
	}
	for _, p := range d.Preemptions {
		l.todo = append(l.todo, p.Victims...)
	}
	for _, m := range d.Moves {
		l.todo = append(l.todo, m.Job)
	}
	l.n["binds"] += len(d.Binds)
	l.n["repairs"] += len(d.Repairs)
	l.n["preemptions"] += len(d.Preemptions)
	l.n["moves"] += len(d.Moves)
	l.n["expired"] += len(d.Expired)
	for _, r := range d.Repairs {
		l.n["repair-"+r.Source.String()]++
	}
	for _, x := range d.Expired {
		l.n["expired-"+x.What.String()]++
	}
}

// verify checks the decisions against the State: what the engine says it
// did is what the State holds.
func (l *loop) verify(step int, d blink.Decisions) {
	e := l.h.e
	samePods := func(id blink.JobID, pods []topology.Pod) {
		got := e.State().AppendJobPods(nil, id.Slot())
		if !slices.Equal(got, pods) {
			l.t.Fatalf("step %d: job %v: State pods %v, decision %v", step, id, got, pods)
		}
	}
	for _, b := range d.Binds {
		if st, _ := e.Status(b.Job); st != blink.Binding {
			l.t.Fatalf("step %d: bound job %v is %v", step, b.Job, st)
		}
		samePods(b.Job, b.Pods)
		spec, _ := e.Spec(b.Job)
		total := int32(0)
		for i, n := range b.Sizes {
			min := spec.Sets[i].Pods
			if spec.MinPods != nil && spec.MinPods[i] > 0 {
				min = spec.MinPods[i]
			}
			if n < min || n > spec.Sets[i].Pods {
				l.t.Fatalf("step %d: job %v set %d: %d pods, want %d…%d", step, b.Job, i, n, min, spec.Sets[i].Pods)
			}
			total += n
		}
		if int(total) != len(b.Pods) {
			l.t.Fatalf("step %d: sizes %v for %d pods", step, b.Sizes, len(b.Pods))
		}
		// Non-preemptible work is never on a spare.
		if !spec.Preemptible {
			for _, p := range b.Pods {
				if e.IsSpare(p.Host) {
					l.t.Fatalf("step %d: non-preemptible job %v bound on spare host %d", step, b.Job, p.Host)
				}
			}
		}
		// Required level honoured.
		if spec.Required > 0 {
			dom := tDomain(l.h.tree, b.Pods[0].Host, spec.Required)
			for _, p := range b.Pods {
				if tDomain(l.h.tree, p.Host, spec.Required) != dom {
					l.t.Fatalf("step %d: job %v spans two domains of its required level", step, b.Job)
				}
			}
		}
	}
	for _, r := range d.Repairs {
		if r.Requeued {
			continue
		}
		if st, err := e.Status(r.Job); err == nil && st == blink.Repairing {
			samePods(r.Job, r.Pods)
		}
		for _, v := range r.Victims {
			if st, _ := e.Status(v); st != blink.Evicting {
				l.t.Fatalf("step %d: repair victim %v is %v", step, v, st)
			}
		}
	}
	for _, p := range d.Preemptions {
		spec, _ := e.Spec(p.Job)
		for _, v := range p.Victims {
			vs, _ := e.Spec(v)
			if st, _ := e.Status(v); st != blink.Evicting || !vs.Preemptible || vs.Priority >= spec.Priority {
				l.t.Fatalf("step %d: victim %v (%v, %+v) of %v", step, v, st, vs, p.Job)
			}
		}
	}
	for _, m := range d.Moves {
		if st, _ := e.Status(m.Job); st == blink.Moving {
			samePods(m.Job, m.Pods)
		}
	}
}

func tDomain(t *topology.Tree, h topology.HostID, l topology.Level) topology.DomainID {
	if l >= t.HostLevel() {
		return topology.DomainID(h)
	}
	return t.HostDomain(h, l)
}

// badReport sends a report that does not match and checks nothing changed.
func (l *loop) badReport(step int) {
	e, r := l.h.e, l.rng
	before := snapshot(l.t, e)
	var err error
	id, ok := l.pick()
	st := blink.Status(0)
	if ok {
		st, _ = e.Status(id)
	}
	switch r.IntN(6) {
	case 0:
		err = e.Bound(blink.JobID(1<<40 | 7))
	case 1:
		if !ok || st == blink.Binding || st == blink.Repairing {
			return
		}
		err = e.Bound(id)
	case 2:
		if !ok || st != blink.Pending {
			return
		}
		err = e.Finished(id)
	case 3:
		if !ok || st == blink.Moving {
			return
		}
		err = e.Moved(id)
	case 4:
		err = e.HostFailed(topology.HostID(l.h.tree.NumHosts() + r.IntN(3)))
	case 5:
		h := topology.HostID(r.IntN(l.h.tree.NumHosts()))
		if e.State().HostHealth(h) != topology.Healthy || e.State().HostFailedMask(h) != 0 {
			return
		}
		err = e.Recovered(h)
	}
	if err == nil {
		l.t.Fatalf("step %d: a bad report was accepted", step)
	}
	if after := snapshot(l.t, e); !bytes.Equal(before, after) {
		l.t.Fatalf("step %d: a rejected report (%v) changed the engine", step, err)
	}
	l.n["bad"]++
}
