package testkit

import (
	"os"
	"strconv"
	"testing"
)

// Seed returns the seed of a randomised test: BLINK_SEED if set, else def
// (so CI is deterministic; explore other seeds with BLINK_SEED). It logs the
// seed so a failure can be replayed.
func Seed(tb testing.TB, def uint64) uint64 {
	tb.Helper()
	if v := os.Getenv("BLINK_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			tb.Fatalf("BLINK_SEED: %v", err)
		}
		tb.Logf("seed %d (from BLINK_SEED)", s)
		return s
	}
	tb.Logf("seed %d (try others with BLINK_SEED)", def)
	return def
}

// Steps returns the number of steps of a randomised test: BLINK_STEPS if
// set, else def.
func Steps(tb testing.TB, def int) int {
	tb.Helper()
	if v := os.Getenv("BLINK_STEPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			tb.Fatalf("BLINK_STEPS: %v", err)
		}
		return n
	}
	return def
}
