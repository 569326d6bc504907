package blink_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// harness drives an engine in a test, checking invariants after every call.
type harness struct {
	t    testing.TB
	e    *blink.Engine
	tree *topology.Tree
}

func newHarness(t testing.TB, sh topology.Shape, cfg blink.Config) *harness {
	t.Helper()
	tree, err := topology.BuildShape(sh)
	return harnessOn(t, tree, err, cfg)
}

// newHarnessHosts is newHarness for a tree built from a host list.
func newHarnessHosts(t testing.TB, levels []string, hosts []topology.HostSpec, cfg blink.Config) *harness {
	t.Helper()
	tree, err := topology.BuildHosts(levels, hosts)
	return harnessOn(t, tree, err, cfg)
}

// harnessOn starts an engine on an empty State of tree (built with err).
func harnessOn(t testing.TB, tree *topology.Tree, err error, cfg blink.Config) *harness {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	e, err := blink.New(topology.NewState(tree), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, e: e, tree: tree}
}

// racks is a cluster of n racks of hosts hosts with gpus GPUs each.
func racks(n, hosts, gpus int) topology.Shape {
	return topology.Shape{Levels: []string{"rack"}, FanOut: []int{n, hosts}, GPUsPerHost: gpus}
}

func (h *harness) level(name string) topology.Level {
	l, ok := h.tree.LevelByName(name)
	if !ok {
		h.t.Fatalf("no level %q", name)
	}
	return l
}

func (h *harness) check() {
	h.t.Helper()
	if err := h.e.Check(); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) submit(now int64, spec blink.JobSpec) blink.JobID {
	h.t.Helper()
	id, err := h.e.Submit(now, spec)
	if err != nil {
		h.t.Fatal(err)
	}
	h.check()
	return id
}

func (h *harness) cycle(now int64) blink.Decisions {
	h.t.Helper()
	d := h.e.Cycle(now)
	h.check()
	return d
}

func (h *harness) ok(err error) {
	h.t.Helper()
	if err != nil {
		h.t.Fatal(err)
	}
	h.check()
}

// pic renders the cluster: letters by job slot, 's' after spare hosts.
func (h *harness) pic() string {
	return testkit.Picture{Mark: func(x topology.HostID) byte {
		if h.e.IsSpare(x) {
			return 's'
		}
		return 0
	}}.Render(h.e.State())
}

// wantPic compares the picture with want (leading newline and tabs trimmed).
func (h *harness) wantPic(want string) {
	h.t.Helper()
	want = strings.TrimLeft(want, "\n")
	var lines []string
	for _, l := range strings.Split(want, "\n") {
		lines = append(lines, strings.TrimLeft(l, "\t"))
	}
	want = strings.Join(lines, "\n")
	if got := h.pic(); got != want {
		h.t.Fatalf("cluster:\n%s\nwant:\n%s", got, want)
	}
}

func (h *harness) status(id blink.JobID) blink.Status {
	h.t.Helper()
	st, err := h.e.Status(id)
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}

func (h *harness) wantStatus(id blink.JobID, want blink.Status) {
	h.t.Helper()
	if got := h.status(id); got != want {
		h.t.Fatalf("job %v is %v, want %v", id, got, want)
	}
}

// gang is a spec of pods pods of gpus GPUs.
func gang(pods, gpus int32, prio int32) blink.JobSpec {
	return blink.JobSpec{Sets: []placement.PodSet{{Pods: pods, GPUs: gpus}}, Priority: prio}
}

func filler(pods, gpus int32, prio int32) blink.JobSpec {
	s := gang(pods, gpus, prio)
	s.Preemptible = true
	return s
}

// bindIDs lists the jobs a cycle bound.
func bindIDs(d blink.Decisions) []blink.JobID {
	var ids []blink.JobID
	for _, b := range d.Binds {
		ids = append(ids, b.Job)
	}
	return ids
}

func reasonOf(d blink.Decisions, id blink.JobID) (blink.Reason, bool) {
	for _, w := range d.Pending {
		if w.Job == id {
			return w.Reason, true
		}
	}
	return blink.Reason{}, false
}

// confirmAll reports Bound for every bind and repair of d.
func (h *harness) confirmAll(d blink.Decisions) {
	h.t.Helper()
	for _, b := range d.Binds {
		h.ok(h.e.Bound(b.Job))
	}
	for _, r := range d.Repairs {
		if !r.Requeued {
			h.ok(h.e.Bound(r.Job))
		}
	}
}

// snapshot is the engine's state: the State's bytes, the engine's own
// fields (Fingerprint, test-only), and the status of every job.
func snapshot(t testing.TB, e *blink.Engine) []byte {
	t.Helper()
	b, err := e.State().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.Write(b)
	buf.WriteString(e.Fingerprint())
	for _, id := range e.AppendJobs(nil) {
		st, _ := e.Status(id)
		fmt.Fprintf(&buf, "|%v:%v", id, st)
	}
	fmt.Fprintf(&buf, "|pending %d now %d", e.NumPending(), e.Now())
	for h := topology.HostID(0); int(h) < e.State().Tree().NumHosts(); h++ {
		if e.IsSpare(h) {
			fmt.Fprintf(&buf, "|s%d", h)
		}
	}
	return buf.Bytes()
}

// wantErr checks that err wraps target and that the engine did not change.
func wantUnchanged(t testing.TB, e *blink.Engine, before []byte, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want %v", err, target)
	}
	if after := snapshot(t, e); !bytes.Equal(before, after) {
		t.Fatalf("a rejected report changed the engine")
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
}
