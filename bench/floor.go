package bench

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/bits-and-blooms/bitset"
)

// floorBits is the free-mask size of each nominal cluster size.
var floorBits = map[string]uint{"16k": 1 << 14, "131k": 1 << 17, "1M": 1 << 20, "8M": 1 << 23}

var floors struct {
	sync.Mutex
	sets map[string]*bitset.BitSet
	ns   map[string]float64
}

// floorSink keeps the compiler from discarding measured Counts.
var floorSink uint

// FloorSet returns the bit set BenchmarkFloor counts at size gpus (one of
// Sizes): 2^14, 2^17, 2^20 or 2^23 bits, about half of them set in a fixed
// seeded pattern. Built once per process; read-only.
func FloorSet(gpus string) (*bitset.BitSet, error) {
	floors.Lock()
	defer floors.Unlock()
	return floorSetLocked(gpus)
}

func floorSetLocked(gpus string) (*bitset.BitSet, error) {
	if b, ok := floors.sets[gpus]; ok {
		return b, nil
	}
	n, ok := floorBits[gpus]
	if !ok {
		return nil, fmt.Errorf("bench: unknown size %q (want one of %v)", gpus, Sizes)
	}
	rng := rand.New(rand.NewPCG(DefaultSeed, uint64(n)))
	words := make([]uint64, n/64)
	for i := range words {
		words[i] = rng.Uint64()
	}
	b := bitset.From(words)
	if floors.sets == nil {
		floors.sets = map[string]*bitset.BitSet{}
	}
	floors.sets[gpus] = b
	return b, nil
}

// FloorNs returns F at size gpus: the nanoseconds of one bitset.Count over
// FloorSet(gpus), measured once per process and cached. The measurement
// doubles a batch of Counts until it lasts 2 ms, then takes the fastest of
// 9 such batches (a few tens of milliseconds in all), so it does not depend on
// -benchtime: a run with -benchtime 1x still gets a stable F. The minimum,
// not the mean: interference from other processes only ever adds time, so the
// fastest batch is the most reproducible figure, and a ratio to it errs high,
// never in the engine's favour.
func FloorNs(gpus string) (float64, error) {
	floors.Lock()
	defer floors.Unlock()
	if f, ok := floors.ns[gpus]; ok {
		return f, nil
	}
	set, err := floorSetLocked(gpus)
	if err != nil {
		return 0, err
	}
	f := measureCount(set)
	if floors.ns == nil {
		floors.ns = map[string]float64{}
	}
	floors.ns[gpus] = f
	return f, nil
}

func measureCount(set *bitset.BitSet) float64 {
	batch := func(n int) time.Duration {
		start := time.Now()
		for range n {
			floorSink += set.Count()
		}
		return time.Since(start)
	}
	n := 1
	for batch(n) < 2*time.Millisecond {
		n *= 2
	}
	best := batch(n)
	for range 8 {
		best = min(best, batch(n))
	}
	return float64(best.Nanoseconds()) / float64(n)
}

// ReportRatio reports b's ns/op divided by F at size gpus (FloorNs) as the
// metric "xF". Call it after the timed loop (for b.Loop() { … }), once per
// benchmark: the floor is measured on first use at each size, outside b's
// timer, and shared by every later benchmark of the process.
func ReportRatio(b *testing.B, gpus string) {
	b.Helper()
	if b.N == 0 {
		return
	}
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.StopTimer()
	f, err := FloorNs(gpus)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(ns/f, "xF")
}
