package blink_test

import (
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// With Config.Profile, every one-pod job the engine binds goes where a
// placement.Solver with the same profile puts it on the same State: the
// engine's random loop of one-pod jobs (whole GPUs and fractions, CPU and
// memory) is replayed against a Solver, bind by bind, also across a Clone.
func TestEngineProfileMatchesSolver(t *testing.T) {
	rng := rand.New(rand.NewPCG(testkit.Seed(t, 3), 0))
	tree, err := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{3, 5}, GPUsPerHost: 8,
		CPUMilli: 32000, MemoryMiB: 65536})
	if err != nil {
		t.Fatal(err)
	}
	shapes := []placement.PodSet{
		{Pods: 1, GPUs: 1, Milli: 500, CPUMilli: 2000}, {Pods: 1, GPUs: 1, Milli: 250, CPUMilli: 8000},
		{Pods: 1, GPUs: 1, CPUMilli: 4000, MemoryMiB: 8192}, {Pods: 1, GPUs: 2, CPUMilli: 12000}, {Pods: 1, GPUs: 4}}
	prof := &placement.Profile{}
	for i, s := range shapes {
		prof.Shapes = append(prof.Shapes, placement.ProfileShape{GPUs: s.GPUs, Milli: s.Milli,
			CPUMilli: s.CPUMilli, MemoryMiB: s.MemoryMiB, Weight: float64(1 + i)})
	}
	cfg := blink.Config{Profile: prof, MaxPreemptAttempts: -1, MaxDefragAttempts: -1, MaxReservations: -1}
	e, err := blink.New(topology.NewState(tree), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var v placement.Solver
	if err := v.SetProfile(tree, prof); err != nil {
		t.Fatal(err)
	}
	var plan placement.Plan
	bound, differ := 0, 0
	var running []blink.JobID
	for step := range testkit.Steps(t, 300) {
		if step == 150 {
			e = e.Clone()
		}
		if len(running) > 0 && rng.IntN(3) == 0 {
			k := rng.IntN(len(running))
			if err := e.Finished(running[k]); err != nil {
				t.Fatal(err)
			}
			running = append(running[:k], running[k+1:]...)
			continue
		}
		set := shapes[rng.IntN(len(shapes))]
		s := e.State().Clone()
		id, err := e.Submit(int64(step), blink.JobSpec{Sets: []placement.PodSet{set}, Priority: 1})
		if err != nil {
			t.Fatal(err)
		}
		d := e.Cycle(int64(step))
		req := placement.Request{Job: s.JobIDBound(), Priority: 1, Sets: []placement.PodSet{set}}
		ok, _, err := v.Place(s, &req, &plan)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(d.Binds) == 1; got != ok {
			t.Fatalf("step %d: engine bound %v, solver fits %v", step, got, ok)
		}
		if err := e.Check(); err != nil {
			t.Fatal(err)
		}
		if !ok {
			if err := e.Cancel(id); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if d.Binds[0].Pods[0] != plan.Pods[0] {
			differ++
			t.Errorf("step %d: engine put %+v on %+v, the solver on %+v", step, set, d.Binds[0].Pods[0], plan.Pods[0])
		}
		if err := e.Bound(id); err != nil {
			t.Fatal(err)
		}
		running = append(running, id)
		bound++
	}
	t.Logf("%d binds, %d differ", bound, differ)
	if bound == 0 {
		t.Fatal("nothing bound")
	}
}
