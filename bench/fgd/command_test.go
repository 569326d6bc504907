package fgd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/blinksched/blink/bench/openb"
)

func runCommand(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = Command(args, nil, &out, &errOut)
	return code, out.String(), errOut.String()
}

var traceArgs = []string{"-nodes", filepath.Join("testdata", "nodes.csv"), "-pods", filepath.Join("testdata", "pods.csv")}

// TestCommandJSON checks -json: one object per policy and line, with the
// documented keys, 131 curve points, alloc equal to the curve at 100 and 130,
// and the same numbers as Measure.
func TestCommandJSON(t *testing.T) {
	code, out, errOut := runCommand(append(traceArgs, "-seeds", "1-3", "-policy", "bestfit,random", "-json")...)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), out)
	}
	c, shapes := testTrace(t)
	sums, err := Measure(c, shapes, []string{"bestfit", "random"}, []uint64{1, 2, 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range lines {
		var keys map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &keys); err != nil {
			t.Fatal(err)
		}
		if len(keys) != 5 || keys["policy"] == nil || keys["seeds"] == nil || keys["alloc"] == nil ||
			keys["curve"] == nil || keys["podsPerSecond"] == nil {
			t.Errorf("line %d keys: %s", i, line)
		}
		var got struct {
			Policy string
			Seeds  []uint64
			Alloc  map[string]float64
			Curve  []float64
			PPS    float64 `json:"podsPerSecond"`
		}
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatal(err)
		}
		want := &sums[i]
		if got.Policy != want.Policy || len(got.Seeds) != 3 || got.Seeds[0] != 1 || len(got.Curve) != CurveLen ||
			len(got.Alloc) != 2 || got.Alloc["100"] != got.Curve[100] || got.Alloc["130"] != got.Curve[130] ||
			got.PPS <= 0 {
			t.Errorf("line %d: %s", i, line)
		}
		for k := range got.Curve {
			if d := got.Curve[k] - want.Curve[k]; d > 0.0005 || d < -0.0005 {
				t.Errorf("%s curve[%d] = %v, Measure says %v", got.Policy, k, got.Curve[k], want.Curve[k])
			}
		}
	}
}

// TestCommandTable checks the text table's layout and the plot file.
func TestCommandTable(t *testing.T) {
	png := filepath.Join(t.TempDir(), "fgd.png")
	code, out, errOut := runCommand(append(traceArgs, "-seeds", "4", "-policy", "blink,bestfit,random", "-plot", png)...)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	want := []string{
		`^FGD protocol: 4 nodes, 7 GPUs; 6 pods in the list; seeds 4 \(mean\)$`,
		`^GPU allocation \(%\) when the arrived GPU request reaches k% of capacity$`,
		`^$`,
		`^ +policy +50% +80% +90% +100% +110% +120% +130% +placed +pods/s$`,
	}
	row := `^ +%s( +\d+\.\d\d){7} +\d+\.\d% +\d+$`
	for _, p := range []string{"blink", "bestfit", "random"} {
		want = append(want, strings.Replace(row, "%s", p, 1))
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i := range want {
		if !regexp.MustCompile(want[i]).MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %q", i, lines[i], want[i])
		}
	}
	b, err := os.ReadFile(png)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("plot: %d bytes, %v", len(b), err)
	}
}

// TestCommandVariant: -vary changes the list before the protocol (the header
// says so, and the curve is that of the varied list) and leaves the file alone.
func TestCommandVariant(t *testing.T) {
	code, out, errOut := runCommand(append(traceArgs, "-seeds", "4", "-policy", "bestfit", "-vary", "gpuspec=100")...)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.HasPrefix(out, "FGD protocol: 4 nodes, 7 GPUs; 6 pods in the list (variant gpuspec=100); seeds 4 (mean)\n") {
		t.Fatalf("header:\n%s", out)
	}
	c, shapes, err := LoadVariant(traceArgs[1], traceArgs[3], openb.Flat, openb.Variant{Kind: "gpuspec", Percent: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i := range shapes {
		if shapes[i].GPUs > 0 && len(shapes[i].Models) != 1 {
			t.Errorf("shape %d accepts models %v, want one", i, shapes[i].Models)
		}
	}
	_, plain, _ := runCommand(append(traceArgs, "-seeds", "4", "-policy", "bestfit")...)
	curve := func(table string) string { // the bestfit row, less pods/s
		f := strings.Fields(table[strings.LastIndex(table, "bestfit"):])
		return strings.Join(f[:len(f)-1], " ")
	}
	if curve(plain) == curve(out) || len(c.Nodes) != 4 {
		t.Errorf("the variant changed nothing:\n%s\n%s", plain, out)
	}
}

func TestCommandErrors(t *testing.T) {
	missing := filepath.Join("testdata", "missing.csv")
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"-h"}, ExitOK, "usage: blink fgd"},
		{nil, ExitInvalid, "-nodes and -pods are required"},
		{append(traceArgs, "extra"), ExitInvalid, `unexpected argument "extra"`},
		{append(traceArgs, "-seeds", "9-1"), ExitInvalid, `bad seed or range "9-1"`},
		{append(traceArgs, "-policy", "fgd"), ExitInvalid, `unknown policy "fgd"`},
		{append(traceArgs, "-tree", "rack"), ExitInvalid, `unknown tree "rack"`},
		{append(traceArgs, "-vary", "gpushare=200"), ExitInvalid, `percent "200"`},
		{append(traceArgs, "-vary", "fraction=20"), ExitInvalid, "KIND one of gpushare, multigpu, gpuspec, cpu"},
		{[]string{"-nodes", missing, "-pods", traceArgs[3]}, ExitInvalid, "missing.csv"},
		{[]string{"-nodes", traceArgs[1], "-pods", traceArgs[1]}, ExitInvalid, `no column "name"`},
		{append(traceArgs, "-seeds", "1", "-plot", filepath.Join(t.TempDir(), "no", "dir.png")), ExitInternal, "dir.png"},
	} {
		code, _, errOut := runCommand(tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.stderr) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.stderr)
		}
	}
}
