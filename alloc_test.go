package blink_test

import (
	"errors"
	"runtime"
	"slices"
	"testing"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/topology"
)

// TestCycleAllocs: a warmed-up cycle over a queue that does not fit (the
// common case of a loaded cluster) allocates nothing.
func TestCycleAllocs(t *testing.T) {
	h := newHarness(t, racks(4, 4, 4), blink.Config{MaxReservations: -1})
	h.submit(0, gang(16, 4, 100))
	h.confirmAll(h.cycle(0))
	for i := range 100 {
		h.submit(1, gang(int32(1+i%3), 4, int32(i%7)))
	}
	now := int64(2)
	h.cycle(now)
	allocs := testing.AllocsPerRun(20, func() {
		now++
		h.e.Cycle(now)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per cycle", allocs)
	}
}

// TestFirstCycleAllocs: the first cycle over a queue longer than any before
// (every job fits) allocates nothing once the engine has seen its shapes:
// Submit sized the decision buffers, the bind timers and the State's tables.
// The engines are identical, so a cycle that allocates does so on each; the
// least count of firstCycles such cycles is the cycle's own. A single one
// counted an allocation now and then (~2 runs in 300 of the test in one
// process, before this test took the least: the runtime's own, such as a
// collection starting its workers; the allocation profile showed none in
// the cycle's code).
func TestFirstCycleAllocs(t *testing.T) {
	const firstCycles = 5
	var hs [firstCycles]*harness
	for i := range hs {
		hs[i] = firstCycleReady(t)
	}
	var counts [firstCycles]uint64
	for i, h := range hs {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d := h.e.Cycle(2)
		runtime.ReadMemStats(&after)
		if len(d.Binds) != 100 {
			t.Fatalf("%d binds, want 100", len(d.Binds))
		}
		counts[i] = after.Mallocs - before.Mallocs
	}
	if n := slices.Min(counts[:]); n != 0 {
		t.Fatalf("allocations in a first cycle over 100 jobs, on %d identical engines: %v", firstCycles, counts)
	}
}

// firstCycleReady is an engine that has bound and finished jobs of the
// shapes of the 100 it then has queued.
func firstCycleReady(t *testing.T) *harness {
	h := newHarness(t, racks(8, 8, 4), blink.Config{MaxReservations: -1})
	submit := func(n int) {
		for i := range n {
			h.submit(1, gang(int32(1+i%2), 1, int32(i%3)))
		}
	}
	submit(20) // the shapes, once
	d := h.cycle(1)
	h.confirmAll(d)
	for _, b := range d.Binds {
		if err := h.e.Finished(b.Job); err != nil {
			t.Fatal(err)
		}
	}
	submit(100)
	return h
}

// TestSubmitRoomBounded: the room Submit makes is bounded by the cluster, not
// by the pods a spec asks for: a job of 2^24 pods on a 16-GPU cluster costs
// Submit kilobytes; one of 2^30 pods that ask for nothing (no other bound
// applies) is refused, and changes nothing.
func TestSubmitRoomBounded(t *testing.T) {
	h := newHarness(t, racks(2, 2, 4), blink.Config{})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	h.submit(0, gang(topology.MaxJobPods, 1, 1))
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("Submit allocated %d bytes for a job that cannot fit", n)
	}
	h.check()
	was := h.e.Fingerprint()
	if _, err := h.e.Submit(0, gang(1<<30, 0, 1)); !errors.Is(err, blink.ErrInvalid) {
		t.Fatalf("a job of 2^30 pods: %v, want ErrInvalid", err)
	}
	if h.e.Fingerprint() != was {
		t.Fatal("a refused Submit changed the engine")
	}
	d := h.e.Cycle(1)
	if len(d.Binds) != 0 || len(d.Pending) != 1 {
		t.Fatalf("cycle: %+v", d)
	}
}

// TestRepairAllocs: a repair from a spare — a host fault under a rack gang,
// the rack's spare holding filler — allocates nothing once a first repair
// has sized the engine's buffers (BenchmarkRepair's path, on a small tree).
func TestRepairAllocs(t *testing.T) {
	const racks = 10
	h := newHarness(t, topology.Shape{Levels: []string{"rack"}, FanOut: []int{racks, 5}, GPUsPerHost: 4},
		blink.Config{Spares: []blink.SparePolicy{{Level: 1, Hosts: 1}}})
	for range racks {
		h.submit(0, h.rackGang(4, 10)) // hosts 0-3 of each rack; host 4 is its spare
	}
	h.confirmAll(h.cycle(0))
	for range racks {
		h.submit(1, filler(1, 4, 1)) // onto the spares
	}
	h.confirmAll(h.cycle(1))
	rack, now := 0, int64(2)
	allocs := testing.AllocsPerRun(racks-1, func() {
		if err := h.e.HostFailed(topology.HostID(5*rack + 1)); err != nil {
			t.Fatal(err)
		}
		d := h.e.Cycle(now)
		if len(d.Repairs) != 1 || d.Repairs[0].Source != blink.FromSpare || len(d.Repairs[0].Victims) != 1 {
			t.Fatalf("rack %d: repairs %+v", rack, d.Repairs)
		}
		rack++
		now++
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per repair", allocs)
	}
	h.check()
}
