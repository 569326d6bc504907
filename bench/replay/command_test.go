package replay

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/blinksched/blink/bench/openb"
)

func runCommand(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := Command(args, nil, &out, &errOut)
	return code, out.String(), errOut.String()
}

var traceArgs = []string{"-pods", filepath.Join("testdata", "pods.csv"), "-nodes", filepath.Join("testdata", "nodes.csv")}

// TestCommand checks the summary's lines (numbers of the hand-checked
// scenario, latencies only by shape), the log file and the plot.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	logPath, png := filepath.Join(dir, "log.jsonl"), filepath.Join(dir, "replay.png")
	code, out, errOut := runCommand(append(traceArgs, "-log", logPath, "-plot", png)...)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := []string{
		`^replay: 9 pods on 2 nodes \(2 GPUs\); arrivals at t = 0…26 s \(0\.00 days\), last event at 50 s$`,
		`^pods: 4 placed at arrival, 2 after waiting, 3 gave up at their deletion time, 0 still waiting at the end$`,
		`^GPU allocation: 95\.19% time-weighted over the arrivals, 100\.00% peak$`,
		`^waiting pods: 0\.58 time-weighted, 2 peak; wait of pods that waited: p50 5 s, p99 8 s, max 8 s$`,
		`^fragmentation \(free GPU that 1-GPU pods cannot use\): 19\.23% time-weighted, 0\.00% mean while allocation ≥ 90%$`,
		`^decision latency: p50 [0-9.]+[nµm]?s, p99 [0-9.]+[nµm]?s, max [0-9.]+[nµm]?s over 10 Place calls$`,
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i := range want {
		if !regexp.MustCompile(want[i]).MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %q", i, lines[i], want[i])
		}
	}
	log, err := os.ReadFile(logPath)
	golden, _ := os.ReadFile(filepath.Join("testdata", "events.golden"))
	if err != nil || renderEvents(t, log) != string(golden) {
		t.Errorf("log (%v):\n%s", err, log)
	}
	b, err := os.ReadFile(png)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("plot: %d bytes, %v", len(b), err)
	}
}

func TestCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"-h"}, ExitOK, "usage: blink replay"},
		{[]string{"-pods", traceArgs[1]}, ExitInvalid, "-pods and -nodes are required"},
		{append(traceArgs, "x"), ExitInvalid, `unexpected argument "x"`},
		{append(traceArgs, "-compress", "0.5"), ExitInvalid, "-compress 0.5, want ≥ 1"},
		{append(traceArgs, "-tree", "rack"), ExitInvalid, `unknown tree "rack"`},
		{[]string{"-pods", traceArgs[3], "-nodes", traceArgs[3]}, ExitInvalid, `no column "name"`},
		{append(traceArgs, "-log", filepath.Join(t.TempDir(), "no", "log")), ExitInternal, "no such file"},
	} {
		code, _, errOut := runCommand(tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.stderr) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.stderr)
		}
	}
}

// TestCompress: arrivals are divided, durations kept.
func TestCompress(t *testing.T) {
	pods := []openb.Pod{{Creation: 100, Deletion: 150, HasDeletion: true}, {Creation: 7}}
	Compress(pods, 10)
	if pods[0].Creation != 10 || pods[0].Deletion != 60 || pods[1].Creation != 0 || pods[1].HasDeletion {
		t.Errorf("%+v", pods)
	}
}

// TestDuplicateNames: job names must identify pods in the log.
func TestDuplicateNames(t *testing.T) {
	c, _, _ := loadTest(t)
	if _, err := Run(c, []openb.Pod{{Name: "x"}, {Name: "x"}}, Config{}); err == nil {
		t.Error("no error for two pods named x")
	}
}
