package blink_test

import (
	"testing"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/placement"
)

// A gang of fractions needs the GPUs its milli fill, not a GPU a pod: seven
// pods of a quarter GPU fit on the two healthy GPUs of a host whose other
// two failed (found by FuzzEngine: the engine answered never fits, counting
// 7 GPUs).
func TestFractionsNeedTheirMilli(t *testing.T) {
	h := newHarness(t, racks(1, 1, 4), blink.Config{})
	h.ok(h.e.GPUFailed(0))
	h.ok(h.e.GPUFailed(1))
	A := h.submit(0, blink.JobSpec{Sets: []placement.PodSet{{Pods: 4, GPUs: 1, Milli: 250}, {Pods: 3, GPUs: 1, Milli: 250}}})
	d := h.cycle(0)
	if r, ok := reasonOf(d, A); ok {
		t.Fatalf("job waits: %v", r.Format(h.tree))
	}
	if len(d.Binds) != 1 || len(d.Binds[0].Pods) != 7 {
		t.Fatalf("binds %+v", d.Binds)
	}
	h.check()
}
