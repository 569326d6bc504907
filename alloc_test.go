package blink_test

import (
	"testing"

	"github.com/blinksched/blink"
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
