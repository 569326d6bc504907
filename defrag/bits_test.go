package defrag

import (
	"testing"

	"github.com/blinksched/blink/topology"
)

// TestSetRange clears and sets host ranges at word edges against a bit-by-bit
// model.
func TestSetRange(t *testing.T) {
	edges := []topology.HostID{0, 1, 63, 64, 65, 127, 128, 129, 191, 192}
	for _, lo := range edges {
		for _, hi := range edges {
			if hi < lo {
				continue
			}
			words := []uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
			setRange(words, lo, hi, false)
			for h := topology.HostID(0); h < 256; h++ {
				on := words[h>>6]&(1<<(uint(h)&63)) != 0
				if want := h < lo || h >= hi; on != want {
					t.Fatalf("clear [%d, %d): bit %d is %v", lo, hi, h, on)
				}
			}
			setRange(words, lo, hi, true)
			for i, w := range words {
				if w != ^uint64(0) {
					t.Fatalf("set [%d, %d): word %d is %x", lo, hi, i, w)
				}
			}
		}
	}
}
