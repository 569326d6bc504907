package slurm

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blinksched/blink/topology"
)

// fuzzLimits lowers the expansion limit so that hostile ranges fail fast.
func fuzzLimits(f *testing.F) {
	old := maxNodes
	maxNodes = 1 << 12
	f.Cleanup(func() { maxNodes = old })
}

// seedFiles adds every testdata file with the extension, and the error
// cases' inputs, to the corpus.
func seedFiles(f *testing.F, ext string) {
	files, err := filepath.Glob(filepath.Join("testdata", "*"+ext))
	if err != nil || len(files) == 0 {
		f.Fatalf("no testdata/*%s: %v", ext, err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, c := range errorCases {
		if strings.HasSuffix(c.file, ext) {
			f.Add([]byte(c.data))
		}
	}
}

// checkParse checks an import's outcome: a valid tree, or an error wrapping
// topology.ErrInvalid.
func checkParse(t *testing.T, res *Result, err error) {
	if err != nil {
		if !errors.Is(err, topology.ErrInvalid) {
			t.Fatalf("error %v does not wrap topology.ErrInvalid", err)
		}
		return
	}
	checkResult(t, res)
}

func FuzzParseConf(f *testing.F) {
	fuzzLimits(f)
	seedFiles(f, ".conf")
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := ParseConf(data, Options{Default: topology.HostSpec{GPUs: 2}})
		checkParse(t, res, err)
	})
}

func FuzzParseYAML(f *testing.F) {
	fuzzLimits(f)
	seedFiles(f, ".yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := ParseYAML(data, Options{Default: topology.HostSpec{GPUs: 2}, Nodes: []string{"n1", "n2"}})
		checkParse(t, res, err)
	})
}

// FuzzExpandHostlist: an expansion compresses and expands back to itself.
func FuzzExpandHostlist(f *testing.F) {
	fuzzLimits(f)
	for _, s := range []string{"gb200-[001-018,020]", "a[1-2]-b[3-4]", "n[8-10],x", "[1-3]", "n[5-3]", "a,,b", "n[099-101]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		names, err := ExpandHostlist(expr)
		if err != nil {
			return
		}
		back, err := ExpandHostlist(RangedString(names))
		if err != nil || !slices.Equal(back, names) {
			t.Fatalf("%q → %q → %q, %v", expr, RangedString(names), back, err)
		}
	})
}
