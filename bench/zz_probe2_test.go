package bench

import (
	"testing"

	"github.com/blinksched/blink/preempt"
)

func BenchmarkZZFracRack(b *testing.B) {
	s, _, err := LoadedFull("nvl72", "1M", DefaultSeed)
	if err != nil {
		b.Fatal(err)
	}
	req, _ := PlaceRequest(s.Tree(), "fracrack")
	req.Job, req.Priority = s.JobIDBound(), PreemptPriority
	var p preempt.Planner
	var res preempt.Result
	for b.Loop() {
		p.Plan(s, &req, 0, 1, &res)
	}
}
