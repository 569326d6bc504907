package preempt_test

import (
	"fmt"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
)

// Two racks of two 8-GPU hosts, every GPU busy. A priority-50 gang of two
// whole hosts in one rack must evict: rack r0 holds one priority-1 job on
// each host, rack r1 a priority-1 job and one of priority 5. The planner
// evicts r0's two jobs (the lowest highest priority), nominates their GPUs
// for the gang, and the plan applies once they are gone. Then a priority-3
// gang finds nothing it may evict.
func ExamplePlanner_Plan() {
	var hosts []topology.HostSpec
	for i, rack := range []string{"r0", "r0", "r1", "r1"} {
		hosts = append(hosts, topology.HostSpec{Name: fmt.Sprintf("h%d", i), Path: []string{rack}, GPUs: 8})
	}
	tree, _ := topology.BuildHosts([]string{"rack"}, hosts)
	s := topology.NewState(tree)
	for i, prio := range []int32{1, 1, 1, 5} {
		job := topology.Job{Priority: prio, Preemptible: true}
		_ = s.Apply(topology.Delta{Ops: []topology.Op{
			topology.AddJob(topology.JobID(i), job, topology.Pod{Host: topology.HostID(i), GPUs: 0xFF})}})
	}
	rack, _ := tree.LevelByName("rack")
	req := placement.Request{Job: 10, Priority: 50, Required: rack, Sets: []placement.PodSet{{Pods: 2, GPUs: 8}}}

	var p preempt.Planner
	var res preempt.Result
	ok, _, err := p.Plan(s, &req, 100, 200, &res)
	fmt.Println(ok, err, res.Victims, res.Cost, res.Exact)
	fmt.Println("nominated", len(res.Nomination.GPUs), "GPUs in", tree.DomainPath(res.Scope))
	fmt.Println(s.Apply(res.Delta())) // reserve the GPUs while the victims terminate
	for _, j := range res.Victims {
		_ = s.Apply(topology.Delta{Ops: []topology.Op{topology.RemoveJob(j)}})
	}
	fmt.Println(s.Apply(res.Plan.Delta())) // the gang starts; its nomination is released

	req.Job, req.Priority = 11, 3
	ok, why, _ := p.Plan(s, &req, 100, 200, &res)
	fmt.Println(ok, why.Format(tree))
	// Output:
	// true <nil> [0 1] priority 1, 2 victims, 16000 milli-GPU true
	// nominated 16 GPUs in r0
	// <nil>
	// <nil>
	// false rack r1 would fit only after evicting job 3 (priority 5), whose priority is not below the request's 3
}
