package blink_test

import (
	"math"
	"testing"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// TestBadReports: every report that does not match the engine's state is
// rejected with an error and changes nothing (the State's bytes and every
// job's status compared before and after).
func TestBadReports(t *testing.T) {
	h := newHarness(t, racks(2, 2, 4), blink.Config{Spares: []blink.SparePolicy{{Level: 1, Hosts: 1}}})
	running := h.submit(0, gang(1, 4, 5))
	binding := h.submit(0, gang(1, 2, 5))
	h.cycle(0)
	h.ok(h.e.Bound(running))
	pending := h.submit(1, gang(4, 4, 1)) // does not fit
	gone := h.submit(1, gang(1, 1, 1))
	h.ok(h.e.Cancel(gone))
	h.ok(h.e.HostFailed(3))
	h.ok(h.e.Drain(2))
	h.cycle(2)
	if h.status(pending) != blink.Pending || h.status(binding) != blink.Binding {
		t.Fatalf("setup: pending %v binding %v", h.status(pending), h.status(binding))
	}
	never := blink.JobID(12345)
	tree := h.tree
	cases := []struct {
		name   string
		call   func() error
		target error
	}{
		{"Bound never submitted", func() error { return h.e.Bound(never) }, blink.ErrUnknown},
		{"Bound cancelled", func() error { return h.e.Bound(gone) }, blink.ErrUnknown},
		{"Bound pending", func() error { return h.e.Bound(pending) }, blink.ErrState},
		{"Bound twice", func() error { return h.e.Bound(running) }, blink.ErrState},
		{"BindFailed running", func() error { return h.e.BindFailed(running) }, blink.ErrState},
		{"BindFailed pending", func() error { return h.e.BindFailed(pending) }, blink.ErrState},
		{"Finished pending", func() error { return h.e.Finished(pending) }, blink.ErrState},
		{"Finished unknown", func() error { return h.e.Finished(never) }, blink.ErrUnknown},
		{"Evicted pending", func() error { return h.e.Evicted(pending) }, blink.ErrState},
		{"Evicted unknown", func() error { return h.e.Evicted(gone) }, blink.ErrUnknown},
		{"Moved running", func() error { return h.e.Moved(running) }, blink.ErrState},
		{"Moved binding", func() error { return h.e.Moved(binding) }, blink.ErrState},
		{"Cancel unknown", func() error { return h.e.Cancel(never) }, blink.ErrUnknown},
		{"HostFailed negative", func() error { return h.e.HostFailed(-1) }, blink.ErrUnknown},
		{"HostFailed out of range", func() error { return h.e.HostFailed(topology.HostID(tree.NumHosts())) }, blink.ErrUnknown},
		{"HostFailed twice", func() error { return h.e.HostFailed(3) }, blink.ErrState},
		{"GPUFailed out of range", func() error { return h.e.GPUFailed(topology.GPUID(tree.NumGPUs())) }, blink.ErrUnknown},
		{"DomainFailed out of range", func() error { return h.e.DomainFailed(topology.DomainID(tree.NumDomains())) }, blink.ErrUnknown},
		{"Recovered healthy", func() error { return h.e.Recovered(0) }, blink.ErrState},
		{"Recovered out of range", func() error { return h.e.Recovered(99) }, blink.ErrUnknown},
		{"Drain draining", func() error { return h.e.Drain(2) }, blink.ErrState},
		{"Drain failed", func() error { return h.e.Drain(3) }, blink.ErrState},
		{"Submit no sets", func() error { _, err := h.e.Submit(3, blink.JobSpec{}); return err }, blink.ErrInvalid},
		{"Submit bad MinPods", func() error {
			s := gang(2, 4, 1)
			s.MinPods = []int32{3}
			_, err := h.e.Submit(3, s)
			return err
		}, blink.ErrInvalid},
		{"Submit MinPods count", func() error {
			s := gang(2, 4, 1)
			s.MinPods = []int32{1, 1}
			_, err := h.e.Submit(3, s)
			return err
		}, blink.ErrInvalid},
		{"Submit MinPods off slices", func() error {
			s := blink.JobSpec{Sets: []placement.PodSet{{Pods: 4, GPUs: 1, SliceSize: 2, SliceLevel: 2}}, MinPods: []int32{3}}
			_, err := h.e.Submit(3, s)
			return err
		}, blink.ErrInvalid},
		{"Submit negative run time", func() error { s := gang(1, 1, 1); s.RunTime = -1; _, err := h.e.Submit(3, s); return err }, blink.ErrInvalid},
		{"Submit bad level", func() error { s := gang(1, 1, 1); s.Required = 9; _, err := h.e.Submit(3, s); return err }, blink.ErrInvalid},
		{"Submit bad pod", func() error { _, err := h.e.Submit(3, gang(1, 65, 1)); return err }, blink.ErrInvalid},
		{"Submit bad model", func() error { s := gang(1, 1, 1); s.Models = []int{7}; _, err := h.e.Submit(3, s); return err }, blink.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(t, h.e)
			wantUnchanged(t, h.e, before, c.call(), c.target)
		})
	}
	// A whole domain failed twice is rejected too.
	rack1, _ := tree.DomainByPath([]string{"rack1"})
	h.ok(h.e.DomainFailed(rack1))
	before := snapshot(t, h.e)
	wantUnchanged(t, h.e, before, h.e.DomainFailed(rack1), blink.ErrState)
	// And a GPU of a failed... GPU failing twice.
	h.ok(h.e.GPUFailed(1))
	before = snapshot(t, h.e)
	wantUnchanged(t, h.e, before, h.e.GPUFailed(1), blink.ErrState)
}

