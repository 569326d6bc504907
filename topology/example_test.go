package topology_test

import (
	"bytes"
	"fmt"

	"github.com/blinksched/blink/topology"
)

// A regular cluster shaped like a small NVL72 deployment: one block of two
// racks, three 4-GPU hosts per rack.
func ExampleBuildShape() {
	tree, err := topology.BuildShape(topology.Shape{
		Levels:      []string{"block", "rack"},
		FanOut:      []int{1, 2, 3}, // 1 block, 2 racks per block, 3 hosts per rack
		GPUsPerHost: 4,
		Model:       "GB200",
	})
	if err != nil {
		panic(err)
	}
	for l := topology.Level(1); l <= tree.HostLevel(); l++ {
		fmt.Printf("level %d: %s\n", l, tree.LevelName(l))
	}
	for d := range topology.DomainID(tree.NumDomains()) {
		lo, hi := tree.GPUs(d)
		fmt.Printf("domain %d %-14q GPUs [%d, %d)\n", d, tree.DomainPath(d), lo, hi)
	}
	for h := range topology.HostID(tree.NumHosts()) {
		lo, hi := tree.HostGPUs(h)
		fmt.Printf("host %d %-18s GPUs [%d, %d)\n", h, tree.HostName(h), lo, hi)
	}
	// Output:
	// level 1: block
	// level 2: rack
	// level 3: host
	// domain 0 ""             GPUs [0, 24)
	// domain 1 "block0"       GPUs [0, 24)
	// domain 2 "block0/rack0" GPUs [0, 12)
	// domain 3 "block0/rack1" GPUs [12, 24)
	// host 0 block0/rack0/host0 GPUs [0, 4)
	// host 1 block0/rack0/host1 GPUs [4, 8)
	// host 2 block0/rack0/host2 GPUs [8, 12)
	// host 3 block0/rack1/host0 GPUs [12, 16)
	// host 4 block0/rack1/host1 GPUs [16, 20)
	// host 5 block0/rack1/host2 GPUs [20, 24)
}

// Named hosts with one topology label per level, as Kubernetes node labels
// give them. Domains are numbered depth-first in order of first appearance,
// so node-3 (rack r7, listed first) gets the lowest host id.
func ExampleBuildHosts() {
	tree, err := topology.BuildHosts([]string{"zone", "rack"}, []topology.HostSpec{
		{Name: "node-3", Path: []string{"us-east", "r7"}, GPUs: 8, Model: "H100", CPUMilli: 96000, MemoryMiB: 1 << 20},
		{Name: "node-1", Path: []string{"us-east", "r2"}, GPUs: 8, Model: "H100", CPUMilli: 96000, MemoryMiB: 1 << 20},
		{Name: "cpu-0", Path: []string{"us-west", "r2"}, GPUs: 0, CPUMilli: 64000, MemoryMiB: 1 << 18},
		{Name: "node-2", Path: []string{"us-east", "r7"}, GPUs: 4, Model: "A100", CPUMilli: 48000, MemoryMiB: 1 << 19},
	})
	if err != nil {
		panic(err)
	}
	for d := range topology.DomainID(tree.NumDomains()) {
		lo, hi := tree.Hosts(d)
		fmt.Printf("domain %d %-12q level %-4s hosts [%d, %d)\n", d, tree.DomainPath(d), tree.LevelName(tree.DomainLevel(d)), lo, hi)
	}
	for h := range topology.HostID(tree.NumHosts()) {
		lo, hi := tree.HostGPUs(h)
		fmt.Printf("host %d %-6s in %-10s GPUs [%d, %d) model %q\n",
			h, tree.HostName(h), tree.DomainPath(tree.HostParent(h)), lo, hi, tree.ModelName(tree.HostModel(h)))
	}
	h, _ := tree.HostByName("node-1")
	fmt.Println("node-1 is host", h)
	// Output:
	// domain 0 ""           level      hosts [0, 4)
	// domain 1 "us-east"    level zone hosts [0, 3)
	// domain 2 "us-west"    level zone hosts [3, 4)
	// domain 3 "us-east/r7" level rack hosts [0, 2)
	// domain 4 "us-east/r2" level rack hosts [2, 3)
	// domain 5 "us-west/r2" level rack hosts [3, 4)
	// host 0 node-3 in us-east/r7 GPUs [0, 8) model "H100"
	// host 1 node-2 in us-east/r7 GPUs [8, 12) model "A100"
	// host 2 node-1 in us-east/r2 GPUs [12, 20) model "H100"
	// host 3 cpu-0  in us-west/r2 GPUs [20, 20) model ""
	// node-1 is host 2
}

