// Command cycleprobe builds the engine benchmark's fixture
// (bench.EngineFixture: 1M NVL72 GPUs at 90% load, 10,000 pending jobs) and,
// with -cycle, runs one Cycle on it. Under callgrind the difference between
// the instruction counts of a run with -cycle and one without is what one
// cycle costs, free of the machine's noise (a toggle on Engine.Cycle would
// be confused by goroutine switches):
//
//	go build -o /tmp/cycleprobe ./bench/cycleprobe
//	export GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1
//	valgrind --tool=callgrind --callgrind-out-file=/dev/null /tmp/cycleprobe
//	valgrind --tool=callgrind --callgrind-out-file=/dev/null /tmp/cycleprobe -cycle
//
// -spares uses the fixture with one spare host per rack; -small keeps only
// the queue's jobs of at most 8 GPUs (8,524 of them, all of which bind),
// for what one small job costs; -second runs the first cycle in both runs,
// and -cycle then a second one (BenchmarkCycle's cycle=2).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/bench"
)

func main() {
	cycle := flag.Bool("cycle", false, "run one cycle after building the fixture")
	spares := flag.Bool("spares", false, "one spare host per rack")
	small := flag.Bool("small", false, "only the queue's jobs of at most 8 GPUs")
	second := flag.Bool("second", false, "run the first cycle in any case; -cycle runs the second")
	flag.Parse()
	fixture := bench.EngineFixture
	if *small {
		fixture = smallFixture
	}
	e, err := fixture("1M", 10000, *spares, bench.DefaultSeed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cycleprobe:", err)
		os.Exit(1)
	}
	now := int64(1)
	if *second {
		e.Cycle(now)
		now++
	}
	if *cycle {
		d := e.Cycle(now)
		fmt.Printf("%d binds, %d waiting\n", len(d.Binds), len(d.Pending))
	}
}

// smallFixture is bench.EngineFixture with the queue's gangs left out: the
// same draws, the jobs of more than 8 GPUs not submitted.
func smallFixture(gpus string, pending int, spares bool, seed uint64) (*blink.Engine, error) {
	s, _, err := bench.Loaded("nvl72", gpus, bench.EngineLoad, bench.DefaultSeed)
	if err != nil {
		return nil, err
	}
	var specs []blink.JobSpec
	for _, spec := range bench.PendingSpecs(s.Tree(), pending, seed) {
		if spec.Sets[0].Pods*spec.Sets[0].GPUs <= 8 {
			specs = append(specs, spec)
		}
	}
	return bench.EngineOver(s, specs, bench.EngineConfig(s.Tree(), spares))
}
