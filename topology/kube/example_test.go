package kube_test

import (
	"fmt"

	"github.com/blinksched/blink/topology"
	"github.com/blinksched/blink/topology/kube"
)

// Two GKE nodes in one block, one of them cordoned, and a CPU node without
// topology labels.
func ExampleParseNodeList() {
	nodes := `{"kind": "List", "items": [
 {"metadata": {"name": "a3-1", "labels": {"cloud.google.com/gce-topology-block": "b1",
   "cloud.google.com/gce-topology-subblock": "s1", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}},
  "status": {"allocatable": {"cpu": "207500m", "memory": "1846700Mi", "nvidia.com/gpu": "8"},
   "conditions": [{"type": "Ready", "status": "True"}]}},
 {"metadata": {"name": "a3-2", "labels": {"cloud.google.com/gce-topology-block": "b1",
   "cloud.google.com/gce-topology-subblock": "s2", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}},
  "spec": {"unschedulable": true},
  "status": {"allocatable": {"cpu": "207", "memory": "1.8T", "nvidia.com/gpu": "8"},
   "conditions": [{"type": "Ready", "status": "True"}]}},
 {"metadata": {"name": "system-1", "labels": {}},
  "status": {"allocatable": {"cpu": "4", "memory": "16Gi"}, "conditions": [{"type": "Ready", "status": "True"}]}}
]}`
	levels := []string{"cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-subblock", kube.HostnameLabel}
	res, err := kube.ParseNodeList([]byte(nodes), levels, kube.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	t := res.Tree
	for h := range t.NumHosts() {
		fmt.Printf("%s in %s: %d GPUs, %d milli-cores, %d MiB\n", t.HostName(topology.HostID(h)), t.DomainPath(t.HostParent(topology.HostID(h))),
			t.HostGPUCount(topology.HostID(h)), t.HostCPU(topology.HostID(h)), t.HostMemory(topology.HostID(h)))
	}
	for _, h := range res.Health {
		fmt.Println(h.Node, h.Health, "because", h.Cause)
	}
	for _, s := range res.Skipped {
		fmt.Println(s)
	}
	state, _ := res.NewState()
	fmt.Println(state.Free(0), "GPUs free")
	// Output:
	// a3-1 in b1/s1: 8 GPUs, 207500 milli-cores, 1846700 MiB
	// a3-2 in b1/s2: 8 GPUs, 207000 milli-cores, 1716613 MiB
	// a3-2 draining because unschedulable
	// node system-1 (items[2]) has no label cloud.google.com/gce-topology-block: left out
	// 8 GPUs free
}

func ExampleParseQuantity() {
	for _, s := range []string{"64", "63500m", "512Gi", "1e3", "500M", "0.5", "12x"} {
		q, err := kube.ParseQuantity(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(s, "=", q.RatString())
	}
	// Output:
	// 64 = 64
	// 63500m = 127/2
	// 512Gi = 549755813888
	// 1e3 = 1000
	// 500M = 500000000
	// 0.5 = 1/2
	// quantity "12x": unknown suffix "x"
}
