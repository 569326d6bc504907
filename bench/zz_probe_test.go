package bench

import (
	"testing"
	"time"

	"github.com/blinksched/blink/preempt"
)

func TestZZPreempt(t *testing.T) {
	for _, shape := range []string{"nvl72"} {
		s, _, err := LoadedFull(shape, "1M", DefaultSeed)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"host4", "frac500", "fracpair", "wholefrac", "fracrack", "fracmix", "fracfit", "racksets", "spreadpair", "cpu1000"} {
			req, err := PlaceRequest(s.Tree(), name)
			if err != nil {
				t.Fatal(err)
			}
			req.Job, req.Priority = s.JobIDBound(), PreemptPriority
			var p preempt.Planner
			var res preempt.Result
			p.Plan(s, &req, 0, 1, &res)
			t0 := time.Now()
			ok, why, err := p.Plan(s, &req, 0, 1, &res)
			t.Logf("%s %-10s ok %v victims %d exact %v cost %+v tests %d scopes %d %v  %v", shape, name, ok, len(res.Victims), res.Exact, res.Cost, res.Tests, res.Scopes, err, time.Since(t0)); _ = why
		}
	}
}
