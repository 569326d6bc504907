// Command cycleprobe builds the engine benchmark's fixture
// (bench.EngineFixture: 1M NVL72 GPUs at 90% load, 10,000 pending jobs) and,
// with -cycle, runs one Cycle on a clone of it through main.measured, after
// the same Cycle on another clone (its first run grows the goroutine's stack,
// which otherwise confuses callgrind's toggle). Under callgrind, a toggle on
// measured counts one cycle's instructions, free of the machine's noise:
//
//	go build -o /tmp/cycleprobe ./bench/cycleprobe
//	export GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1
//	valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect=main.measured /tmp/cycleprobe -cycle
//
// Counts repeat within ±0.05%. (The difference between runs with and
// without -cycle, untoggled, also works but moves by ±1M between runs: Go
// seeds its maps' hashes afresh in every process, and building the fixture
// hashes a lot.)
//
// It prints the number of binds and of waiting jobs, and a hash of every
// decision, the same for two builds that decide alike.
//
// -spares uses the fixture with one spare host per rack; -small keeps only
// the queue's jobs of at most 8 GPUs (8,524 of them, all of which bind),
// for what one small job costs; -second runs the first cycle on the fixture
// before, so that -cycle measures a second one (BenchmarkCycle's cycle=2).
// -sorted submits the queue grouped by pod shape within each priority, an
// experiment that changes the engine's order (which job gets which GPUs):
// with -small, the same jobs bind, so the difference to the submitted order
// is what interleaving shapes costs. -time N runs the cycle on N clones
// (no callgrind) and prints its wall time, fastest and median; with
// -cpuprofile FILE it writes a CPU profile of that loop (clones and all:
// focus on the cycle), for the first cycle alone, which BenchmarkCycle's
// -cpuprofile cannot give (-bench 'Cycle/gpus=1M/pending=10k$' runs the
// spares=rack and cycle=2 variants too, their names nest under it):
//
//	/tmp/cycleprobe -time 100 -cpuprofile /tmp/cycle.prof
//	go tool pprof -top -cum -focus='Engine..Cycle$' /tmp/cycleprobe /tmp/cycle.prof
//
// -preempt shape counts instead one preempt.Planner.Plan of BenchmarkPreempt's
// gpus200k request on shape (nvl72 or hgx) at 1M GPUs, after a warm-up Plan
// by the same Planner (bench.Preempt200k's State and request), through
// main.plan:
//
//	valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect=main.plan /tmp/cycleprobe -preempt nvl72
package main

import (
	"cmp"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/bench"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
)

func main() {
	cycle := flag.Bool("cycle", false, "run one cycle after building the fixture")
	spares := flag.Bool("spares", false, "one spare host per rack")
	small := flag.Bool("small", false, "only the queue's jobs of at most 8 GPUs")
	second := flag.Bool("second", false, "run the first cycle in any case; -cycle runs the second")
	sorted := flag.Bool("sorted", false, "submit the queue grouped by pod shape within each priority")
	runs := flag.Int("time", 0, "time the cycle on this many clones instead")
	prof := flag.String("cpuprofile", "", "with -time, write a CPU profile of its loop to this file")
	shape := flag.String("preempt", "", "count one gpus200k preemption Plan on this shape instead")
	flag.Parse()
	if *shape != "" {
		if err := probePreempt(*shape); err != nil {
			fmt.Fprintln(os.Stderr, "cycleprobe:", err)
			os.Exit(1)
		}
		return
	}
	e, err := fixture(*small, *sorted, *spares)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cycleprobe:", err)
		os.Exit(1)
	}
	now := int64(1)
	if *second {
		e.Cycle(now)
		now++
	}
	if *runs > 0 {
		if err := timeCycles(e, now, *runs, *prof); err != nil {
			fmt.Fprintln(os.Stderr, "cycleprobe:", err)
			os.Exit(1)
		}
		return
	}
	if *cycle {
		e.Clone().Cycle(now) // the warm-up
		d := measured(e.Clone(), now)
		fmt.Printf("%d binds, %d waiting; decisions %s\n", len(d.Binds), len(d.Pending), digest(&d))
	}
}

// digest is a hash of every decision, to compare two builds' answers.
func digest(d *blink.Decisions) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%+v", *d)
	return fmt.Sprintf("%016x", h.Sum64())
}

// measured runs the cycle callgrind counts.
//
//go:noinline
func measured(e *blink.Engine, now int64) blink.Decisions { return e.Cycle(now) }

// probePreempt runs one gpus200k Plan on shape through plan, after a
// warm-up Plan.
func probePreempt(shape string) error {
	s, req, _, err := bench.Preempt200k(shape)
	if err != nil {
		return err
	}
	var p preempt.Planner
	var res preempt.Result
	if _, _, err := p.Plan(s, &req, 0, 1, &res); err != nil {
		return err
	}
	ok := plan(&p, s, &req, &res)
	fmt.Printf("fits %v, %d victims, exact %v\n", ok, len(res.Victims), res.Exact)
	return nil
}

// plan runs the Plan callgrind counts.
//
//go:noinline
func plan(p *preempt.Planner, s *topology.State, req *placement.Request, res *preempt.Result) bool {
	ok, _, _ := p.Plan(s, req, 0, 1, res)
	return ok
}

// fixture is bench.EngineFixture at 1M GPUs and 10,000 pending jobs, with
// only the jobs of at most 8 GPUs submitted if small (the same draws), in
// order of priority then pod shape if sorted.
func fixture(small, sorted, spares bool) (*blink.Engine, error) {
	s, _, err := bench.Loaded("nvl72", "1M", bench.EngineLoad, bench.DefaultSeed)
	if err != nil {
		return nil, err
	}
	var specs []blink.JobSpec
	for _, spec := range bench.PendingSpecs(s.Tree(), 10000, bench.DefaultSeed) {
		if !small || spec.Sets[0].Pods*spec.Sets[0].GPUs <= 8 {
			specs = append(specs, spec)
		}
	}
	if sorted {
		slices.SortStableFunc(specs, func(a, b blink.JobSpec) int {
			if a.Priority != b.Priority {
				return cmp.Compare(b.Priority, a.Priority)
			}
			x, y := a.Sets[0], b.Sets[0]
			return cmp.Or(cmp.Compare(x.GPUs, y.GPUs), cmp.Compare(x.Milli, y.Milli), cmp.Compare(x.Pods, y.Pods))
		})
	}
	return bench.EngineOver(s, specs, bench.EngineConfig(s.Tree(), spares))
}

// timeCycles runs the cycle at now on n clones of e, garbage collected
// before each, and prints the fastest and median wall time; with prof not
// empty, it writes a CPU profile of the loop to it.
func timeCycles(e *blink.Engine, now int64, n int, prof string) error {
	if prof != "" {
		f, err := os.Create(prof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var took []time.Duration
	var d blink.Decisions
	for range n {
		c := e.Clone()
		runtime.GC()
		start := time.Now()
		d = c.Cycle(now)
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	fmt.Printf("%d binds, %d waiting: fastest %v, median %v of %d cycles\n",
		len(d.Binds), len(d.Pending), took[0], took[n/2], n)
	return nil
}