func TestConfigValidate(t *testing.T) {
	tree, _ := topology.BuildShape(racks(1, 2, 4))
	bad := []blink.Config{
		{BindTimeout: -1},
		{EvictTimeout: -5},
		{DefaultRunTime: -1},
		{MaxReservations: -2},
		{MaxMoves: -1},
		{Spares: []blink.SparePolicy{{Level: 0, Hosts: 1}}},
		{Spares: []blink.SparePolicy{{Level: 2, Hosts: 1}}},
		{Spares: []blink.SparePolicy{{Level: 1, Hosts: -1}}},
		{Spares: []blink.SparePolicy{{Level: 1, Hosts: 1}, {Level: 1, Hosts: 2}}},
		{Profile: &placement.Profile{Shapes: []placement.ProfileShape{{GPUs: 1, Weight: -1}}}},
		{Profile: &placement.Profile{Shapes: []placement.ProfileShape{{GPUs: 1, Milli: 1000, Weight: 1}}}},
	}
	for i, c := range bad {
		if _, err := blink.New(topology.NewState(tree), c); err == nil {
			t.Errorf("config %d (%+v) accepted", i, c)
		}
	}
	e, err := blink.New(topology.NewState(tree), blink.Config{MaxReservations: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := e.Config()
	if c.BindTimeout != 60 || c.EvictTimeout != 120 || c.NominationTimeout != 180 || c.MaxReservations != 0 ||
		c.MaxPreemptAttempts != 4 || c.MaxMoves != 4 {
		t.Fatalf("defaults %+v", c)
	}
}

// TestAdopt: jobs already in the State are adopted as running.
func TestAdopt(t *testing.T) {
	tree, _ := topology.BuildShape(racks(1, 4, 4))
	s := topology.NewState(tree)
	rack := topology.Level(1)
	job := topology.Job{Priority: 3, Preemptible: true, Required: rack, Preferred: topology.NoLevel}
	if err := s.Apply(topology.Delta{Ops: []topology.Op{
		topology.AddJob(2, job, topology.Pod{Host: 0, GPUs: 0b1111}, topology.Pod{Host: 1, GPUs: 0b0011}),
	}}); err != nil {
		t.Fatal(err)
	}
	e, err := blink.New(s, blink.Config{})
	if err != nil {
		t.Fatal(err)
	}
	id := blink.JobID(2)
	if st, err := e.Status(id); err != nil || st != blink.Running {
		t.Fatalf("adopted job: %v %v", st, err)
	}
	spec, _ := e.Spec(id)
	if len(spec.Sets) != 2 || spec.Sets[0].GPUs != 4 || spec.Sets[1].GPUs != 2 || spec.Required != rack {
		t.Fatalf("spec %+v", spec)
	}
	// New jobs take the free slots below the adopted one first.
	n, _ := e.Submit(0, gang(1, 1, 1))
	if n.Slot() != 0 {
		t.Fatalf("new job slot %d", n.Slot())
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
	if err := e.Evicted(id); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.Status(id); st != blink.Pending {
		t.Fatalf("evicted adopted job: %v", st)
	}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestSparePool checks the binomial tail against hand-computed values.
//
// 18 hosts, p = 0.01: P(0) = 0.99^18 = 0.834514; P(1) = 18·0.01·0.99^17 =
// 0.151730; P(2) = 153·0.0001·0.99^16 = 0.013027; P(3) = 816·1e-6·0.99^15
// = 0.000702. Cumulative: 0.834514, 0.986244, 0.999271, 0.999973.
// 72 hosts, p = 0.05: P(0) = 0.95^72 = 0.024894, and P(k+1) = P(k)·(72-k)/(k+1)
// ·(0.05/0.95): P(1…7) = 0.094336, 0.176260, 0.216459, 0.196522, 0.140669,
// 0.082674, 0.041026. Cumulative: P(X ≤ 3) = 0.511950, P(X ≤ 5) = 0.849141,
// P(X ≤ 6) = 0.931814, P(X ≤ 7) = 0.972840.
func TestSparePool(t *testing.T) {
	cases := []struct {
		hosts          int
		p, target      float64
		want           int
		absorbAt, prob float64
	}{
		{18, 0.01, 0.80, 0, 0, 0.834514},
		{18, 0.01, 0.9, 1, 1, 0.986244},
		{18, 0.01, 0.99, 2, 2, 0.999271},
		{18, 0.01, 0.9995, 3, 3, 0.999973},
		{72, 0.05, 0.5, 3, 3, 0.511950},
		{72, 0.05, 0.85, 6, 5, 0.849141},
		{72, 0.05, 0.9, 6, 6, 0.931814},
		{72, 0.05, 0.95, 7, 7, 0.972840},
		{10, 0, 0.99, 0, 0, 1},
		{10, 1, 0.5, 10, 9, 0},
		{10, 0.5, 1, 10, 10, 1},
		{0, 0.3, 0.9, 0, 0, 1},
	}
	for _, c := range cases {
		got, err := blink.SparePool(c.hosts, c.p, c.target)
		if err != nil || got != c.want {
			t.Errorf("SparePool(%d, %v, %v) = %d, %v; want %d", c.hosts, c.p, c.target, got, err, c.want)
		}
		if p := blink.AbsorbProbability(c.hosts, int(c.absorbAt), c.p); math.Abs(p-c.prob) > 1e-6 {
			t.Errorf("AbsorbProbability(%d, %v, %v) = %.6f, want %.6f", c.hosts, c.absorbAt, c.p, p, c.prob)
		}
	}
	// 2^40 hosts: more than a topology holds (summing from 0 failed would
	// take 2^39 steps).
	for _, bad := range [][3]float64{{-1, 0.1, 0.9}, {10, -0.1, 0.9}, {10, 1.1, 0.9}, {10, 0.1, 2}, {10, math.NaN(), 0.5}, {1 << 40, 0.5, 0.5}} {
		if _, err := blink.SparePool(int(bad[0]), bad[1], bad[2]); err == nil {
			t.Errorf("SparePool%v accepted", bad)
		}
	}
	if !math.IsNaN(blink.AbsorbProbability(-1, 1, 0.1)) || !math.IsNaN(blink.AbsorbProbability(1<<40, 1<<39, 0.5)) {
		t.Error("AbsorbProbability accepted -1 or 2^40 hosts")
	}
	// Large domains do not underflow: 10,000 hosts at 1% (mean 100, sd ≈ 10).
	if n, _ := blink.SparePool(10000, 0.01, 0.999); n < 120 || n > 135 {
		t.Errorf("SparePool(10000, 0.01, 0.999) = %d", n)
	}
}
