// Embed is a small simulated controller driving Blink's engine loop over
// virtual time, as a real scheduler would embed it: jobs arrive, every tick
// the controller calls Cycle, acts on the decisions (binds succeed or now and
// then fail, victims and filler are evicted after a grace period, repairs and
// moves are confirmed), reports job ends and hardware faults, and prints an
// hourly summary with the wall-clock time the cycles took.
//
//	go run ./examples/embed                 # one NVL72 block, 6 virtual hours
//	go run ./examples/embed -hours 24 -seed 7
package main

import (
	"container/heap"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

func main() {
	hours := flag.Int("hours", 6, "virtual hours to simulate")
	seed := flag.Uint64("seed", 1, "seed of arrivals, run times and faults")
	flag.Parse()
	if _, err := run(os.Stdout, options{blocks: 1, hours: *hours, seed: *seed}); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

type options struct {
	blocks, hours int
	seed          uint64
}

// Virtual time is in seconds; the engine's Config defaults assume so.
const tick = 10

// event is something the controller will report at a virtual time.
type event struct {
	at   int64
	seq  int
	kind int
	job  blink.JobID
	run  int // the job's bind this event belongs to
	host topology.HostID
}

const (
	evFinish = iota
	evEvicted
	evRecover
)

type events []event

func (q events) Len() int { return len(q) }
func (q events) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q events) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *events) Push(x any)   { *q = append(*q, x.(event)) }
func (q *events) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// stats are what the controller counted.
type stats struct {
	submitted, binds, bindFailed, finished, evicted, preemptions, repairs, requeued, moves, faults int
	cycles                                                                                         int
	cycleTime                                                                                      time.Duration
}

type controller struct {
	e       *blink.Engine
	t       *topology.Tree
	rng     *rand.Rand
	q       events
	seq     int
	runTime map[blink.JobID]int64 // virtual run time of each job, by id
	runs    map[blink.JobID]int   // binds of each job so far
	st      stats
	rack    topology.Level
}

// run simulates o.hours of a cluster of o.blocks NVL72 blocks and writes an
// hourly summary to w. It returns the totals.
func run(w io.Writer, o options) (stats, error) {
	tree, err := topology.BuildShape(topology.NVL72(o.blocks))
	if err != nil {
		return stats{}, err
	}
	rack, _ := tree.LevelByName("rack")
	e, err := blink.New(topology.NewState(tree), blink.Config{
		Spares: []blink.SparePolicy{{Level: rack, Hosts: 2}}, // 2 spares per NVL72 rack
	})
	if err != nil {
		return stats{}, err
	}
	c := &controller{e: e, t: tree, rng: rand.New(rand.NewPCG(o.seed, 1)), runTime: map[blink.JobID]int64{},
		runs: map[blink.JobID]int{}, rack: rack}
	fmt.Fprintf(w, "cluster: %d GPUs in %d racks of 18 hosts (2 spares each); tick %ds\n", tree.NumGPUs(), tree.NumHosts()/18, tick)
	fmt.Fprintf(w, "%4s %6s %8s %6s %6s %8s %7s %7s %9s\n", "hour", "busy", "pending", "binds", "ended", "preempt", "faults", "repairs", "cycle µs")
	var last stats
	for now := int64(0); now < int64(o.hours)*3600; now += tick {
		c.arrivals(now)
		c.report(now)
		c.cycle(now)
		if (now+tick)%3600 == 0 {
			st := c.st
			busy := 1 - float64(e.State().Free(0))/float64(e.State().HealthyGPUs(0))
			us := 0.0
			if n := st.cycles - last.cycles; n > 0 {
				us = float64((st.cycleTime - last.cycleTime).Microseconds()) / float64(n)
			}
			fmt.Fprintf(w, "%4d %5.1f%% %8d %6d %6d %8d %7d %7d %9.0f\n", (now+tick)/3600, 100*busy, e.NumPending(),
				st.binds-last.binds, st.finished-last.finished, st.preemptions-last.preemptions,
				st.faults-last.faults, st.repairs-last.repairs, us)
			last = st
		}
	}
	if err := e.Check(); err != nil {
		return c.st, fmt.Errorf("engine invariants: %w", err)
	}
	s := c.st
	fmt.Fprintf(w, "total: %d jobs submitted, %d binds (%d failed), %d finished, %d evicted, %d preemptions, %d moves, %d host faults → %d repairs in place, %d rescheduled\n",
		s.submitted, s.binds, s.bindFailed, s.finished, s.evicted, s.preemptions, s.moves, s.faults, s.repairs, s.requeued)
	return s, nil
}

