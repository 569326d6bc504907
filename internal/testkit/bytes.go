package testkit

import (
	"encoding/binary"
	"hash/fnv"
	"math/rand/v2"
	"testing"
)

// Bytes is a rand.Source that reads its numbers from a fuzzer's input, so
// that the random generators the oracle tests use draw instances the fuzzer
// steers: a mutated byte is a changed choice of the generator, and coverage
// guides which choices are kept. Each Uint64 takes the next 8 bytes (little
// endian, a short tail padded with zeros); after the input, it continues with
// a PCG seeded from a hash of the whole input, so that a generator's
// rejection loops end and a short input still draws a full instance.
type Bytes struct {
	in   []byte
	tail *rand.PCG
}

// NewBytes returns a source reading in (which it keeps; do not change it).
func NewBytes(in []byte) *Bytes {
	h := fnv.New64a()
	h.Write(in)
	return &Bytes{in: in, tail: rand.NewPCG(h.Sum64(), uint64(len(in)))}
}

// Uint64 returns the next number.
func (b *Bytes) Uint64() uint64 {
	if len(b.in) == 0 {
		return b.tail.Uint64()
	}
	var w [8]byte
	n := copy(w[:], b.in)
	b.in = b.in[n:]
	return binary.LittleEndian.Uint64(w[:])
}

// Rand returns a generator drawing from in (NewBytes).
func Rand(in []byte) *rand.Rand { return rand.New(NewBytes(in)) }

// AddSeeds adds n inputs of one word each (spread over the word's range) and
// the empty input to f's seed corpus, for a target that reads its input
// through Bytes: each draws a different instance, and go test runs them all.
func AddSeeds(f *testing.F, n int) {
	for i := range uint64(n) {
		f.Add(binary.LittleEndian.AppendUint64(nil, i*0x9e3779b97f4a7c15))
	}
	f.Add([]byte{})
}
