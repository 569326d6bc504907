package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blinksched/blink/bench"
)

func TestDefragExample(t *testing.T) {
	dir := t.TempDir()
	var out strings.Builder
	c := config{out: dir, load: 0.7, seed: bench.DefaultSeed, racks: 12, moves: 40, show: 3}
	if err := run(&out, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"metrics before", "rack job", "fits true after 1 move", "compaction:", "reached true", "move job", "metrics after", "heat maps"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	for _, name := range []string{"defrag-before.png", "defrag-after.png"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
}
