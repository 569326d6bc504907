package blink_test

import (
	"fmt"
	"testing"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/topology"
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

// A spare of a model the faulted job does not accept is no replacement.
// (FuzzEngine found a repair from such a spare once every job's models were
// checked after every event.)
func TestRepairSpareOfAnotherModel(t *testing.T) {
	var hosts []topology.HostSpec
	for i, m := range []string{"A", "A", "B", "B"} {
		hosts = append(hosts, topology.HostSpec{Name: fmt.Sprintf("h%d", i), Path: []string{"rack0"}, GPUs: 4, Model: m,
			CPUMilli: topology.Unlimited, MemoryMiB: topology.Unlimited})
	}
	tree, err := topology.BuildHosts([]string{"rack"}, hosts)
	if err != nil {
		t.Fatal(err)
	}
	e, err := blink.New(topology.NewState(tree), blink.Config{Spares: []blink.SparePolicy{{Level: 1, Hosts: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, e: e, tree: tree}
	a, _ := tree.ModelByName("A")
	spec := gang(1, 4, 10)
	spec.Models = []int{a}
	J := h.submit(0, spec)
	h.confirmAll(h.cycle(0))
	h.wantPic(`
		rack0 |AAAA|....|....|....s|
	`)
	h.ok(h.e.HostFailed(0))
	r := oneRepair(t, h.cycle(1))
	if r.Job != J || r.Source != blink.FromFree || r.Pods[0].Host != 1 {
		t.Fatalf("repair %+v, want host 1 (model A), not the spare h3 (model B)", r)
	}
	h.check()
}

// A repair evicts only what preemption could: filler on a spare of a
// priority not below the faulted job's keeps its spare.
func TestRepairSpareKeepsHigherFiller(t *testing.T) {
	h := newHarness(t, racks(1, 3, 4), blink.Config{Spares: []blink.SparePolicy{{Level: 1, Hosts: 1}}})
	h.ok(h.e.Drain(0))
	h.ok(h.e.Drain(1))
	F := h.submit(0, filler(1, 4, 5)) // the spare, host 2: the others drain
	h.confirmAll(h.cycle(0))
	h.ok(h.e.Recovered(0))
	h.ok(h.e.Recovered(1))
	low := filler(1, 2, 1)
	low.Required = h.level("rack")
	P := h.submit(1, low)
	h.confirmAll(h.cycle(1))
	h.wantPic(`
		rack0 |BB..|....|AAAAs|
	`)
	h.ok(h.e.HostFailed(0))
	r := oneRepair(t, h.cycle(2))
	if r.Job != P || r.Source != blink.FromFree || r.Pods[0].Host != 1 {
		t.Fatalf("repair %+v, want host 1: the spare's filler %v outranks the job", r, F)
	}
	h.check()
}
