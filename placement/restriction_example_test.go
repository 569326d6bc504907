package placement_test

import (
	"fmt"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// A spare host per rack, closed to a production gang: rack0's last host is
// its spare, so rack0 holds only 3 of the gang's 4 whole-host pods and best
// fit, which would take the busier rack0, takes rack1 instead. With two of
// rack1's hosts closed too, no rack fits.
func ExampleRestriction() {
	tree, _ := topology.BuildShape(topology.Shape{Levels: []string{"block", "rack"},
		FanOut: []int{1, 2, 5}, GPUsPerHost: 4})
	s := topology.NewState(tree)
	rack0, _ := tree.DomainByPath([]string{"block0", "rack0"})
	rack1, _ := tree.DomainByPath([]string{"block0", "rack1"})
	lo0, hi0 := tree.Hosts(rack0)
	_, hi1 := tree.Hosts(rack1)
	_ = s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(1, topology.Job{Priority: 1},
		topology.Pod{Host: lo0, GPUs: 0xF})}})

	spares := placement.NewRestriction(tree)
	_ = spares.Close(hi0 - 1)
	rack, _ := tree.LevelByName("rack")
	req := placement.Request{Job: 2, Required: rack, Sets: []placement.PodSet{{Pods: 4, GPUs: 4}},
		Eligible: spares.Eligible(), Restriction: spares}
	var solver placement.Solver
	var plan placement.Plan
	ok, _, err := solver.Place(s, &req, &plan)
	fmt.Println(ok, err, tree.DomainPath(plan.Domain))

	_ = spares.Close(hi1 - 1)
	_ = spares.Close(hi1 - 2)
	req.Eligible = spares.Eligible()
	ok, why, err := solver.Place(s, &req, &plan)
	fmt.Println(ok, err, why.Format(tree))
	// Output:
	// true <nil> block0/rack1
	// false <nil> required rack: the largest rack fits 3 of 4 pods
}
