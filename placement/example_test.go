package placement_test

import (
	"fmt"
	"strings"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// A rack-required gang on three NVL72 racks (18 hosts of 4 GPUs each): rack1
// has two busy hosts, so its 16 free hosts fit a 16-pod gang exactly, and
// best fit takes it over the empty racks. The plan is applied; then a 19-pod
// gang fits no rack.
func ExampleSolver_Place() {
	tree, _ := topology.BuildShape(topology.Shape{Levels: []string{"block", "rack"},
		FanOut: []int{1, 3, 18}, GPUsPerHost: 4, Model: "GB200"})
	s := topology.NewState(tree)
	rack1, _ := tree.DomainByPath([]string{"block0", "rack1"})
	lo, _ := tree.Hosts(rack1)
	_ = s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(1, topology.Job{Priority: 1},
		topology.Pod{Host: lo, GPUs: 0xF}, topology.Pod{Host: lo + 1, GPUs: 0xF})}})

	rack, _ := tree.LevelByName("rack")
	req := placement.Request{Job: 2, Required: rack, Sets: []placement.PodSet{{Pods: 16, GPUs: 4}}}
	var solver placement.Solver
	var plan placement.Plan
	ok, _, err := solver.Place(s, &req, &plan)
	fmt.Println(ok, err, tree.DomainPath(plan.Domain))
	var hosts []string
	for _, p := range plan.Pods {
		hosts = append(hosts, strings.TrimPrefix(tree.HostName(p.Host), "block0/rack1/"))
	}
	fmt.Println(strings.Join(hosts, " "))
	fmt.Println(s.Apply(plan.Delta()))

	req.Job, req.Sets[0].Pods = 3, 19
	ok, why, err := solver.Place(s, &req, &plan)
	fmt.Println(ok, err, why.Format(tree))
	// Output:
	// true <nil> block0/rack1
	// host2 host3 host4 host5 host6 host7 host8 host9 host10 host11 host12 host13 host14 host15 host16 host17
	// <nil>
	// false <nil> required rack: the largest rack fits 18 of 19 pods
}
