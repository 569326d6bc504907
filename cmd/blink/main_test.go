package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun checks the dispatch: help, unknown and missing subcommands, and a
// scenario through whatif (its golden tests live in bench/whatif).
func TestRun(t *testing.T) {
	scenario, err := os.ReadFile(filepath.Join("..", "..", "bench", "whatif", "testdata", "place_simple.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args           []string
		stdin          []byte
		code           int
		stdout, stderr string // substrings
	}{
		{[]string{"help"}, nil, 0, "whatif", ""},
		{nil, nil, 2, "", "usage: blink SUBCOMMAND"},
		{[]string{"frobnicate"}, nil, 2, "", `unknown subcommand "frobnicate"`},
		{[]string{"whatif"}, scenario, 0, `"fits": true`, ""},
		{[]string{"whatif"}, []byte(`{"mode": "unknown"}`), 2, "", "unknown"},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, bytes.NewReader(tc.stdin), &out, &errOut)
		if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errOut.String(), tc.stderr) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d, %q, %q",
				tc.args, code, out.String(), errOut.String(), tc.code, tc.stdout, tc.stderr)
		}
	}
}
