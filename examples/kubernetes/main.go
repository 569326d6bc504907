// Kubernetes imports the node list shipped next to this file (the output of
// `kubectl get nodes -o json`, embedded so it runs from any directory) under
// the levels of a Kueue Topology, marks cordoned and NotReady nodes, places
// a few gangs with placement.Solver, and prints the bindings a scheduler
// would make: pod → node and GPU indices.
//
//	go run ./examples/kubernetes
package main

import (
	_ "embed"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
	"github.com/blinksched/blink/topology/kube"
)

//go:embed nodes.json
var nodesJSON []byte

// The levels of a Kueue Topology for GKE, root first.
const (
	blockLabel    = "cloud.google.com/gce-topology-block"
	subblockLabel = "cloud.google.com/gce-topology-subblock"
)

var levels = []string{blockLabel, subblockLabel, kube.HostnameLabel}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "kubernetes:", err)
		os.Exit(1)
	}
}

type gang struct {
	name string
	req  placement.Request
}

// run imports the nodes, places the gangs and writes the report to w.
func run(w io.Writer) error {
	res, err := kube.ParseNodeList(nodesJSON, levels, kube.Options{})
	if err != nil {
		return err
	}
	tree := res.Tree
	state, err := res.NewState() // cordoned nodes draining, NotReady ones failed
	if err != nil {
		return err
	}
	describe(w, res, state)

	block, _ := tree.LevelByName(blockLabel)
	subblock, _ := tree.LevelByName(subblockLabel)
	gangs := []gang{
		// 6 nodes in one block, as few subblocks as possible. Best fit picks
		// blk-a, whose 6 healthy nodes hold it exactly, and keeps blk-b whole.
		{"train", placement.Request{Sets: []placement.PodSet{{Pods: 6, GPUs: 8, CPUMilli: 180_000}},
			Required: block, Preferred: subblock}},
		// Two notebooks sharing one GPU, half each.
		{"notebook", placement.Request{Sets: []placement.PodSet{{Pods: 2, GPUs: 1, Milli: 500, MemoryMiB: 32 << 10}}}},
		// 5 nodes in one subblock: a subblock has 4.
		{"wide", placement.Request{Sets: []placement.PodSet{{Pods: 5, GPUs: 8}}, Required: subblock}},
		// 3 nodes in one subblock.
		{"eval", placement.Request{Sets: []placement.PodSet{{Pods: 3, GPUs: 8}}, Required: subblock}},
	}
	var solver placement.Solver
	var plan placement.Plan
	for i, g := range gangs {
		g.req.Job = topology.JobID(i + 1)
		ok, why, err := solver.Place(state, &g.req, &plan)
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintf(w, "\n%s: no fit: %s\n", g.name, why.Format(tree))
			continue
		}
		if err := state.Apply(plan.Delta()); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s: %d pods\n", g.name, len(plan.Pods))
		for _, a := range plan.Assignments(tree) {
			h, _ := tree.HostByName(a.Host)
			share := ""
			if a.Milli > 0 {
				share = fmt.Sprintf(" (%d/1000 of it)", a.Milli)
			}
			fmt.Fprintf(w, "  bind pod %s-%d → node %s, nvidia.com/gpu %s%s  [%s]\n",
				g.name, a.Rank, a.Host, gpuRange(a.GPUs), share, tree.DomainPath(tree.HostParent(h)))
		}
	}
	usable := state.HealthyGPUs(0)
	fmt.Fprintf(w, "\n%d GPUs: %d in use, %d free, %d on draining or failed nodes\n",
		tree.NumGPUs(), usable-state.Free(0), state.Free(0), tree.NumGPUs()-usable)
	return state.Check()
}

// describe prints the levels, the nodes left out or marked, and the domains.
func describe(w io.Writer, res *kube.Result, s *topology.State) {
	tree := res.Tree
	fmt.Fprintf(w, "%d nodes, %d GPUs; levels, root first:\n", tree.NumHosts(), tree.NumGPUs())
	for l := topology.Level(1); l < tree.HostLevel(); l++ {
		lo, hi := tree.LevelDomains(l)
		fmt.Fprintf(w, "  %-40s %d domains\n", tree.LevelName(l), hi-lo)
	}
	for _, sk := range res.Skipped {
		fmt.Fprintln(w, "skipped:", sk)
	}
	for _, h := range res.Health {
		fmt.Fprintf(w, "marked %s: %s (%s)\n", h.Health, h.Node, h.Cause)
	}
	lo, hi := tree.LevelDomains(tree.HostLevel() - 1)
	for d := lo; d < hi; d++ {
		hlo, hhi := tree.Hosts(d)
		var nodes []string
		for h := hlo; h < hhi; h++ {
			mark := ""
			if hs := s.HostHealth(h); hs != topology.Healthy {
				mark = " (" + hs.String() + ")"
			}
			nodes = append(nodes, strings.TrimPrefix(tree.HostName(h), "gke-train-")+mark)
		}
		fmt.Fprintf(w, "  %-12s %d GPUs usable: %s\n", tree.DomainPath(d), s.HealthyGPUs(d), strings.Join(nodes, ", "))
	}
}

// gpuRange writes GPU indices compactly: [0-7], [2 3].
func gpuRange(gpus []int) string {
	if n := len(gpus); n > 2 && gpus[n-1]-gpus[0] == n-1 {
		return fmt.Sprintf("[%d-%d]", gpus[0], gpus[n-1])
	}
	return fmt.Sprint(gpus)
}
