package blink_test

import (
	"testing"

	"github.com/blinksched/blink"
)

// A job required on one host keeps its replacements on that host: free GPUs
// there, else lower-priority work there, else the job is rescheduled. A spare
// or a free host beside it is another host. (FuzzLoop found repairs that
// moved a faulted pod of such a job to a neighbour in its rack.)

// hostJob places E, two pods of one GPU required on one host, on host 0 of
// one rack of two 4-GPU hosts.
func hostJob(t *testing.T, cfg blink.Config) (*harness, blink.JobID) {
	h := newHarness(t, racks(1, 2, 4), cfg)
	spec := gang(2, 1, 10)
	spec.Required = h.tree.HostLevel()
	E := h.submit(0, spec)
	h.confirmAll(h.cycle(0))
	return h, E
}

func TestRepairRequiredHostStaysOnItsHost(t *testing.T) {
	h, E := hostJob(t, blink.Config{})
	h.wantPic(`
		rack0 |AA..|....|
	`)
	h.ok(h.e.GPUFailed(0)) // rank 0
	r := oneRepair(t, h.cycle(1))
	if r.Job != E || r.Requeued || r.Source != blink.FromFree || r.Pods[0].Host != 0 {
		t.Fatalf("repair %+v, want rank 0 on host 0 beside rank 1", r)
	}
	h.check()
}

func TestRepairRequiredHostRequeuedWhenItsHostIsFull(t *testing.T) {
	h, E := hostJob(t, blink.Config{})
	F := gang(1, 2, 20)
	F.Required = h.tree.HostLevel()
	h.submit(1, F)
	h.confirmAll(h.cycle(1))
	h.wantPic(`
		rack0 |AABB|....|
	`)
	h.ok(h.e.GPUFailed(0))
	r := oneRepair(t, h.cycle(2))
	if r.Job != E || !r.Requeued {
		t.Fatalf("repair %+v: host 0 has no room for rank 0, and host 1 is another host", r)
	}
	h.check()
}

func TestRepairRequiredHostTakesNoSpare(t *testing.T) {
	h, E := hostJob(t, blink.Config{Spares: []blink.SparePolicy{{Level: 1, Hosts: 1}}})
	h.wantPic(`
		rack0 |AA..|....s|
	`)
	h.ok(h.e.GPUFailed(1)) // rank 1
	r := oneRepair(t, h.cycle(1))
	if r.Job != E || r.Source != blink.FromFree || r.Pods[1].Host != 0 {
		t.Fatalf("repair %+v, want rank 1 on host 0, not on the spare", r)
	}
	h.check()
}

func TestRepairRequiredHostPreemptsThere(t *testing.T) {
	h, E := hostJob(t, blink.Config{})
	F := filler(1, 2, 1)
	F.Required = h.tree.HostLevel()
	B := h.submit(1, F)
	h.confirmAll(h.cycle(1))
	h.wantPic(`
		rack0 |AABB|....|
	`)
	h.ok(h.e.GPUFailed(0))
	r := oneRepair(t, h.cycle(2))
	if r.Job != E || r.Source != blink.FromPreemption || r.Pods[0].Host != 0 || len(r.Victims) != 1 || r.Victims[0] != B {
		t.Fatalf("repair %+v, want rank 0 on host 0 in place of filler %v", r, B)
	}
	h.check()
}
