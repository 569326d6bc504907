package scale

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// small is the tests' run: a 16k NVL72 cluster (18,432 GPUs) at 90% load,
// enough events to see places, a preemption and idle cycles.
var small = Config{GPUs: "16k", Shape: "nvl72", Load: 0.9, Events: 300, Seed: 1}

func TestDeterministic(t *testing.T) {
	var digests []uint64
	var sums []Summary
	for range 2 {
		e, err := Start(small)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Play(e, small)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Check(); err != nil {
			t.Fatalf("after the run: %v", err)
		}
		digests = append(digests, r.Digest)
		s := Summarize(r)
		for i := range s.Kinds { // latencies differ between runs; counts do not
			s.Kinds[i] = KindSummary{Kind: s.Kinds[i].Kind, Count: s.Kinds[i].Count}
		}
		s.All, s.FloorNs = KindSummary{}, 0
		sums = append(sums, s)
	}
	if digests[0] != digests[1] || fmt.Sprint(sums[0]) != fmt.Sprint(sums[1]) {
		t.Fatalf("same seed, different runs:\n%+v\n%+v", sums[0], sums[1])
	}
	other := small
	other.Seed = 2
	r, err := Run(other)
	if err != nil {
		t.Fatal(err)
	}
	if r.Digest == digests[0] {
		t.Errorf("seeds 1 and 2 gave the same digest %016x", r.Digest)
	}
}

func TestKinds(t *testing.T) {
	r, err := Run(small)
	if err != nil {
		t.Fatal(err)
	}
	if r.Arrivals+r.Departures != small.Events || r.Arrivals == 0 || r.Departures == 0 {
		t.Errorf("%d arrivals + %d departures, want %d events of both", r.Arrivals, r.Departures, small.Events)
	}
	n := 0
	for k := range NumKinds {
		n += len(r.Latencies[k])
		p50, p90, p99, mx := r.Percentile(k, 50), r.Percentile(k, 90), r.Percentile(k, 99), r.Percentile(k, 100)
		if !(p50 <= p90 && p90 <= p99 && p99 <= mx) {
			t.Errorf("%v: percentiles %v %v %v %v not ascending", k, p50, p90, p99, mx)
		}
		if len(r.Latencies[k]) > 0 && mx <= 0 {
			t.Errorf("%v: %d cycles, max latency %v", k, len(r.Latencies[k]), mx)
		}
	}
	if n != small.Events {
		t.Errorf("%d cycles classified, want %d", n, small.Events)
	}
	if len(r.Latencies[Place]) == 0 || len(r.Latencies[Idle]) == 0 || len(r.Latencies[Preempt]) == 0 {
		t.Errorf("cycles per kind %v %v %v: want places, preemptions and idle cycles",
			len(r.Latencies[Place]), len(r.Latencies[Preempt]), len(r.Latencies[Idle]))
	}
	if r.Binds < len(r.Latencies[Place]) || r.Preemptions < len(r.Latencies[Preempt]) || r.Victims < r.Preemptions {
		t.Errorf("decisions: %d binds, %d preemptions, %d victims for %d place and %d preempt cycles",
			r.Binds, r.Preemptions, r.Victims, len(r.Latencies[Place]), len(r.Latencies[Preempt]))
	}
	if r.FloorNs <= 0 {
		t.Errorf("floor %v", r.FloorNs)
	}
	var out bytes.Buffer
	if err := WriteText(&out, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"place", "reject", "preempt", "defrag", "p99 µs", "p99 xF", "digest"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Command([]string{"-gpus", "16k", "-events", "100", "-seed", "3", "-json"}, nil, &out, &errOut)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var s Summary
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	if s.GPUs != "16k" || s.Shape != "nvl72" || s.Seed != 3 || s.Events != 100 || len(s.Digest) != 16 || s.FloorNs <= 0 {
		t.Errorf("summary %+v", s)
	}
	n := 0
	for i, k := range s.Kinds {
		if k.Kind != Kind(i).String() {
			t.Errorf("kinds[%d] is %q, want %q", i, k.Kind, Kind(i))
		}
		if k.Count > 0 && (k.Max <= 0 || k.MaxxF <= 0 || k.P50 > k.P99) {
			t.Errorf("kind %+v", k)
		}
		n += k.Count
	}
	if len(s.Kinds) != int(NumKinds) || n != 100 || s.All.Count != 100 {
		t.Errorf("%d kinds, %d cycles (all: %d), want %d kinds, 100 cycles", len(s.Kinds), n, s.All.Count, NumKinds)
	}
}

func TestCommandUsage(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"-gpus", "3M"}, ExitInvalid, "unknown size"},
		{[]string{"-shape", "torus"}, ExitInvalid, "unknown shape"},
		{[]string{"-load", "1.5"}, ExitInvalid, "load"},
		{[]string{"-events", "-1"}, ExitInvalid, "events"},
		{[]string{"extra"}, ExitInvalid, "unexpected argument"},
		{[]string{"-h"}, ExitOK, "usage: blink scale"},
	} {
		var out, errOut bytes.Buffer
		if code := Command(tc.args, nil, &out, &errOut); code != tc.code || !strings.Contains(errOut.String(), tc.stderr) {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tc.args, code, errOut.String(), tc.code, tc.stderr)
		}
	}
}

// A run's counts depend only on its configuration (the latencies, printed
// by WriteText, depend on the machine).
func ExampleRun() {
	r, err := Run(Config{GPUs: "16k", Shape: "nvl72", Load: 0.9, Events: 100, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d arrivals, %d departures, %d binds, %d place cycles\n",
		r.Arrivals, r.Departures, r.Binds, len(r.Latencies[Place]))
	// Output: 80 arrivals, 20 departures, 80 binds, 80 place cycles
}
