package bench

import (
	"testing"

	"github.com/blinksched/blink/placement"
)

// BenchmarkPlaceWithout times the last step of BenchmarkPreempt's gpus200k
// answer on its own: placement.Solver.PlaceWithout of the request in the
// answer's scope, with the answer's victims treated as gone (every GPU of
// the released hosts back, so capacities depend on the release). The plan
// is checked once against the preemption answer's before timing. Reports
// pods/op and the ratio to the floor.
func BenchmarkPlaceWithout(b *testing.B) {
	for _, shape := range Shapes {
		b.Run("gpus=1M/shape="+shape+"/req=gpus200k", func(b *testing.B) {
			s, req, res, err := Preempt200k(shape)
			if err != nil {
				b.Fatal(err)
			}
			var v placement.Solver
			var plan placement.Plan
			ok, why, err := v.PlaceWithout(s, &req, res.Scope, res.Victims, &plan)
			if err != nil || !ok {
				b.Fatalf("no fit: %v %s", err, why.Format(s.Tree()))
			}
			if len(plan.Pods) != len(res.Plan.Pods) {
				b.Fatalf("%d pods, the answer has %d", len(plan.Pods), len(res.Plan.Pods))
			}
			for i := range plan.Pods {
				if plan.Pods[i] != res.Plan.Pods[i] {
					b.Fatalf("pod %d: %+v, the answer has %+v", i, plan.Pods[i], res.Plan.Pods[i])
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				_, _, _ = v.PlaceWithout(s, &req, res.Scope, res.Victims, &plan)
			}
			b.ReportMetric(float64(len(plan.Pods)), "pods/op")
			ReportRatio(b, "1M")
		})
	}
}
