package bench

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/blinksched/blink"
)

// BenchmarkCycle times one blink.Engine.Cycle over a loaded cluster with a
// queue of pending jobs (EngineFixture: NVL72 at 90% load, PendingMix,
// EngineConfig; spares=rack adds one spare host per rack). Every iteration
// starts from the same engine: a clone made outside the timer. Reports
// decisions/s (binds, reservations, preemptions, moves, repairs and waiting
// reasons, per second of cycle), binds/op (how many of the queue fit) and
// the ratio to the floor. cycle=2 times the cycle after that one, with
// nothing new submitted: the queue holds what did not fit, a reservation
// and a preemption's nomination are in place (the steady state of a full
// cluster).
func BenchmarkCycle(b *testing.B) {
	for _, c := range []struct {
		gpus    string
		pending int
		spares  bool
		second  bool
	}{{"131k", 1000, false, false}, {"1M", 10000, false, false}, {"1M", 10000, true, false}, {"1M", 10000, false, true}} {
		name := fmt.Sprintf("gpus=%s/pending=%s", c.gpus, kilo(c.pending))
		if c.spares {
			name += "/spares=rack"
		}
		if c.second {
			name += "/cycle=2"
		}
		b.Run(name, func(b *testing.B) { benchCycle(b, c.gpus, c.pending, c.spares, c.second) })
	}
}

func kilo(n int) string {
	if n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

func benchCycle(b *testing.B, gpus string, pending int, spares, second bool) {
	base, err := EngineFixture(gpus, pending, spares, DefaultSeed)
	if err != nil {
		b.Fatal(err)
	}
	now := int64(1)
	if second {
		base.Cycle(now) // the first cycle, outside the timer
		now++
	}
	// One checked run: the decisions leave a consistent engine.
	check := base.Clone()
	d := check.Cycle(now)
	if err := check.Check(); err != nil {
		b.Fatal(err)
	}
	binds, decisions := len(d.Binds), decisionCount(d)
	b.ReportAllocs()
	b.ResetTimer()
	var e *blink.Engine
	for b.Loop() {
		b.StopTimer()
		e = base.Clone()
		runtime.GC() // the last clone's garbage is the harness's, not the cycle's
		b.StartTimer()
		d = e.Cycle(now)
	}
	if len(d.Binds) != binds {
		b.Fatalf("a cycle bound %d jobs, the checked run %d: iterations differ", len(d.Binds), binds)
	}
	b.ReportMetric(float64(binds), "binds/op")
	b.ReportMetric(float64(decisions)*float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	ReportRatio(b, gpus)
}

func decisionCount(d blink.Decisions) int {
	return len(d.Binds) + len(d.Pending) + len(d.Preemptions) + len(d.Moves) + len(d.Repairs)
}

// BenchmarkRepair times a host failure under a running rack gang and its
// repair from a spare of the same rack (evicting the spare's filler): the
// HostFailed report plus the Cycle that decides and records the Repair.
// Iteration i fails a gang host of rack i of RepairFixture (identical
// racks); when every rack has had its fault the fixture is cloned again
// outside the timer (and warmed by one repair in rack 0). Reports repairs/s and the ratio to the floor.
func BenchmarkRepair(b *testing.B) {
	for _, gpus := range []string{"1M"} {
		b.Run("gpus="+gpus, func(b *testing.B) { benchRepair(b, gpus) })
	}
}

func benchRepair(b *testing.B, gpus string) {
	base, hosts, err := RepairFixture(gpus)
	if err != nil {
		b.Fatal(err)
	}
	// One checked run.
	e := base.Clone()
	if err := e.HostFailed(hosts[0] + 3); err != nil {
		b.Fatal(err)
	}
	d := e.Cycle(1)
	if len(d.Repairs) != 1 || d.Repairs[0].Source != blink.FromSpare || len(d.Repairs[0].Victims) != 1 {
		b.Fatalf("repair %+v", d.Repairs)
	}
	if err := e.Check(); err != nil {
		b.Fatal(err)
	}
	// A fresh clone's tables have no spare capacity: its first repair grows
	// the pod arena. That one runs outside the timer, on rack 0.
	fresh := func() *blink.Engine {
		e := base.Clone()
		if err := e.HostFailed(hosts[0] + 3); err != nil {
			b.Fatal(err)
		}
		e.Cycle(1)
		runtime.GC() // the clone's garbage is the harness's, not the repairs'
		return e
	}
	e = fresh()
	next, now := 1, int64(1)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if next == len(hosts) {
			b.StopTimer()
			e, next = fresh(), 1
			b.StartTimer()
		}
		if err := e.HostFailed(hosts[next] + 3); err != nil {
			b.Fatal(err)
		}
		d = e.Cycle(now)
		if len(d.Repairs) != 1 {
			b.Fatalf("iteration %d: repairs %+v", next, d.Repairs)
		}
		next++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	ReportRatio(b, gpus)
}