// Applying Deltas: a two-pod job, a Delta rejected because its GPUs are
// taken (the State is left exactly as it was), and the job's removal.
func ExampleState_Apply() {
	tree, err := topology.BuildShape(topology.Shape{
		Levels: []string{"block", "rack"}, FanOut: []int{1, 2, 3}, GPUsPerHost: 4, Model: "GB200",
	})
	if err != nil {
		panic(err)
	}
	s := topology.NewState(tree)
	racks, _ := tree.LevelDomains(2)
	show := func() {
		for r := racks; r < racks+2; r++ {
			fmt.Printf("  %s: %d free GPUs, room for %d 4-GPU pods, %d 2-GPU pods\n",
				tree.DomainPath(r), s.Free(r), s.PodCapacity(r, 4), s.PodCapacity(r, 2))
		}
	}
	fmt.Println("empty:")
	show()

	host := func(name string) topology.HostID {
		h, _ := tree.HostByName(name)
		return h
	}
	train := topology.Job{Priority: 10, Sets: []topology.PodSet{{Count: 2, GPUs: 4}}}
	err = s.Apply(topology.Delta{Ops: []topology.Op{
		topology.AddJob(1, train,
			topology.Pod{Host: host("block0/rack0/host0"), GPUs: 0b1111},
			topology.Pod{Host: host("block0/rack0/host1"), GPUs: 0b1111}),
	}})
	fmt.Println("add job 1:", err)
	show()

	before, _ := s.MarshalBinary()
	err = s.Apply(topology.Delta{Ops: []topology.Op{
		topology.AddJob(2, topology.Job{}, topology.Pod{Host: host("block0/rack1/host0"), GPUs: 0b0011}),
		topology.AddJob(3, topology.Job{}, topology.Pod{Host: host("block0/rack0/host1"), GPUs: 0b0100}),
	}})
	fmt.Println("add jobs 2 and 3:", err)
	after, _ := s.MarshalBinary()
	fmt.Println("  state unchanged:", bytes.Equal(before, after), "- job 2 present:", s.HasJob(2))
	show()

	err = s.Apply(topology.Delta{Ops: []topology.Op{topology.RemoveJob(1)}})
	fmt.Println("remove job 1:", err)
	show()
	fmt.Println("check:", s.Check())
	// Output:
	// empty:
	//   block0/rack0: 12 free GPUs, room for 3 4-GPU pods, 6 2-GPU pods
	//   block0/rack1: 12 free GPUs, room for 3 4-GPU pods, 6 2-GPU pods
	// add job 1: <nil>
	//   block0/rack0: 4 free GPUs, room for 1 4-GPU pods, 2 2-GPU pods
	//   block0/rack1: 12 free GPUs, room for 3 4-GPU pods, 6 2-GPU pods
	// add jobs 2 and 3: op 1 (add job): pod 0: topology: stale: GPU 2 of host block0/rack0/host1 is in use
	//   state unchanged: true - job 2 present: false
	//   block0/rack0: 4 free GPUs, room for 1 4-GPU pods, 2 2-GPU pods
	//   block0/rack1: 12 free GPUs, room for 3 4-GPU pods, 6 2-GPU pods
	// remove job 1: <nil>
	//   block0/rack0: 12 free GPUs, room for 3 4-GPU pods, 6 2-GPU pods
	//   block0/rack1: 12 free GPUs, room for 3 4-GPU pods, 6 2-GPU pods
	// check: <nil>
}
