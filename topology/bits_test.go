package topology

import (
	"math/rand/v2"
	"testing"
)

// TestGetBits compares getBits with reading the bits one by one, for every
// width 0…64 at every offset of a few words (straddling a word boundary or
// not, and a whole aligned word).
func TestGetBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	w := []uint64{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64()}
	for n := 0; n <= 64; n++ {
		for lo := 0; lo+n <= 64*len(w); lo++ {
			var want uint64
			for i := range n {
				want |= (w[(lo+i)>>6] >> (uint(lo+i) & 63) & 1) << uint(i)
			}
			if got := getBits(w, lo, n); got != want {
				t.Fatalf("getBits(lo %d, n %d) = %#x, want %#x", lo, n, got, want)
			}
		}
	}
}

// TestAnyInRange compares anyInRange with testing the bits one by one, for
// every range of a few words holding a few set bits (none, one, or some).
func TestAnyInRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		w := make([]uint64, 4)
		for range trial % 4 {
			i := rng.IntN(64 * len(w))
			w[i>>6] |= 1 << (uint(i) & 63)
		}
		for lo := 0; lo <= 64*len(w); lo++ {
			for hi := lo; hi <= 64*len(w); hi++ {
				want := false
				for i := lo; i < hi; i++ {
					want = want || testBit(w, i)
				}
				if got := anyInRange(w, lo, hi); got != want {
					t.Fatalf("trial %d: anyInRange(%d, %d) = %v, want %v (words %#x)", trial, lo, hi, got, want, w)
				}
			}
		}
	}
}
