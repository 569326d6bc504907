package blink_test

import (
	"bytes"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
)

// FuzzLoop is TestRandomLoops steered by a fuzzer: a loop of 300 events (a
// config drawn first) takes its random choices from the fuzzer's bytes
// (testkit.Bytes), with Check and ReadyAgrees after every event and every
// decision verified (every "does not fit", every elastic size and every
// requeued repair checked: checkNoFit, checkElastic, checkRequeue); two
// runs of the same bytes must decide the same.
//
//	go test -run '^$' -fuzz FuzzLoop -fuzztime 10m .
func FuzzLoop(f *testing.F) {
	testkit.AddSeeds(f, 16)
	configs := loopConfigs()
	f.Fuzz(func(t *testing.T, in []byte) {
		c := configs[testkit.Rand(in).IntN(len(configs))]
		a := runLoopWith(t, testkit.Rand(in), c.name, 300, c)
		b := runLoopWith(t, testkit.Rand(in), c.name, 300, c)
		if !bytes.Equal(a.digest, b.digest) {
			t.Fatal("two runs of the same calls gave different decisions")
		}
	})
}
