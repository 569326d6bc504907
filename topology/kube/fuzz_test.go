package kube

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blinksched/blink/topology"
)

// FuzzParseNodeList: any input gives a valid Tree (hosts found by name, a
// State that passes Check with the health applied) or an error wrapping
// topology.ErrInvalid.
func FuzzParseNodeList(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, c := range errorCases {
		f.Add(c.data)
	}
	levels := [][]string{gkeLevels, {"rack"}, nil}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, lv := range levels {
			res, err := ParseNodeList(data, lv, Options{})
			if err != nil {
				if !errors.Is(err, topology.ErrInvalid) {
					t.Fatalf("error %v does not wrap topology.ErrInvalid", err)
				}
				continue
			}
			checkResult(t, res)
		}
	})
}

// FuzzParseQuantity: a parsed quantity re-parses from its decimal or
// exponent form to the same value; parsing never panics.
func FuzzParseQuantity(f *testing.F) {
	for _, s := range []string{"64", "63500m", "512Gi", "1e3", "500M", ".5", "1.", "-2.5e-3", "1E", "7Ki", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuantity(s)
		if err != nil {
			return
		}
		num, den := q.Num().String(), q.Denom().String()
		if len(num) > 90 || den != "1" {
			return
		}
		// An integer value written plainly parses back to itself.
		back, err := ParseQuantity(strings.TrimPrefix(num, "+"))
		if err != nil || back.Cmp(q) != 0 {
			t.Fatalf("%q = %s, re-parsed %v, %v", s, q.RatString(), back, err)
		}
	})
}
