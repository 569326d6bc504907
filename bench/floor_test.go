package bench

import "testing"

// BenchmarkFloor is the floor F: bitset.Count over the free-mask of each
// nominal size (2^14 … 2^23 bits). It runs at every size, 8M included: a
// 1 MiB bit set costs nothing to build.
func BenchmarkFloor(b *testing.B) {
	for _, gpus := range Sizes {
		b.Run("gpus="+gpus, func(b *testing.B) {
			set, err := FloorSet(gpus)
			if err != nil {
				b.Fatal(err)
			}
			want := set.Count()
			b.ReportAllocs()
			var n uint
			for b.Loop() {
				n += set.Count()
			}
			if n != want*uint(b.N) {
				b.Fatalf("Count drifted: %d over %d runs, want %d each", n, b.N, want)
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(float64(set.Len())/ns, "bits/ns")
		})
	}
}

func TestFloorSet(t *testing.T) {
	for _, gpus := range Sizes {
		set, err := FloorSet(gpus)
		if err != nil {
			t.Fatal(err)
		}
		if n, want := set.Len(), floorBits[gpus]; n != want {
			t.Errorf("gpus=%s: %d bits, want %d", gpus, n, want)
		}
		if c := set.Count(); c < set.Len()/3 || c > 2*set.Len()/3 {
			t.Errorf("gpus=%s: %d of %d bits set, want about half", gpus, c, set.Len())
		}
	}
	if _, err := FloorSet("3k"); err == nil {
		t.Error("FloorSet(3k): no error")
	}
	if f, err := FloorNs("16k"); err != nil || f <= 0 {
		t.Errorf("FloorNs(16k) = %v, %v", f, err)
	}
}
