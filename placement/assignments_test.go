package placement_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// A gang of two pod sets on named hosts: a 4-GPU launcher and three 2-GPU
// workers, exported for binding by host name and GPU index.
func ExamplePlan_Assignments() {
	tree, _ := topology.BuildHosts([]string{"rack"}, []topology.HostSpec{
		{Name: "gpu-a", Path: []string{"r1"}, GPUs: 8, CPUMilli: topology.Unlimited, MemoryMiB: topology.Unlimited},
		{Name: "gpu-b", Path: []string{"r1"}, GPUs: 8, CPUMilli: topology.Unlimited, MemoryMiB: topology.Unlimited},
	})
	s := topology.NewState(tree)
	req := placement.Request{Job: 1, Sets: []placement.PodSet{{Pods: 1, GPUs: 4}, {Pods: 3, GPUs: 2, CPUMilli: 8000}}}
	var solver placement.Solver
	var plan placement.Plan
	if ok, why, err := solver.Place(s, &req, &plan); !ok || err != nil {
		fmt.Println(why.Format(tree), err)
		return
	}
	for _, a := range plan.Assignments(tree) {
		fmt.Printf("rank %d (set %d) → %s GPUs %v cpu %dm\n", a.Rank, a.Set, a.Host, a.GPUs, a.CPUMilli)
	}
	// Output:
	// rank 0 (set 0) → gpu-a GPUs [0 1 2 3] cpu 0m
	// rank 1 (set 1) → gpu-b GPUs [0 1] cpu 8000m
	// rank 2 (set 1) → gpu-b GPUs [2 3] cpu 8000m
	// rank 3 (set 1) → gpu-b GPUs [4 5] cpu 8000m
}

// Assignments mirror the plan's pods exactly, fractions and CPU-only pods
// included, and their GPU slices do not alias each other's growth.
func TestAssignments(t *testing.T) {
	tree, err := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{2, 3}, GPUsPerHost: 4})
	if err != nil {
		t.Fatal(err)
	}
	s := topology.NewState(tree)
	req := placement.Request{Job: 3, Sets: []placement.PodSet{
		{Pods: 2, GPUs: 1, Milli: 250}, {Pods: 2, GPUs: 0, CPUMilli: 500}, {Pods: 3, GPUs: 3}}}
	var solver placement.Solver
	var plan placement.Plan
	ok, why, err := solver.Place(s, &req, &plan)
	if !ok || err != nil {
		t.Fatal(why.Format(tree), err)
	}
	as := plan.Assignments(tree)
	if len(as) != len(plan.Pods) {
		t.Fatalf("%d assignments for %d pods", len(as), len(plan.Pods))
	}
	wantSet := []int{0, 0, 1, 1, 2, 2, 2}
	for i, a := range as {
		p := plan.Pods[i]
		var gpus []int
		for g := range 64 {
			if p.GPUs&(1<<g) != 0 {
				gpus = append(gpus, g)
			}
		}
		if a.Rank != i || a.Set != wantSet[i] || a.Host != tree.HostName(p.Host) || !slices.Equal(a.GPUs, gpus) ||
			a.Milli != p.Milli || a.CPUMilli != p.CPUMilli || a.MemoryMiB != p.MemoryMiB {
			t.Errorf("assignment %d = %+v, pod %+v", i, a, p)
		}
		if cap(a.GPUs) != len(a.GPUs) {
			t.Errorf("assignment %d: GPUs has spare capacity %d > %d: an append would overwrite the next pod's", i, cap(a.GPUs), len(a.GPUs))
		}
	}
	if as[0].Milli != 250 || len(as[0].GPUs) != 1 || len(as[2].GPUs) != 0 || len(as[4].GPUs) != 3 {
		t.Errorf("shapes: %+v", as)
	}
}
