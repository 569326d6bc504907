package bench

import (
	"fmt"
	"testing"

	"github.com/blinksched/blink/placement"
)

// PlaceLoads are the loads of the placement grid, in percent.
var PlaceLoads = []int{0, 25, 50, 90}

// BenchmarkPlace times placement.Solver.Place (the decision, not its Apply)
// over the grid of sizes, shapes, loads and requests, on States filled by
// Fill. The first call is checked: its plan must apply to a clone of the
// State. Reports pods/op (0 for a no-fit) and the ratio to the floor.
func BenchmarkPlace(b *testing.B) {
	for _, gpus := range Sizes {
		for _, shape := range Shapes {
			for _, load := range PlaceLoads {
				for _, req := range PlaceRequests[shape] {
					name := fmt.Sprintf("gpus=%s/shape=%s/load=%d/req=%s", gpus, shape, load, req)
					b.Run(name, func(b *testing.B) { benchPlace(b, gpus, shape, load, req) })
				}
			}
		}
	}
}

func benchPlace(b *testing.B, gpus, shape string, load int, name string) {
	SkipUnlessFull(b, gpus)
	s, _, err := Loaded(shape, gpus, float64(load)/100, DefaultSeed)
	if err != nil {
		b.Fatal(err)
	}
	req, err := PlaceRequest(s.Tree(), name)
	if err != nil {
		b.Fatal(err)
	}
	req.Job = s.JobIDBound()
	var v placement.Solver
	var plan placement.Plan
	ok, _, err := v.Place(s, &req, &plan)
	if err != nil {
		b.Fatal(err)
	}
	pods := 0
	if ok {
		pods = len(plan.Pods)
		if err := s.Clone().Apply(plan.Delta()); err != nil {
			b.Fatalf("plan does not apply: %v", err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		ok, _, _ = v.Place(s, &req, &plan)
	}
	b.ReportMetric(float64(pods), "pods/op")
	ReportRatio(b, gpus)
}
