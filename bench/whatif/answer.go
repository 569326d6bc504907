package whatif

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Answer is the reply to a scenario. Its JSON has every key, lists as []
// (never null); Encode writes it.
type Answer struct {
	Fits    bool     `json:"fits"`
	Pods    []Placed `json:"pods"`    // rank order
	Victims []string `json:"victims"` // preempt: job names, sorted byte-wise
	Moves   []Move   `json:"moves"`   // defrag: in execution order
	Reason  string   `json:"reason"`  // why not, when Fits is false
	Exact   bool     `json:"exact"`   // the answer is proven
}

// Placed is where a pod goes: its host, the host's GPU indices, and its
// milli-GPU share (0 for whole GPUs).
type Placed struct {
	Host  string `json:"host"`
	GPUs  []int  `json:"gpus"`
	Milli int32  `json:"milli"`
}

// Move re-places every pod of a running job: Pods are all of the job's pods
// after the move, in its input order.
type Move struct {
	Job  string   `json:"job"`
	Pods []Placed `json:"pods"`
}

// noFit is the answer of a request that cannot fit, for reason.
func noFit(reason string) *Answer {
	return &Answer{Reason: reason, Exact: true}
}

// normalize makes every list non-nil, and empty when the answer does not fit.
func (a *Answer) normalize() {
	if !a.Fits {
		a.Pods, a.Victims, a.Moves = nil, nil, nil
	}
	a.Pods = nonNil(a.Pods)
	a.Victims = nonNil(a.Victims)
	a.Moves = nonNil(a.Moves)
	for i := range a.Pods {
		a.Pods[i].GPUs = nonNil(a.Pods[i].GPUs)
	}
	for i := range a.Moves {
		a.Moves[i].Pods = nonNil(a.Moves[i].Pods)
		for k := range a.Moves[i].Pods {
			a.Moves[i].Pods[k].GPUs = nonNil(a.Moves[i].Pods[k].GPUs)
		}
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Encode writes the answer as JSON: one key per line, one pod, victim or move
// per line, in the order of the format.
func (a *Answer) Encode(w io.Writer) error {
	a.normalize()
	var b bytes.Buffer
	b.WriteString("{\n")
	field := func(key string, v any, last bool) {
		fmt.Fprintf(&b, "  %q: %s", key, mustJSON(v))
		if !last {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	list := func(key string, n int, item func(i int) any) {
		if n == 0 {
			field(key, []int{}, false)
			return
		}
		fmt.Fprintf(&b, "  %q: [\n", key)
		for i := range n {
			b.WriteString("    ")
			b.Write(mustJSON(item(i)))
			if i < n-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString("  ],\n")
	}
	field("fits", a.Fits, false)
	list("pods", len(a.Pods), func(i int) any { return a.Pods[i] })
	list("victims", len(a.Victims), func(i int) any { return a.Victims[i] })
	list("moves", len(a.Moves), func(i int) any { return a.Moves[i] })
	field("reason", a.Reason, false)
	field("exact", a.Exact, true)
	b.WriteString("}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// mustJSON marshals values of the Answer's own types, which cannot fail.
func mustJSON(v any) []byte {
	out, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return out
}

// A mode answers a scenario on its built cluster.
type mode func(c *Cluster, sc *Scenario) (*Answer, error)

// modes are the implemented modes; pending are the modes of the format that
// later versions implement.
var (
	modes   = map[string]mode{ModePlace: place, ModePreempt: preemptAnswer, ModeDefrag: defragAnswer}
	pending = []string{ModePreempt, ModeDefrag}
)

// Run answers a decoded scenario: it checks the mode, builds the cluster
// (Build) and asks the engine. A request that cannot fit is an answer
// (Fits false); errors wrap ErrInvalid or ErrNotImplemented.
func Run(sc *Scenario) (*Answer, error) {
	m, ok := modes[sc.Mode]
	switch {
	case ok:
	case sc.Mode == "":
		return nil, fmt.Errorf("%w: mode is missing (place, preempt or defrag)", ErrInvalid)
	case isPending(sc.Mode):
		return nil, fmt.Errorf("whatif: mode %s is %w", sc.Mode, ErrNotImplemented)
	default:
		return nil, fmt.Errorf("%w: unknown mode %q (place, preempt or defrag)", ErrInvalid, sc.Mode)
	}
	if sc.MaxMoves != nil && *sc.MaxMoves < 0 {
		return nil, fmt.Errorf("%w: maxMoves %d, want ≥ 0", ErrInvalid, *sc.MaxMoves)
	}
	c, err := sc.Build()
	if err != nil {
		return nil, err
	}
	a, err := m(c, sc)
	if err != nil {
		return nil, err
	}
	a.normalize()
	return a, nil
}

func isPending(m string) bool {
	for _, p := range pending {
		if p == m {
			return true
		}
	}
	return false
}

// place answers mode "place": Solver.Place on the cluster as it is.
func place(c *Cluster, sc *Scenario) (*Answer, error) {
	if sc.Request == nil {
		return nil, fmt.Errorf("%w: mode place needs a request", ErrInvalid)
	}
	req, noModel, err := c.Request(sc.Request, topology.JobID(len(c.Jobs)))
	if err != nil {
		return nil, err
	}
	if noModel {
		return noFit(placement.Reason{Code: placement.NoModel}.Format(c.Tree)), nil
	}
	var v placement.Solver
	var plan placement.Plan
	fits, reason, err := v.Place(c.State, &req, &plan)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: request: %w", ErrInvalid, err)
	case !fits:
		return noFit(reason.Format(c.Tree)), nil
	}
	// The plan must apply to the State it was made on; if it does not, the
	// engine is wrong, not the scenario.
	if err := c.State.Apply(plan.Delta()); err != nil {
		return nil, fmt.Errorf("whatif: internal error: the plan does not apply: %w", err)
	}
	return &Answer{Fits: true, Pods: c.placed(plan.Pods), Exact: true}, nil
}

// placed converts engine pods to the answer's form.
func (c *Cluster) placed(pods []topology.Pod) []Placed {
	out := make([]Placed, len(pods))
	for i, p := range pods {
		out[i] = Placed{Host: c.Tree.HostName(p.Host), GPUs: indices(p.GPUs), Milli: p.Milli}
	}
	return out
}

// indices returns the set bits of mask, ascending: host GPU indices.
func indices(mask uint64) []int {
	out := make([]int, 0, bits.OnesCount64(mask))
	for ; mask != 0; mask &= mask - 1 {
		out = append(out, bits.TrailingZeros64(mask))
	}
	return out
}
