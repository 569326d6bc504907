package bench

import "testing"

func BenchmarkZZSmall(b *testing.B) {
	orig := PendingMix
	defer func() { PendingMix = orig }()
	mix := append([]JobKind(nil), orig...)
	for i := range mix {
		if mix[i].GPUs >= 72 {
			mix[i].Weight = 0
		}
	}
	PendingMix = mix
	benchCycle(b, "1M", 10000, false)
}
