package testkit

import (
	"encoding/binary"
	"testing"
)

// TestBytes: the input's words first (a short tail padded with zeros), then
// a stream that depends on the input and repeats for the same input; a
// generator's rejection loops end even on an input of zeros.
func TestBytes(t *testing.T) {
	in := binary.LittleEndian.AppendUint64(nil, 42)
	in = append(in, 7)
	b := NewBytes(in)
	if got := b.Uint64(); got != 42 {
		t.Fatalf("first word %d, want 42", got)
	}
	if got := b.Uint64(); got != 7 {
		t.Fatalf("padded tail %d, want 7", got)
	}
	x, y := b.Uint64(), NewBytes(in)
	y.Uint64()
	y.Uint64()
	if got := y.Uint64(); got != x {
		t.Fatalf("the stream after the input differs for the same input: %d, %d", x, got)
	}
	if z := NewBytes(in[:8]); z.Uint64() == 42 && z.Uint64() == x {
		t.Fatal("the stream after the input does not depend on the input")
	}
	r := Rand(make([]byte, 64))
	for n := 1; n < 100; n++ {
		if v := r.IntN(n); v < 0 || v >= n {
			t.Fatalf("IntN(%d) = %d", n, v)
		}
	}
}
