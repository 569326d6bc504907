package whatif

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/blinksched/blink/topology"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestGolden runs every testdata/NAME.json through Command (as
// `blink whatif < NAME.json`) and compares the exit code, stdout and stderr
// with testdata/NAME.golden. Run with -update to rewrite the goldens.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := command(t, nil, in)
			got := render(code, stdout, stderr)
			golden := strings.TrimSuffix(file, ".json") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if want, err := os.ReadFile(golden); err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
			} else if got != string(want) {
				t.Errorf("%s differs from the golden file:\n--- got\n%s--- want\n%s", name, got, want)
			}
			checkContract(t, name, in, code, stdout, stderr)
		})
	}
}

// render is the golden file's text: the exit code, then stdout and stderr.
func render(code int, stdout, stderr string) string {
	return fmt.Sprintf("exit %d\n-- stdout --\n%s-- stderr --\n%s", code, stdout, stderr)
}

func command(t *testing.T, args []string, stdin []byte) (code int, stdout, stderr string) {
	t.Helper()
	defer func() { // an engine panic fails this scenario, not the whole run
		if p := recover(); p != nil {
			t.Fatalf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	var out, errOut bytes.Buffer
	code = Command(args, bytes.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// checkContract checks what every answer promises, whatever the scenario:
// errors are one line of stderr with nothing on stdout; answers have every
// key, no nulls, nothing when they do not fit, and a plan that keeps the
// request's constraints and applies to the scenario's State.
func checkContract(t *testing.T, name string, in []byte, code int, stdout, stderr string) {
	t.Helper()
	if code != ExitOK {
		if code != ExitInvalid {
			t.Errorf("exit %d, want %d or %d", code, ExitOK, ExitInvalid)
		}
		if stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "blink whatif: ") {
			t.Errorf("an error is one line of stderr and no stdout; got stdout %q, stderr %q", stdout, stderr)
		}
		if !strings.HasPrefix(name, "bad_") && !strings.HasPrefix(name, "mode_") {
			t.Errorf("scenario %s should be answered", name)
		}
		return
	}
	if stderr != "" {
		t.Errorf("an answer writes nothing on stderr; got %q", stderr)
	}
	if strings.HasPrefix(name, "bad_") {
		t.Errorf("scenario %s should be an error", name)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &raw); err != nil {
		t.Fatalf("answer is not a JSON object: %v", err)
	}
	keys := []string{"fits", "pods", "victims", "moves", "reason", "exact"}
	for _, k := range keys {
		if v, ok := raw[k]; !ok || string(v) == "null" {
			t.Errorf("answer key %q missing or null", k)
		}
	}
	if len(raw) != len(keys) || strings.Contains(stdout, "null") {
		t.Errorf("answer has extra keys or a null: %s", stdout)
	}
	var a Answer
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatal(err)
	}
	if !a.Exact && !strings.HasPrefix(name, "preempt_") {
		t.Errorf("place answers are exact")
	}
	if !a.Fits {
		if len(a.Pods)+len(a.Victims)+len(a.Moves) != 0 || a.Reason == "" {
			t.Errorf("a no-fit has empty lists and a reason: %+v", a)
		}
		if strings.HasPrefix(name, "place_") {
			t.Errorf("scenario %s should fit: %s", name, a.Reason)
		}
		return
	}
	if a.Reason != "" || strings.HasPrefix(name, "nofit_") {
		t.Errorf("scenario %s: fits with reason %q", name, a.Reason)
	}
	sc, err := Decode(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyPlace(sc, &a); err != nil {
		t.Error(err)
	}
}

// verifyPlace checks a fitting answer of mode place against the request,
// independently of the solver: pod count and shape, healthy hosts of an
// acceptable model, the required level, slices and exclusivity; then the
// pods must apply to the scenario's State as a new job, and Check must pass.
// It returns the first problem.
func verifyPlace(sc *Scenario, a *Answer) error {
	c, err := sc.Build()
	if err != nil {
		return err
	}
	if err := removeVictims(c, a.Victims); err != nil { // preempt: the pods go where the victims were
		return err
	}
	if err := applyMoves(c, sc, a.Moves); err != nil { // defrag: the pods go where the moves made room
		return err
	}
	tr, r := c.Tree, sc.Request
	if len(a.Pods) != int(r.Pods) {
		return fmt.Errorf("%d pods, request has %d", len(a.Pods), r.Pods)
	}
	level := func(name string) topology.Level {
		l, _ := tr.LevelByName(name)
		return l
	}
	// domain is the domain of level l holding host h (the host itself at the
	// host level).
	domain := func(h topology.HostID, l topology.Level) int {
		if l == tr.HostLevel() {
			return int(h)
		}
		return int(tr.HostDomain(h, l))
	}
	pods := make([]topology.Pod, len(a.Pods))
	for i, p := range a.Pods {
		h, ok := tr.HostByName(p.Host)
		if !ok {
			return fmt.Errorf("pod %d: unknown host %q", i, p.Host)
		}
		var mask uint64
		for _, g := range p.GPUs {
			mask |= 1 << uint(g)
		}
		pods[i] = topology.Pod{Host: h, GPUs: mask, Milli: p.Milli, CPUMilli: r.CPUMilli, MemoryMiB: r.MemoryMiB}
		model := tr.ModelName(tr.HostModel(h))
		switch {
		case c.State.HostHealth(h) != topology.Healthy:
			return fmt.Errorf("pod %d on %s host %s", i, c.State.HostHealth(h), p.Host)
		case len(r.Models) > 0 && !slices.Contains(r.Models, model):
			return fmt.Errorf("pod %d on host %s of model %q, request accepts %v", i, p.Host, model, r.Models)
		case len(p.GPUs) != int(r.GPUs) || p.Milli != r.Milli:
			return fmt.Errorf("pod %d has %d GPUs and milli %d, request %d and %d", i, len(p.GPUs), p.Milli, r.GPUs, r.Milli)
		case r.Exclusive && c.State.HostHasPods(h):
			return fmt.Errorf("exclusive pod %d on host %s, which runs other pods", i, p.Host)
		case r.RequiredLevel != "" && domain(h, level(r.RequiredLevel)) != domain(pods[0].Host, level(r.RequiredLevel)):
			return fmt.Errorf("pods 0 and %d are not in one %s", i, r.RequiredLevel)
		}
		if s := int(r.SliceSize); s > 0 {
			first := i / s * s
			if l := level(r.SliceLevel); domain(h, l) != domain(pods[first].Host, l) {
				return fmt.Errorf("pod %d (host %s) is not in the %s of pod %d (host %s), the first of its slice",
					i, p.Host, r.SliceLevel, first, tr.HostName(pods[first].Host))
			}
		}
	}
	info := topology.Job{Priority: r.Priority, Preemptible: r.Preemptible, Movable: true, Exclusive: r.Exclusive,
		Required: topology.NoLevel, Preferred: topology.NoLevel}
	op := topology.AddJob(topology.JobID(len(sc.Jobs)), info, pods...)
	if err := c.State.Apply(topology.Delta{Ops: []topology.Op{op}}); err != nil {
		return fmt.Errorf("the answer does not apply: %w", err)
	}
	if err := c.State.Check(); err != nil {
		return fmt.Errorf("check after applying the answer: %w", err)
	}
	return nil
}

// TestFileFlag: -f FILE and -f - read the same scenario as stdin.
func TestFileFlag(t *testing.T) {
	file := filepath.Join("testdata", "place_simple.json")
	in, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	code, want, _ := command(t, nil, in)
	if code != ExitOK {
		t.Fatalf("stdin: exit %d", code)
	}
	for _, args := range [][]string{{"-f", file}, {"-f=" + file}, {"-f", "-"}} {
		stdin := []byte("not read")
		if args[len(args)-1] == "-" {
			stdin = in
		}
		if code, got, stderr := command(t, args, stdin); code != ExitOK || got != want {
			t.Errorf("%v: exit %d, stderr %q, stdout\n%s\nwant\n%s", args, code, stderr, got, want)
		}
	}
}

// TestUsage: bad flags, extra arguments and missing files exit 2 with a
// message; -h prints the usage and exits 0.
func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-h"}, ExitOK, Usage},
		{[]string{"-x"}, ExitInvalid, "flag provided but not defined"},
		{[]string{"scenario.json"}, ExitInvalid, `unexpected argument "scenario.json"`},
		{[]string{"-f", filepath.Join("testdata", "no_such_file.json")}, ExitInvalid, "no_such_file.json"},
	} {
		code, stdout, stderr := command(t, tc.args, nil)
		if code != tc.code || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, stdout, stderr, tc.code, tc.want)
		}
	}
}

