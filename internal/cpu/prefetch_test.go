package cpu

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// PrefetchRange hints exactly the lines the range touches: every start
// offset within two lines and every length up to five lines, against the
// count from the addresses.
func TestPrefetchRangeLines(t *testing.T) {
	buf := make([]byte, 8*LineSize)
	base := uintptr(unsafe.Pointer(&buf[0]))
	for off := range 2 * LineSize {
		for n := range 5*LineSize + 1 {
			p := unsafe.Pointer(&buf[off])
			want := 0
			if n > 0 {
				first, last := (base+uintptr(off))/LineSize, (base+uintptr(off+n-1))/LineSize
				want = int(last - first + 1)
			}
			require.Equal(t, want, PrefetchRange(p, uintptr(n)), "offset %d, %d bytes", off, n)
		}
	}
}

// Prefetch and PrefetchRange accept any address: nil, and the end of an
// object.
func TestPrefetchAnyAddress(t *testing.T) {
	buf := make([]uint64, 4)
	Prefetch(nil)
	Prefetch(unsafe.Pointer(&buf[3]))
	require.Equal(t, 0, PrefetchRange(nil, 0))
	require.Equal(t, 1, PrefetchRange(unsafe.Pointer(&buf[3]), 8))
}

func BenchmarkPrefetchRange(b *testing.B) {
	buf := make([]byte, 4*LineSize)
	for b.Loop() {
		PrefetchRange(unsafe.Pointer(&buf[0]), 248)
	}
}
