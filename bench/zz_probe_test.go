package bench

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
)

func TestZZAnywhere(t *testing.T) {
	shape := os.Getenv("ZZ_SHAPE")
	if shape == "" {
		t.Skip()
	}
	s, _, err := LoadedFull(shape, "1M", DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	var sets [][]placement.PodSet
	switch os.Getenv("ZZ_CASE") {
	case "a":
		sets = [][]placement.PodSet{{{Pods: 12, GPUs: 1, Milli: 250}}}
	case "b":
		sets = [][]placement.PodSet{{{Pods: 2, GPUs: 1}}}
	case "c":
		sets = [][]placement.PodSet{{{Pods: 4, GPUs: 1, Milli: 500}, {Pods: 8, GPUs: 1, Milli: 250}}}
	case "d":
		sets = [][]placement.PodSet{{{Pods: 1, CPUMilli: 4000}, {Pods: 4, GPUs: 2}}}
	case "e":
		sets = [][]placement.PodSet{{{Pods: 3, GPUs: 1, Milli: 500}}}
	}
	for _, ss := range sets {
		req := placement.Request{Required: topology.NoLevel, Preferred: topology.NoLevel, Sets: ss}
		req.Job, req.Priority = s.JobIDBound(), PreemptPriority
		var p preempt.Planner
		var res preempt.Result
		t0 := time.Now()
		ok, _, err := p.Plan(s, &req, 0, 1, &res)
		fmt.Printf("%s %v: ok %v victims %d exact %v cost %v tests %d scopes %d %v  %v\n", shape, ss, ok, len(res.Victims), res.Exact, res.Cost, res.Tests, res.Scopes, err, time.Since(t0))
	}
}
