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

// Placing as if a job were gone, given its pods: one rack of 18 four-GPU
// hosts, full; job 1 holds hosts 0–3. A caller that read job 1's pods (a
// preemption planner choosing it) hands them over, and a 4-pod gang goes
// where job 1 is, once job 1 is gone.
func ExampleSolver_PlaceWithoutPods() {
	tree, _ := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{1, 18}, GPUsPerHost: 4})
	s := topology.NewState(tree)
	var ops []topology.Op
	var job1 []topology.Pod
	for h := range topology.HostID(18) {
		if h < 4 {
			job1 = append(job1, topology.Pod{Host: h, GPUs: 0xF})
			continue
		}
		ops = append(ops, topology.AddJob(topology.JobID(h), topology.Job{Priority: 5}, topology.Pod{Host: h, GPUs: 0xF}))
	}
	ops = append(ops, topology.AddJob(1, topology.Job{Priority: 1, Preemptible: true}, job1...))
	_ = s.Apply(topology.Delta{Ops: ops})

	gone := []topology.JobID{1}
	pods := s.AppendJobsPods(nil, gone, make([]int32, len(gone)))
	req := placement.Request{Job: 100, Priority: 9, Sets: []placement.PodSet{{Pods: 4, GPUs: 4}}}
	var solver placement.Solver
	var plan placement.Plan
	ok, _, err := solver.PlaceWithoutPods(s, &req, 0, gone, pods, &plan)
	fmt.Println(ok, err, len(pods), "pods given")
	var hosts []string
	for _, p := range plan.Pods {
		hosts = append(hosts, strings.TrimPrefix(tree.HostName(p.Host), "rack0/"))
	}
	fmt.Println(strings.Join(hosts, " "))
	_, _, err = solver.PlaceWithoutPods(s, &req, 0, gone, pods[:3], &plan)
	fmt.Println(err)
	// Output:
	// true <nil> 4 pods given
	// host0 host1 host2 host3
	// placement: invalid request: 3 pods given for jobs gone that have 4
}
