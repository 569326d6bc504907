package fgd

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/blinksched/blink/bench/openb"
)

// testTrace loads testdata: 4 nodes (n0 2×T4 16 cores, n1 4×V100 32 cores,
// n2 1×T4 8 cores, n3 CPU-only 64 cores; 7 GPUs) and 6 pods.
func testTrace(t testing.TB) (*openb.Cluster, []openb.Shape) {
	t.Helper()
	c, shapes, err := Load(filepath.Join("testdata", "nodes.csv"), filepath.Join("testdata", "pods.csv"), openb.Flat)
	if err != nil {
		t.Fatal(err)
	}
	return c, shapes
}

func TestDraw(t *testing.T) {
	c, shapes := testTrace(t)
	target := c.CapacityMilli() * MaxArrived / 100 // 9,100 milli
	seen := map[int32]bool{}
	var first []int32
	for seed := uint64(0); seed < 50; seed++ {
		work, err := Draw(shapes, c.CapacityMilli(), seed)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := Draw(shapes, c.CapacityMilli(), seed)
		if !slices.Equal(work, again) {
			t.Fatalf("seed %d: two draws differ", seed)
		}
		var total, largest int64
		for _, i := range work {
			if i < 0 || int(i) >= len(shapes) {
				t.Fatalf("seed %d: index %d", seed, i)
			}
			seen[i] = true
			total += shapes[i].MilliGPU()
			largest = max(largest, shapes[i].MilliGPU())
		}
		// At least the target, and short of it before the last draw (the
		// largest pod bounds the overshoot).
		if total < target || total-largest >= target {
			t.Errorf("seed %d: total %d milli for a target of %d", seed, total, target)
		}
		if seed == 0 {
			first = work
		} else if seed == 1 && slices.Equal(first, work) {
			t.Error("seeds 0 and 1 draw the same workload")
		}
	}
	if len(seen) != len(shapes) {
		t.Errorf("50 seeds drew %d of %d pods", len(seen), len(shapes))
	}
	if _, err := Draw([]openb.Shape{{CPUMilli: 1}}, 1000, 1); !errors.Is(err, ErrNoGPUPods) {
		t.Errorf("CPU-only list: %v, want ErrNoGPUPods", err)
	}
}

// scripted accepts pods by a script, for testing Run's accounting.
type scripted struct {
	accept []bool
	n      int
}

func (p *scripted) Reset(uint64) { p.n = 0 }
func (p *scripted) Place(*openb.Shape) (bool, error) {
	p.n++
	return p.accept[p.n-1], nil
}

// TestRunCurve checks the arrival accounting by hand on a 4-GPU capacity:
// arrived counts skipped pods, allocation does not, fractions count as
// fractions, a point is recorded when the arrived request reaches it
// exactly, and one large pod passes many points at once.
func TestRunCurve(t *testing.T) {
	shapes := []openb.Shape{
		{GPUs: 1},             // 1,000: placed   → arrived 25%,   alloc 25%
		{GPUs: 1, Milli: 500}, //   500: skipped  → arrived 37.5%, alloc 25%
		{GPUs: 2},             // 2,000: placed   → arrived 87.5%, alloc 75%
		{CPUMilli: 100},       //     0: placed   → no point passes
		{GPUs: 1},             // 1,000: placed   → arrived 112.5%, alloc 100%
		{GPUs: 1},             // 1,000: skipped  → arrived 137.5%
	}
	p := &scripted{accept: []bool{true, false, true, true, true, false}}
	r, err := Run(p, shapes, []int32{0, 1, 2, 3, 4, 5}, 4000)
	if err != nil {
		t.Fatal(err)
	}
	var want [CurveLen]float64
	for k := 1; k < CurveLen; k++ {
		switch {
		case k <= 37:
			want[k] = 25
		case k <= 87:
			want[k] = 75
		default:
			want[k] = 100
		}
	}
	if r.Curve != want {
		t.Errorf("curve\n got %v\nwant %v", r.Curve, want)
	}
	if r.Pods != 6 || r.Placed != 4 || r.ArrivedMilli != 5500 || r.AllocMilli != 4000 {
		t.Errorf("pods %d placed %d arrived %d alloc %d", r.Pods, r.Placed, r.ArrivedMilli, r.AllocMilli)
	}
	// A workload short of 130% holds its final allocation to the end.
	r, _ = Run(&scripted{accept: []bool{true}}, shapes, []int32{0}, 4000)
	if r.Curve[25] != 25 || r.Curve[26] != 25 || r.Curve[130] != 25 {
		t.Errorf("short workload: curve[25,26,130] = %v %v %v", r.Curve[25], r.Curve[26], r.Curve[130])
	}
}

func TestParseSeeds(t *testing.T) {
	for in, want := range map[string][]uint64{
		"42-51":      {42, 43, 44, 45, 46, 47, 48, 49, 50, 51},
		"7":          {7},
		"1,3-4, 9":   {1, 3, 4, 9},
		"0-0,18-18":  {0, 18},
		"5,5":        {5, 5},
		"3-5,10-11 ": {3, 4, 5, 10, 11},
	} {
		got, err := ParseSeeds(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseSeeds(%q) = %v, %v; want %v", in, got, err, want)
		}
		if formatSeeds(want) == "" {
			t.Errorf("formatSeeds(%v) is empty", want)
		}
	}
	for _, in := range []string{"", "a", "5-3", "1-", "-1", "1,,2", "0-99999"} {
		if _, err := ParseSeeds(in); err == nil {
			t.Errorf("ParseSeeds(%q): no error", in)
		}
	}
	if got := formatSeeds([]uint64{42, 43, 44, 50, 52, 53}); got != "42-44,50,52-53" {
		t.Errorf("formatSeeds: %q", got)
	}
}
