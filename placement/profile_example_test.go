package placement_test

import (
	"fmt"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// With a profile of the workload (one-GPU pods of 4 cores), a one-GPU pod
// of 8 cores goes where it destroys the least capacity for them: host b,
// which keeps room for one more. BestFit takes host a, the smallest
// capacity for the pod, and strands a's second GPU without CPU.
func ExampleSolver_SetProfile() {
	tree, _ := topology.BuildHosts(nil, []topology.HostSpec{
		{Name: "a", GPUs: 2, Model: "T4", CPUMilli: 8000, MemoryMiB: 65536},
		{Name: "b", GPUs: 2, Model: "T4", CPUMilli: 64000, MemoryMiB: 65536},
	})
	s := topology.NewState(tree)
	var solver placement.Solver
	err := solver.SetProfile(tree, &placement.Profile{Shapes: []placement.ProfileShape{
		{GPUs: 1, CPUMilli: 4000, Weight: 1}}})
	fmt.Println(err)
	req := placement.Request{Job: 1, Sets: []placement.PodSet{{Pods: 1, GPUs: 1, CPUMilli: 8000}}}
	var plan placement.Plan
	ok, _, err := solver.Place(s, &req, &plan)
	fmt.Println(ok, err, tree.HostName(plan.Pods[0].Host))

	var bestFit placement.Solver
	ok, _, err = bestFit.Place(s, &req, &plan)
	fmt.Println(ok, err, tree.HostName(plan.Pods[0].Host))
	// Output:
	// <nil>
	// true <nil> b
	// true <nil> a
}
