package blink_test

import (
	"fmt"
	"testing"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/topology"
)

// Which spares a repair may take: one of a model the job accepts, whose
// filler it may evict (preemptible, of lower priority).

// A spare of a model the faulted job does not accept is no replacement.
// (FuzzEngine found a repair from such a spare once every job's models were
// checked after every event.)
func TestRepairSpareOfAnotherModel(t *testing.T) {
	var hosts []topology.HostSpec
	for i, m := range []string{"A", "A", "B", "B"} {
		hosts = append(hosts, topology.HostSpec{Name: fmt.Sprintf("h%d", i), Path: []string{"rack0"}, GPUs: 4, Model: m,
			CPUMilli: topology.Unlimited, MemoryMiB: topology.Unlimited})
	}
	h := newHarnessHosts(t, []string{"rack"}, hosts, blink.Config{Spares: []blink.SparePolicy{{Level: 1, Hosts: 1}}})
	a, _ := h.tree.ModelByName("A")
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
