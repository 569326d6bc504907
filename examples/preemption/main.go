// Preemption packs a small NVL72-style cluster with jobs of mixed priority,
// then asks for a high-priority gang that needs a whole rack: Blink answers
// with the cheapest set of victims that makes it fit (lowest priorities
// first, then the fewest jobs, then the fewest GPUs taken), where the gang
// goes once they are gone, and the nomination that reserves those GPUs while
// the victims shut down. ASCII pictures before and after.
//
//	go run ./examples/preemption
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "preemption:", err)
		os.Exit(1)
	}
}

// job is a running job of the example: its name, attributes and pods.
type job struct {
	name string
	info topology.Job
	pods []topology.Pod
}

func run(w io.Writer) error {
	// Two racks of 6 hosts × 4 GPUs.
	tree, err := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{2, 6}, GPUsPerHost: 4, Model: "GB200"})
	if err != nil {
		return err
	}
	s := topology.NewState(tree)
	jobs := packed()
	for i, j := range jobs {
		if err := s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(topology.JobID(i), j.info, j.pods...)}}); err != nil {
			return fmt.Errorf("job %s: %w", j.name, err)
		}
	}
	letter := func(id topology.JobID) byte { return jobs[id].name[0] }
	pic := testkit.Picture{Name: letter}
	fmt.Fprintln(w, "running jobs (a letter each in the pictures):")
	for _, j := range jobs[:4] {
		fmt.Fprintf(w, "  %-10s priority %3d, preemptible\n", j.name, j.info.Priority)
	}
	fmt.Fprintf(w, "  a…p-small  priority  10, preemptible (sixteen 1-GPU jobs)\n")
	fmt.Fprintf(w, "\nbefore: every GPU in use\n%s\n", pic.Render(s))

	rack, _ := tree.LevelByName("rack")
	req := placement.Request{Job: topology.JobID(len(jobs)), Priority: 1000,
		Sets: []placement.PodSet{{Pods: 6, GPUs: 4}}, Required: rack}
	var planner preempt.Planner
	var res preempt.Result
	start := time.Now()
	ok, reason, err := planner.Plan(s, &req, 100, 400, &res)
	took := time.Since(start)
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintln(w, "no victim set:", reason.Format(tree))
		return nil
	}
	fmt.Fprintf(w, "a priority-1000 gang of 6 × 4 GPUs in one rack: decided in %v (exact: %v)\n", took.Round(time.Microsecond), res.Exact)
	fmt.Fprintf(w, "victims (%d, highest priority %d):", len(res.Victims), res.Cost.Priority)
	for _, v := range res.Victims {
		fmt.Fprintf(w, " %s", jobs[v].name)
	}
	fmt.Fprintf(w, "\nnominated for the gang while they shut down: %d GPUs in %s\n\n", len(res.Nomination.GPUs), tree.DomainPath(res.Scope))

	// What the embedder does next: nominate, evict the victims, bind the gang.
	ops := res.Delta().Ops
	for _, v := range res.Victims {
		ops = append(ops, topology.RemoveJob(v))
	}
	if err := s.Apply(topology.Delta{Ops: ops}); err != nil {
		return err
	}
	fmt.Fprintf(w, "victims evicted, their GPUs reserved (*):\n%s\n", pic.Render(s))
	if err := s.Apply(res.Plan.Delta()); err != nil {
		return err
	}
	jobs = append(jobs, job{name: "Gang"})
	fmt.Fprintf(w, "after: the gang (G) runs in one rack\n%s", pic.Render(s))
	return s.Check()
}

// packed fills both racks. Rack 0: a preemptible training job of priority 50
// on five hosts, a notebook and an inference server of priority 10 on the
// sixth. Rack 1: a 2-host batch job and sixteen 1-GPU jobs, all priority 10.
// Evicting rack 0 takes three jobs but one of priority 50; rack 1 takes
// seventeen of priority 10 — the cost puts the highest victim priority
// first, so rack 1 goes.
func packed() []job {
	pod := func(h topology.HostID, mask uint64) topology.Pod { return topology.Pod{Host: h, GPUs: mask} }
	whole := func(hosts ...topology.HostID) []topology.Pod {
		var ps []topology.Pod
		for _, h := range hosts {
			ps = append(ps, pod(h, 0xf))
		}
		return ps
	}
	low := topology.Job{Priority: 10, Preemptible: true, Movable: true}
	mid := topology.Job{Priority: 50, Preemptible: true, Movable: true}
	jobs := []job{
		{"Training", mid, whole(0, 1, 2, 3, 4)},
		{"notebook", low, []topology.Pod{pod(5, 0x3)}},
		{"inference", low, []topology.Pod{pod(5, 0xc)}},
		{"Batch", low, whole(6, 7)},
	}
	k := 0
	for h := topology.HostID(8); h < 12; h++ {
		for g := range 4 {
			jobs = append(jobs, job{string(rune('a'+k)) + "-small", low, []topology.Pod{pod(h, 1<<uint(g))}})
			k++
		}
	}
	return jobs
}
