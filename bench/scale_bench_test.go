package bench_test

// An external test package: bench/scale imports bench, so package bench's
// own tests cannot import it.

import (
	"fmt"
	"testing"
	"time"

	"github.com/blinksched/blink/bench"
	"github.com/blinksched/blink/bench/scale"
)

// BenchmarkScale times `blink scale` (package bench/scale): a seeded stream
// of arrivals (scale.Mix) and departures against an engine over a cluster
// filled to 90%, one Cycle per event, its decisions confirmed at once. One
// op is the whole run; every op starts from a clone of the same engine, made
// outside the timer, after one checked run (Check after it, and every op
// must reproduce its digest). Reports the cycles' latency percentiles over
// all kinds (p50-ns, p99-ns) and as ratios to the floor (p50-xF, p99-xF),
// the place cycles' p99 ratio (place-p99-xF) and decisions/s. 200 events
// by default, so `-benchtime 1x` stays cheap; 2,000 and the 8M size with
// BLINK_BENCH_FULL=1. The command line equivalent:
//
//	go run ./cmd/blink scale -gpus 1M -shape nvl72 -load 0.9 -events 2000 -seed 1
func BenchmarkScale(b *testing.B) {
	events := 200
	if bench.Full() {
		events = 2000
	}
	for _, c := range []struct{ gpus, shape string }{{"1M", "nvl72"}, {"1M", "hgx"}, {"8M", "nvl72"}} {
		name := fmt.Sprintf("gpus=%s/shape=%s/load=90/events=%d", c.gpus, c.shape, events)
		b.Run(name, func(b *testing.B) {
			bench.SkipUnlessFull(b, c.gpus)
			benchScale(b, scale.Config{GPUs: c.gpus, Shape: c.shape, Load: 0.9, Events: events, Seed: bench.DefaultSeed})
		})
	}
}

func benchScale(b *testing.B, cfg scale.Config) {
	base, err := scale.Start(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := bench.FloorNs(cfg.GPUs); err != nil { // measured once, outside the timer
		b.Fatal(err)
	}
	// One checked run.
	e := base.Clone()
	r, err := scale.Play(e, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Check(); err != nil {
		b.Fatal(err)
	}
	digest := r.Digest
	var lat []time.Duration
	var placeLat []time.Duration
	decisions := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		e = base.Clone()
		b.StartTimer()
		r, err = scale.Play(e, cfg)
		if err != nil {
			b.Fatal(err)
		}
		if r.Digest != digest {
			b.Fatalf("digest %016x, the checked run %016x: runs differ", r.Digest, digest)
		}
		lat = append(lat, r.All()...)
		placeLat = append(placeLat, r.Latencies[scale.Place]...)
		decisions += r.Binds + r.Preemptions + r.Moves
	}
	b.StopTimer()
	reportLatency(b, lat, placeLat, r.FloorNs)
	b.ReportMetric(float64(decisions)/b.Elapsed().Seconds(), "decisions/s")
}

func reportLatency(b *testing.B, all, place []time.Duration, floorNs float64) {
	a, p := scale.LatencySummary("all", all, floorNs), scale.LatencySummary("place", place, floorNs)
	b.ReportMetric(a.P50*1e3, "p50-ns")
	b.ReportMetric(a.P99*1e3, "p99-ns")
	b.ReportMetric(a.P50xF, "p50-xF")
	b.ReportMetric(a.P99xF, "p99-xF")
	b.ReportMetric(p.P99xF, "place-p99-xF")
}