// arrivals submits the jobs arriving in this tick: mostly small inference
// and fine-tuning jobs, some 16-host rack gangs, now and then an SU gang.
func (c *controller) arrivals(now int64) {
	for range c.rng.IntN(4) {
		var spec blink.JobSpec
		var run int64
		switch r := c.rng.IntN(100); {
		case r < 50: // inference replica: 1 GPU, preemptible filler
			spec = blink.JobSpec{Sets: []placement.PodSet{{Pods: 1, GPUs: 1}}, Priority: 1, Preemptible: true, Movable: true}
			run = 600 + c.rng.Int64N(3600)
		case r < 80: // fine-tuning: one 4-GPU host
			spec = blink.JobSpec{Sets: []placement.PodSet{{Pods: 1, GPUs: 4}}, Priority: 10, Preemptible: true}
			run = 1800 + c.rng.Int64N(7200)
		case r < 97: // training: 16 hosts of one NVL72 rack (64 GPUs) plus a launcher
			spec = blink.JobSpec{Sets: []placement.PodSet{{Pods: 1, GPUs: 0, CPUMilli: 1000}, {Pods: 16, GPUs: 4}},
				Required: c.rack, Priority: 100}
			run = 3600 + c.rng.Int64N(4*3600)
		default: // large training: 4 to 8 racks' worth, elastic
			su, _ := c.t.LevelByName("su")
			spec = blink.JobSpec{Sets: []placement.PodSet{{Pods: 128, GPUs: 4, SliceSize: 16, SliceLevel: c.rack}},
				MinPods: []int32{64}, Required: su, Priority: 1000}
			run = 4 * 3600
		}
		spec.RunTime = run
		id, err := c.e.Submit(now, spec)
		if err != nil {
			panic(err)
		}
		c.runTime[id] = run
		c.st.submitted++
	}
	// Hardware: a host fails now and then; it is repaired after 2 hours.
	if c.rng.IntN(40) == 0 {
		h := topology.HostID(c.rng.IntN(c.t.NumHosts()))
		if c.e.HostFailed(h) == nil {
			c.st.faults++
			c.push(event{at: now + 2*3600, kind: evRecover, host: h})
		}
	}
}

func (c *controller) push(ev event) {
	c.seq++
	ev.seq = c.seq
	heap.Push(&c.q, ev)
}

// report tells the engine what happened up to now. Reports that no longer
// match (a job that was evicted before it could finish) are rejected by the
// engine with an error and change nothing; the controller just drops them.
func (c *controller) report(now int64) {
	for len(c.q) > 0 && c.q[0].at <= now {
		ev := heap.Pop(&c.q).(event)
		switch ev.kind {
		case evFinish:
			if ev.run == c.runs[ev.job] && c.e.Finished(ev.job) == nil {
				c.st.finished++
				delete(c.runTime, ev.job)
				delete(c.runs, ev.job)
			}
		case evEvicted:
			if c.e.Evicted(ev.job) == nil {
				c.st.evicted++
			}
		case evRecover:
			_ = c.e.Recovered(ev.host)
		}
	}
}

// cycle runs one engine cycle and acts on its decisions.
func (c *controller) cycle(now int64) {
	start := time.Now()
	d := c.e.Cycle(now)
	c.st.cycleTime += time.Since(start)
	c.st.cycles++
	for _, r := range d.Repairs {
		if r.Requeued {
			c.st.requeued++
			continue
		}
		c.st.repairs++
		for _, v := range r.Victims { // filler on the spare: gone in 30 s
			c.push(event{at: now + 30, kind: evEvicted, job: v})
		}
		_ = c.e.Bound(r.Job)
	}
	for _, p := range d.Preemptions {
		c.st.preemptions++
		for _, v := range p.Victims { // graceful termination: 60 s
			c.push(event{at: now + 60, kind: evEvicted, job: v})
		}
	}
	for _, m := range d.Moves {
		c.st.moves++
		_ = c.e.Moved(m.Job)
	}
	for _, b := range d.Binds {
		c.st.binds++
		if c.rng.IntN(200) == 0 { // a kubelet said no
			c.st.bindFailed++
			_ = c.e.BindFailed(b.Job)
			continue
		}
		_ = c.e.Bound(b.Job)
		c.runs[b.Job]++ // an eviction restarts the job: only its last run ends it
		c.push(event{at: now + c.runTime[b.Job], kind: evFinish, job: b.Job, run: c.runs[b.Job]})
	}
}
