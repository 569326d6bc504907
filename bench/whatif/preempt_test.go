package whatif

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// removeVictims removes the named running jobs from the cluster's State (the
// victims of a preempt answer), so that its pods can be checked as a
// placement on what is left.
func removeVictims(c *Cluster, victims []string) error {
	for _, v := range victims {
		id := slices.Index(c.Jobs, v)
		if id < 0 {
			return fmt.Errorf("victim %q is not a running job", v)
		}
		if err := c.State.Apply(topology.Delta{Ops: []topology.Op{topology.RemoveJob(topology.JobID(id))}}); err != nil {
			return fmt.Errorf("victim %q: %w", v, err)
		}
	}
	return nil
}

// TestPreemptGoldens checks what a preempt answer promises beyond the
// contract every answer keeps (TestGolden): victims are running jobs,
// preemptible, of priority below the request's, listed once and sorted
// byte-wise, and irreducible — with any one of them kept, the request no
// longer fits (placement on the cluster without the others).
func TestPreemptGoldens(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "preempt_*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no preempt scenarios: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			in, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			code, stdout, _ := command(t, nil, in)
			if code != ExitOK {
				return
			}
			var a Answer
			if err := json.Unmarshal([]byte(stdout), &a); err != nil {
				t.Fatal(err)
			}
			sc, err := Decode(bytes.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.IsSorted(a.Victims) || len(slices.Compact(slices.Clone(a.Victims))) != len(a.Victims) {
				t.Errorf("victims not sorted or repeated: %v", a.Victims)
			}
			for _, v := range a.Victims {
				i := slices.IndexFunc(sc.Jobs, func(j Job) bool { return j.Name == v })
				if i < 0 {
					t.Fatalf("victim %q is not a running job", v)
				}
				j := &sc.Jobs[i]
				if !j.Preemptible || j.Priority >= sc.Request.Priority {
					t.Errorf("victim %q (priority %d, preemptible %v) is not preemptible below %d", v, j.Priority, j.Preemptible, sc.Request.Priority)
				}
			}
			for k, v := range a.Victims {
				rest := slices.Delete(slices.Clone(a.Victims), k, k+1)
				if fitsWithout(t, sc, rest) {
					t.Errorf("victim %q is not needed: the request fits without the others", v)
				}
			}
		})
	}
}

// fitsWithout reports whether the scenario's request fits once the named
// jobs are removed.
func fitsWithout(t *testing.T, sc *Scenario, gone []string) bool {
	t.Helper()
	c, err := sc.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := removeVictims(c, gone); err != nil {
		t.Fatal(err)
	}
	req, _, err := c.Request(sc.Request, topology.JobID(len(c.Jobs)))
	if err != nil {
		t.Fatal(err)
	}
	var v placement.Solver
	var plan placement.Plan
	ok, _, err := v.Place(c.State, &req, &plan)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}
