// Slurm imports the topology.conf shipped next to this file (embedded, so it
// runs from any directory), places a few gangs with placement.Solver, and
// prints the levels and switches it found and where each gang's pods went by
// node name and GPU index.
//
//	go run ./examples/slurm
package main

import (
	_ "embed"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
	"github.com/blinksched/blink/topology/slurm"
)

//go:embed topology.conf
var topologyConf []byte

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "slurm:", err)
		os.Exit(1)
	}
}

// nodeSpec gives each node's resources, as slurm.conf's NodeName lines would.
func nodeSpec(name string) (topology.HostSpec, error) {
	switch {
	case strings.HasPrefix(name, "h100-"):
		return topology.HostSpec{GPUs: 8, Model: "H100", CPUMilli: 224_000, MemoryMiB: 2_000_000}, nil
	case strings.HasPrefix(name, "l40s-"):
		return topology.HostSpec{GPUs: 4, Model: "L40S", CPUMilli: 64_000, MemoryMiB: 512_000}, nil
	}
	return topology.HostSpec{}, fmt.Errorf("no NodeName line for %s", name)
}

type gang struct {
	name string
	req  placement.Request
}

// run imports the topology, places the gangs and writes the report to w.
func run(w io.Writer) error {
	res, err := slurm.ParseConf(topologyConf, slurm.Options{Host: nodeSpec})
	if err != nil {
		return err
	}
	tree := res.Tree
	describeTree(w, res)

	level := func(name string) topology.Level { l, _ := tree.LevelByName(name); return l }
	model := func(name string) []int { m, _ := tree.ModelByName(name); return []int{m} }
	gangs := []gang{
		// 16 nodes inside one spine group (switch1): one hop fewer than the core.
		{"pretrain", placement.Request{Sets: []placement.PodSet{{Pods: 16, GPUs: 8}}, Required: level("switch1")}},
		// 6 nodes, on one leaf switch if one has room.
		{"finetune", placement.Request{Sets: []placement.PodSet{{Pods: 6, GPUs: 8}}, Preferred: level("switch0")}},
		// two 2-GPU replicas on the L40S nodes.
		{"serve", placement.Request{Sets: []placement.PodSet{{Pods: 2, GPUs: 2, CPUMilli: 16_000}}, Models: model("L40S")}},
		// more than a spine group holds: no fit, and why.
		{"too-big", placement.Request{Sets: []placement.PodSet{{Pods: 40, GPUs: 8}}, Required: level("switch1")}},
	}
	state := topology.NewState(tree)
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
		fmt.Fprintf(w, "\n%s: %d pods within %s\n", g.name, len(plan.Pods), within(tree, plan.Pods))
		for _, a := range plan.Assignments(tree) {
			h, _ := tree.HostByName(a.Host)
			fmt.Fprintf(w, "  rank %2d  %-9s GPUs %-7s leaf switch %s\n", a.Rank, a.Host, gpuRange(a.GPUs), tree.DomainLabel(tree.HostParent(h)))
		}
	}
	fmt.Fprintf(w, "\n%d of %d GPUs in use\n", tree.NumGPUs()-state.Free(0), tree.NumGPUs())
	return state.Check()
}

// describeTree prints the levels, the warnings and the switch tree.
func describeTree(w io.Writer, res *slurm.Result) {
	tree := res.Tree
	var levels []string
	for l := topology.Level(1); l < tree.HostLevel(); l++ {
		lo, hi := tree.LevelDomains(l)
		levels = append(levels, fmt.Sprintf("%s (%d)", tree.LevelName(l), hi-lo))
	}
	fmt.Fprintf(w, "topology.conf (%s form): %d nodes, %d GPUs\nlevels, root first: %s, then hosts\n",
		res.Form, tree.NumHosts(), tree.NumGPUs(), strings.Join(levels, ", "))
	for _, warn := range res.Warnings {
		fmt.Fprintln(w, "warning:", warn)
	}
	var walk func(d topology.DomainID, depth int)
	walk = func(d topology.DomainID, depth int) {
		lo, hi := tree.Children(d)
		if d != 0 {
			line := strings.Repeat("  ", depth-1) + tree.DomainLabel(d)
			if lo == hi {
				hlo, hhi := tree.Hosts(d)
				var names []string
				for h := hlo; h < hhi; h++ {
					names = append(names, tree.HostName(h))
				}
				line += fmt.Sprintf(": %s (%d GPUs)", slurm.RangedString(names), tree.DomainGPUs(d))
			}
			fmt.Fprintln(w, line)
		}
		for c := lo; c < hi; c++ {
			walk(c, depth+1)
		}
	}
	walk(0, 0)
}

// within names the smallest domain holding every pod.
func within(t *topology.Tree, pods []topology.Pod) string {
	for l := t.HostLevel() - 1; l > 0; l-- {
		d := t.HostDomain(pods[0].Host, l)
		all := true
		for _, p := range pods {
			all = all && t.HostDomain(p.Host, l) == d
		}
		if all {
			return t.LevelName(l) + " " + t.DomainPath(d)
		}
	}
	return "the cluster"
}

// gpuRange writes GPU indices compactly: [0-7], [2 3].
func gpuRange(gpus []int) string {
	if n := len(gpus); n > 2 && gpus[n-1]-gpus[0] == n-1 {
		return fmt.Sprintf("[%d-%d]", gpus[0], gpus[n-1])
	}
	return fmt.Sprint(gpus)
}
