package bench

import (
	"fmt"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
)

// BenchmarkPreempt times preempt.Planner.Plan on fully loaded clusters
// (FillFull: nothing fits without evictions) over sizes, shapes and
// requests. The first call is checked: its victims, once removed from a
// clone, make room for its plan, and its nomination applies. Reports
// victims/op, exact (1 if the answer is proven optimal) and the ratio to
// the floor.
func BenchmarkPreempt(b *testing.B) {
	for _, gpus := range Sizes {
		for _, shape := range Shapes {
			for _, req := range PreemptRequests[shape] {
				name := fmt.Sprintf("gpus=%s/shape=%s/req=%s", gpus, shape, req)
				b.Run(name, func(b *testing.B) { benchPreempt(b, gpus, shape, req) })
			}
		}
	}
}

func benchPreempt(b *testing.B, gpus, shape, name string) {
	SkipUnlessFull(b, gpus)
	s, _, err := LoadedFull(shape, gpus, DefaultSeed)
	if err != nil {
		b.Fatal(err)
	}
	benchPreemptOn(b, s, gpus, name)
}

// BenchmarkPreemptLoaded is BenchmarkPreempt's gpus200k request on clusters
// that are not full (Loaded at 90%: a tenth of the GPUs free, most on partly
// used hosts), at 1M GPUs. There the fewest victims are proven but not the
// least milli (exact 0: the gap is in milli).
func BenchmarkPreemptLoaded(b *testing.B) {
	for _, shape := range Shapes {
		b.Run("gpus=1M/shape="+shape+"/load=90/req=gpus200k", func(b *testing.B) {
			s, _, err := Loaded(shape, "1M", 0.9, DefaultSeed)
			if err != nil {
				b.Fatal(err)
			}
			benchPreemptOn(b, s, "1M", "gpus200k")
		})
	}
}

// benchPreemptOn times request name on s (of size gpus), the first call
// checked, as BenchmarkPreempt describes.
func benchPreemptOn(b *testing.B, s *topology.State, gpus, name string) {
	req, err := PlaceRequest(s.Tree(), name)
	if err != nil {
		b.Fatal(err)
	}
	req.Job, req.Priority = s.JobIDBound(), PreemptPriority
	var p preempt.Planner
	var res preempt.Result
	ok, why, err := p.Plan(s, &req, 0, 1, &res)
	if err != nil {
		b.Fatal(err)
	}
	victims, exact := 0, 0.0
	if ok {
		victims = len(res.Victims)
		if res.Exact {
			exact = 1
		}
		if err := checkPreempt(s, &req, &res); err != nil {
			b.Fatal(err)
		}
	} else {
		b.Logf("no fit: %s", why.Format(s.Tree()))
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _, _ = p.Plan(s, &req, 0, 1, &res)
	}
	b.ReportMetric(float64(victims), "victims/op")
	b.ReportMetric(exact, "exact")
	ReportRatio(b, gpus)
}

// checkPreempt applies an answer to clones of s: the nomination as it is,
// and the plan once the victims are removed.
func checkPreempt(s *topology.State, req *placement.Request, res *preempt.Result) error {
	if err := s.Clone().Apply(res.Delta()); err != nil {
		return fmt.Errorf("the nomination does not apply: %w", err)
	}
	c := s.Clone()
	ops := make([]topology.Op, 0, len(res.Victims)+1)
	for _, j := range res.Victims {
		ops = append(ops, topology.RemoveJob(j))
	}
	ops = append(ops, res.Plan.Delta().Ops...)
	if err := c.Apply(topology.Delta{Ops: ops}); err != nil {
		return fmt.Errorf("the plan does not apply once the victims are gone: %w", err)
	}
	if len(res.Plan.Pods) == 0 || res.Plan.Job != req.Job {
		return fmt.Errorf("empty plan")
	}
	return nil
}

// TestFillFull: FillFull leaves no GPU free and no milli unused on a shared
// GPU, keeps the State's invariants, and is deterministic for a seed.
func TestFillFull(t *testing.T) {
	for _, shape := range Shapes {
		tree, err := Cluster(shape, "16k")
		if err != nil {
			t.Fatal(err)
		}
		s := topology.NewState(tree)
		st, err := FillFull(s, DefaultSeed)
		if err != nil {
			t.Fatal(err)
		}
		if s.Free(0) != 0 || s.SharedMilli(0) != 0 || st.Load != 1 {
			t.Errorf("%s: %d GPUs free, %d milli shared free, load %v", shape, s.Free(0), s.SharedMilli(0), st.Load)
		}
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
		again := topology.NewState(tree)
		if _, err := FillFull(again, DefaultSeed); err != nil {
			t.Fatal(err)
		}
		a, _ := s.MarshalBinary()
		b, _ := again.MarshalBinary()
		if string(a) != string(b) {
			t.Errorf("%s: FillFull is not deterministic", shape)
		}
		t.Logf("%s: %+v", shape, st)
	}
}

// BenchmarkPreemptReadVictims is a floor under any preemption answer for the
// gpus200k request: only reading the pods of the victims BenchmarkPreempt's
// answer evicts (topology.State.AppendJobPods, in victim order) — the least
// an answer must look at to know which GPUs it frees. Reports pods/op and
// the ratio to the floor.
func BenchmarkPreemptReadVictims(b *testing.B) {
	for _, shape := range Shapes {
		b.Run("gpus=1M/shape="+shape+"/req=gpus200k", func(b *testing.B) {
			s, _, res, err := Preempt200k(shape)
			if err != nil {
				b.Fatal(err)
			}
			var pods []topology.Pod
			for b.Loop() {
				pods = pods[:0]
				for _, v := range res.Victims {
					pods = s.AppendJobPods(pods, v)
				}
			}
			b.ReportMetric(float64(len(pods)), "pods/op")
			ReportRatio(b, "1M")
		})
	}
}

// BenchmarkPreemptAfterCycle times the preemption BenchmarkCycle's cycle
// attempts, on a State like the one it meets: EngineFixture's engine, with
// preemption off, after its cycle (8,263 jobs bound); the request is the
// job the cycle preempts for with preemption on (a 1,152-GPU gang of
// priority 1000 that requires a block). Reports victims/op, exact, scopes/op
// (the blocks modelled) and the ratio to the floor.
func BenchmarkPreemptAfterCycle(b *testing.B) {
	s, req, err := PreemptAfterCycle(DefaultSeed)
	if err != nil {
		b.Fatal(err)
	}
	var p preempt.Planner
	var res preempt.Result
	ok, why, err := p.Plan(s, &req, 0, 1, &res)
	if err != nil || !ok {
		b.Fatalf("no answer: %v %s", err, why.Format(s.Tree()))
	}
	if err := checkPreempt(s, &req, &res); err != nil {
		b.Fatal(err)
	}
	victims, exact, scopes := len(res.Victims), 0.0, res.Scopes
	if res.Exact {
		exact = 1
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _, _ = p.Plan(s, &req, 0, 1, &res)
	}
	b.ReportMetric(float64(victims), "victims/op")
	b.ReportMetric(exact, "exact")
	b.ReportMetric(float64(scopes), "scopes/op")
	ReportRatio(b, "1M")
}