// TestInputUntouched: Run does not change the decoded scenario, so a caller
// may run it again and get the same answer.
func TestInputUntouched(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "place_required_rack.json"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Decode(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := json.Marshal(sc)
	a1, err1 := Run(sc)
	a2, err2 := Run(sc)
	after, _ := json.Marshal(sc)
	if err1 != nil || err2 != nil || string(before) != string(after) {
		t.Fatalf("errors %v, %v; scenario changed: %t", err1, err2, string(before) != string(after))
	}
	j1, _ := json.Marshal(a1)
	j2, _ := json.Marshal(a2)
	if string(j1) != string(j2) {
		t.Errorf("answers differ:\n%s\n%s", j1, j2)
	}
}

// FuzzCommand: any input is answered (exit 0) or rejected (exit 2) with one
// line on stderr; never a panic or an internal error. The seeds are the
// golden scenarios.
func FuzzCommand(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, file := range files {
		in, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		code, stdout, stderr := command(t, nil, in)
		switch code {
		case ExitOK:
			var a Answer
			if err := json.Unmarshal([]byte(stdout), &a); err != nil || stderr != "" {
				t.Fatalf("answer %q, stderr %q: %v", stdout, stderr, err)
			}
			if a.Fits {
				sc, err := Decode(bytes.NewReader(in))
				if err != nil {
					t.Fatal(err)
				}
				if err := verifyPlace(sc, &a); err != nil {
					t.Fatal(err)
				}
			}
		case ExitInvalid:
			if stdout != "" || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("stdout %q, stderr %q", stdout, stderr)
			}
		default:
			t.Fatalf("exit %d: %s", code, stderr)
		}
	})
}
