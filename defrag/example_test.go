package defrag_test

import (
	"fmt"

	"github.com/blinksched/blink/defrag"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// exampleCluster is 3 racks of 2 hosts of 4 GPUs; every rack holds a small
// movable job, so no rack is entirely free.
func exampleCluster() *topology.State {
	tree, err := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{3, 2}, GPUsPerHost: 4})
	if err != nil {
		panic(err)
	}
	s := topology.NewState(tree)
	small := topology.Job{Priority: 1, Preemptible: true, Movable: true, Required: topology.NoLevel, Preferred: topology.NoLevel}
	for _, op := range []topology.Op{
		topology.AddJob(1, small, topology.Pod{Host: 0, GPUs: 0b0001}), // rack0: 1 GPU
		topology.AddJob(2, small, topology.Pod{Host: 2, GPUs: 0b0011}), // rack1: 2 GPUs
		topology.AddJob(3, small, topology.Pod{Host: 5, GPUs: 0b0111}), // rack2: 3 GPUs
	} {
		if err := s.Apply(topology.Delta{Ops: []topology.Op{op}}); err != nil {
			panic(err)
		}
	}
	return s
}

// MakeRoom finds the fewest moves after which a rack job fits: here one,
// moving the 1-GPU job out of rack0 to the last free GPU of a host in rack2
// (best fit).
func ExamplePlanner_MakeRoom() {
	s := exampleCluster()
	t := s.Tree()
	rack, _ := t.LevelByName("rack")
	req := &placement.Request{Job: 9, Priority: 100, Required: rack, Preferred: topology.NoLevel,
		Sets: []placement.PodSet{{Pods: 2, GPUs: 4}}}
	var p defrag.Planner
	var plan defrag.Plan
	res, err := p.MakeRoom(s, req, defrag.Config{MaxMoves: 4}, &plan)
	if err != nil {
		panic(err)
	}
	fmt.Println("fits:", res.Fits, "exact:", res.Exact, "target:", t.DomainPath(plan.Target))
	for _, mv := range plan.Moves {
		fmt.Printf("move job %d to %s GPUs %04b\n", mv.Job, t.HostName(mv.Pods[0].Host), mv.Pods[0].GPUs)
	}
	for _, pod := range plan.Request.Pods {
		fmt.Println("request pod on", t.HostName(pod.Host))
	}
	// Apply the moves, then the request.
	if err := s.Apply(plan.Delta()); err != nil {
		panic(err)
	}
	if err := s.Apply(plan.Request.Delta()); err != nil {
		panic(err)
	}
	fmt.Println("rack0 free GPUs:", s.Free(plan.Target))
	// Output:
	// fits: true exact: true target: rack0
	// move job 1 to rack2/host1 GPUs 1000
	// request pod on rack0/host0
	// request pod on rack0/host1
	// rack0 free GPUs: 0
}

// Compact frees whole racks: two moves empty rack0 and rack1, the jobs going
// where they fit best, in rack2.
func ExamplePlanner_Compact() {
	s := exampleCluster()
	t := s.Tree()
	rack, _ := t.LevelByName("rack")
	var p defrag.Planner
	var plan defrag.Plan
	out, err := p.Compact(s, defrag.Goal{Kind: defrag.FreeDomains, Level: rack}, defrag.Config{MaxMoves: 2}, &plan)
	if err != nil {
		panic(err)
	}
	for _, mv := range plan.Moves {
		fmt.Printf("move job %d to %s\n", mv.Job, t.HostName(mv.Pods[0].Host))
	}
	fmt.Printf("free racks: %d → %d, reached: %v\n", out.Before, out.After, out.Reached)
	// Output:
	// move job 1 to rack2/host1
	// move job 2 to rack2/host0
	// free racks: 0 → 2, reached: true
}

// Meter reports topology fragmentation per level.
func ExampleMeter() {
	s := exampleCluster()
	var m defrag.Meter
	var got defrag.Metrics
	m.Measure(s, 4, &got)
	for _, l := range got.Levels {
		name := s.Tree().LevelName(l.Level)
		if name == "" {
			name = "root"
		}
		fmt.Printf("%-5s free %2d of %d domains, %2d GPUs in them, topofrag %.2f, largest 4-GPU gang %d\n",
			name, l.FreeDomains, l.Domains, l.FreeInFreeDomains, l.TopoFrag(), l.LargestGang)
	}
	fmt.Println("free GPUs:", got.FreeGPUs, "stranded milli:", got.SharedMilli)
	// Output:
	// root  free  0 of 1 domains,  0 GPUs in them, topofrag 1.00, largest 4-GPU gang 3
	// rack  free  0 of 3 domains,  0 GPUs in them, topofrag 1.00, largest 4-GPU gang 1
	// host  free  3 of 6 domains, 12 GPUs in them, topofrag 0.33, largest 4-GPU gang 1
	// free GPUs: 18 stranded milli: 0
}
