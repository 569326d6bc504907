// Quickstart builds a GB200 NVL72-shaped cluster, places a handful of gangs
// with different topology constraints, and prints where each went and how
// long the decision took.
//
//	go run ./examples/quickstart
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

func main() {
	if err := run(os.Stdout, 2); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

type job struct {
	name string
	req  placement.Request
}

// run builds a cluster of the given number of NVL72 blocks and places jobs.
func run(w io.Writer, blocks int) error {
	start := time.Now()
	tree, err := topology.BuildShape(topology.NVL72(blocks))
	if err != nil {
		return err
	}
	state := topology.NewState(tree)
	fmt.Fprintf(w, "cluster: %d blocks × 16 SUs × 8 racks × 18 hosts × 4 GPUs = %d GPUs (built in %v)\n\n",
		blocks, tree.NumGPUs(), time.Since(start).Round(time.Microsecond))
	lvl := func(name string) topology.Level { l, _ := tree.LevelByName(name); return l }
	jobs := []job{
		{"inference", placement.Request{Sets: []placement.PodSet{{Pods: 1, GPUs: 4}}}},
		{"notebook", placement.Request{Sets: []placement.PodSet{{Pods: 2, GPUs: 1, Milli: 500}}}},
		{"nvl72-train", placement.Request{Sets: []placement.PodSet{{Pods: 18, GPUs: 4}}, Required: lvl("rack")}},
		{"su-train", placement.Request{Sets: []placement.PodSet{{Pods: 144, GPUs: 4}}, Required: lvl("su")}},
		{"sliced", placement.Request{Sets: []placement.PodSet{{Pods: 64, GPUs: 4, SliceSize: 16, SliceLevel: lvl("rack")}}}},
		{"big-train", placement.Request{Sets: []placement.PodSet{{Pods: 2048, GPUs: 4}}, Preferred: lvl("block")}},
		{"too-big", placement.Request{Sets: []placement.PodSet{{Pods: 20000, GPUs: 4}}}},
	}
	var solver placement.Solver
	var plan placement.Plan
	fmt.Fprintf(w, "%-12s %-28s %-9s %s\n", "job", "request", "time", "placed")
	for i, j := range jobs {
		j.req.Job = topology.JobID(i)
		t0 := time.Now()
		ok, reason, err := solver.Place(state, &j.req, &plan)
		took := time.Since(t0)
		if err != nil {
			return err
		}
		where := "no fit: " + reason.Format(tree)
		if ok {
			if err := state.Apply(plan.Delta()); err != nil {
				return err
			}
			where = summarize(tree, plan.Pods)
		}
		fmt.Fprintf(w, "%-12s %-28s %-9v %s\n", j.name, describe(tree, &j.req), took.Round(100*time.Nanosecond), where)
	}
	fmt.Fprintf(w, "\n%d of %d GPUs in use\n", tree.NumGPUs()-state.Free(0), tree.NumGPUs())
	return state.Check()
}

func describe(t *topology.Tree, r *placement.Request) string {
	s := r.Sets[0]
	out := fmt.Sprintf("%d × %d GPU", s.Pods, s.GPUs)
	if s.Milli > 0 {
		out = fmt.Sprintf("%d × %.1f GPU", s.Pods, float64(s.Milli)/1000)
	}
	switch {
	case r.Required > 0:
		out += ", one " + t.LevelName(r.Required)
	case r.Preferred > 0:
		out += ", prefer " + t.LevelName(r.Preferred)
	case s.SliceSize > 0:
		out += fmt.Sprintf(", slices of %d/%s", s.SliceSize, t.LevelName(s.SliceLevel))
	}
	return out
}

// summarize names the racks a gang landed in, and its first host.
func summarize(t *topology.Tree, pods []topology.Pod) string {
	rack, _ := t.LevelByName("rack")
	var racks []string
	last := topology.DomainID(-1)
	for _, p := range pods {
		if d := t.HostDomain(p.Host, rack); d != last {
			racks = append(racks, t.DomainPath(d))
			last = d
		}
	}
	if len(racks) > 3 {
		return fmt.Sprintf("%d racks, %s … %s", len(racks), racks[0], racks[len(racks)-1])
	}
	lo, _ := t.HostGPUs(pods[0].Host)
	_ = lo
	return fmt.Sprintf("%s (first pod: %s GPUs %s)", strings.Join(racks, ", "), t.HostName(pods[0].Host), gpuList(pods[0].GPUs))
}

func gpuList(m uint64) string {
	var parts []string
	for i := range 64 {
		if m&(1<<uint(i)) != 0 {
			parts = append(parts, fmt.Sprint(i))
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}
