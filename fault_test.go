package blink_test

import (
	"slices"
	"testing"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/topology"
)

// rackGang is a gang of pods whole 4-GPU hosts that requires one rack.
func (h *harness) rackGang(pods int32, prio int32) blink.JobSpec {
	s := gang(pods, 4, prio)
	s.Required = h.level("rack")
	return s
}

func oneRepair(t *testing.T, d blink.Decisions) blink.Repair {
	t.Helper()
	if len(d.Repairs) != 1 {
		t.Fatalf("repairs %+v", d.Repairs)
	}
	return d.Repairs[0]
}

func TestRepairFromSpare(t *testing.T) {
	h := newHarness(t, racks(2, 4, 4), blink.Config{Spares: []blink.SparePolicy{{Level: 1, Hosts: 1}}})
	A := h.submit(0, h.rackGang(3, 10))
	B := h.submit(0, filler(1, 4, 1)) // filler may use a spare
	h.confirmAll(h.cycle(0))
	h.wantPic(`
		rack0 |AAAA|AAAA|AAAA|BBBBs|
		rack1 |....|....|....|....s|
	`)
	h.ok(h.e.HostFailed(1))
	d := h.cycle(1)
	r := oneRepair(t, d)
	if r.Job != A || r.Source != blink.FromSpare || !slices.Equal(r.Ranks, []int32{1}) || !slices.Equal(r.Victims, []blink.JobID{B}) {
		t.Fatalf("repair %+v", r)
	}
	if r.Pods[1].Host != 3 || r.Pods[0].Host != 0 || r.Pods[2].Host != 2 {
		t.Fatalf("pods %+v", r.Pods)
	}
	// The spare is consumed: rack0 has no candidate left for a new one.
	h.wantPic(`
		rack0 |AAAA|xxxx|AAAA|AAAA|
		rack1 |....|....|....|....s|
	`)
	h.wantStatus(A, blink.Repairing)
	h.wantStatus(B, blink.Evicting)
	h.ok(h.e.Bound(A))
	h.ok(h.e.Evicted(B))
	h.wantStatus(B, blink.Pending)
	d = h.cycle(2)
	if got := bindIDs(d); !slices.Equal(got, []blink.JobID{B}) {
		t.Fatalf("bound %v", got)
	}
	// The host comes back: it becomes rack0's spare again.
	h.ok(h.e.Recovered(1))
	h.cycle(3)
	h.wantPic(`
		rack0 |AAAA|....s|AAAA|AAAA|
		rack1 |BBBB|....|....|....s|
	`)
}

func TestRepairFromFreeInRequiredRack(t *testing.T) {
	h := newHarness(t, racks(2, 4, 4), blink.Config{})
	A := h.submit(0, h.rackGang(2, 10))
	h.submit(0, gang(4, 4, 1)) // B fills rack1... best fit puts it where it fits
	h.confirmAll(h.cycle(0))
	h.wantPic(`
		rack0 |AAAA|AAAA|....|....|
		rack1 |BBBB|BBBB|BBBB|BBBB|
	`)
	h.ok(h.e.HostFailed(0))
	r := oneRepair(t, h.cycle(1))
	if r.Job != A || r.Source != blink.FromFree || len(r.Victims) != 0 {
		t.Fatalf("repair %+v", r)
	}
	h.wantPic(`
		rack0 |xxxx|AAAA|AAAA|....|
		rack1 |BBBB|BBBB|BBBB|BBBB|
	`)
}

func TestRepairPreemptsInRack(t *testing.T) {
	h := newHarness(t, racks(2, 4, 4), blink.Config{})
	A := h.submit(0, h.rackGang(2, 10))
	c := h.rackGang(2, 1)
	c.Preemptible = true
	C := h.submit(0, c)
	h.confirmAll(h.cycle(0))
	h.wantPic(`
		rack0 |AAAA|AAAA|BBBB|BBBB|
		rack1 |....|....|....|....|
	`)
	// rack1 is free, but A requires one rack: the repair evicts B in rack0.
	h.ok(h.e.HostFailed(1))
	r := oneRepair(t, h.cycle(1))
	if r.Job != A || r.Source != blink.FromPreemption || !slices.Equal(r.Victims, []blink.JobID{C}) {
		t.Fatalf("repair %+v", r)
	}
	h.wantPic(`
		rack0 |AAAA|xxxx|AAAA|....|
		rack1 |....|....|....|....|
	`)
	// The victim left the State at once; Evicted requeues it.
	h.wantStatus(C, blink.Evicting)
	h.ok(h.e.Evicted(C))
	d := h.cycle(2)
	if got := bindIDs(d); !slices.Equal(got, []blink.JobID{C}) {
		t.Fatalf("bound %v", got)
	}
}

func TestRepairRequeuesWhenRackHasNoWay(t *testing.T) {
	h := newHarness(t, racks(2, 4, 4), blink.Config{})
	A := h.submit(0, h.rackGang(3, 10))
	h.submit(0, gang(1, 4, 20)) // B: not preemptible, placed first
	h.confirmAll(h.cycle(0))
	h.wantPic(`
		rack0 |BBBB|AAAA|AAAA|AAAA|
		rack1 |....|....|....|....|
	`)
	h.ok(h.e.HostFailed(2))
	d := h.cycle(1)
	r := oneRepair(t, d)
	if r.Job != A || !r.Requeued || r.Source != blink.Rescheduled {
		t.Fatalf("repair %+v", r)
	}
	// Requeued, then placed again in the same cycle, in the healthy rack.
	if got := bindIDs(d); !slices.Equal(got, []blink.JobID{A}) {
		t.Fatalf("bound %v", got)
	}
	h.wantPic(`
		rack0 |BBBB|....|xxxx|....|
		rack1 |AAAA|AAAA|AAAA|....|
	`)
}

func TestRepairSeveralFaultsAtOnce(t *testing.T) {
	h := newHarness(t, racks(2, 6, 4), blink.Config{Spares: []blink.SparePolicy{{Level: 1, Hosts: 2}}})
	A := h.submit(0, h.rackGang(4, 10))
	h.confirmAll(h.cycle(0))
	h.wantPic(`
		rack0 |AAAA|AAAA|AAAA|AAAA|....s|....s|
		rack1 |....|....|....|....|....s|....s|
	`)
	h.ok(h.e.HostFailed(1))
	h.ok(h.e.GPUFailed(topology.GPUID(3*4 + 2))) // host 3, GPU 2
	r := oneRepair(t, h.cycle(1))
	if r.Job != A || r.Source != blink.FromSpare || !slices.Equal(r.Ranks, []int32{1, 3}) {
		t.Fatalf("repair %+v", r)
	}
	h.wantPic(`
		rack0 |AAAA|xxxx|AAAA|..x.|AAAA|AAAA|
		rack1 |....|....|....|....|....s|....s|
	`)
}

func TestRepairGPUFault(t *testing.T) {
	h := newHarness(t, racks(1, 2, 4), blink.Config{})
	A := h.submit(0, gang(4, 1, 5)) // four 1-GPU pods on host 0
	h.confirmAll(h.cycle(0))
	h.ok(h.e.GPUFailed(1))
	r := oneRepair(t, h.cycle(1))
	if r.Job != A || r.Source != blink.FromFree || !slices.Equal(r.Ranks, []int32{1}) || r.Pods[1].Host != 1 {
		t.Fatalf("repair %+v", r)
	}
	h.wantPic(`
		rack0 |AxAA|A...|
	`)
	// Unconfirmed, the repair expires like a bind: the job is rescheduled.
	d := h.cycle(1 + 60)
	if len(d.Expired) != 1 || d.Expired[0].What != blink.BindExpired || d.Expired[0].Job != A {
		t.Fatalf("expired %+v", d.Expired)
	}
	if got := bindIDs(d); !slices.Equal(got, []blink.JobID{A}) {
		t.Fatalf("bound %v", got)
	}
}

func TestDomainFailedReschedules(t *testing.T) {
	h := newHarness(t, racks(2, 4, 4), blink.Config{})
	A := h.submit(0, h.rackGang(2, 10))
	B := h.submit(0, gang(1, 2, 5))
	h.confirmAll(h.cycle(0))
	h.wantPic(`
		rack0 |AAAA|AAAA|BB..|....|
		rack1 |....|....|....|....|
	`)
	rack0, _ := h.tree.DomainByPath([]string{"rack0"})
	h.ok(h.e.DomainFailed(rack0))
	h.wantStatus(A, blink.Pending)
	d := h.cycle(1)
	var requeued []blink.JobID
	for _, r := range d.Repairs {
		if r.Requeued {
			requeued = append(requeued, r.Job)
		}
	}
	if !slices.Equal(requeued, []blink.JobID{A, B}) {
		t.Fatalf("requeued %v", requeued)
	}
	h.wantPic(`
		rack0 |xxxx|xxxx|xxxx|xxxx|
		rack1 |AAAA|AAAA|BB..|....|
	`)
}

func TestSparesFollowHealth(t *testing.T) {
	h := newHarness(t, racks(1, 4, 4), blink.Config{Spares: []blink.SparePolicy{{Level: 1, Hosts: 1}}})
	h.cycle(0)
	h.wantPic(`
		rack0 |....|....|....|....s|
	`)
	// Non-preemptible work never lands on the spare: a job needing all four
	// hosts never fits (from aggregates: 12 GPUs outside the spare).
	A := h.submit(0, gang(4, 4, 1))
	d := h.cycle(1)
	r, _ := reasonOf(d, A)
	if r.Code != blink.NeverFits || r.Place.Have != 12 {
		t.Fatalf("A: %+v", d)
	}
	if got := r.Format(h.tree); got != "never fits: the cluster has 12 healthy GPUs it may use, the job needs 16" {
		t.Fatalf("reason %q", got)
	}
	h.ok(h.e.Cancel(A))
	h.ok(h.e.Drain(3))
	h.cycle(2)
	h.wantPic(`
		rack0 |....|....|....s|~~~~|
	`)
	h.ok(h.e.GPUFailed(2*4 + 1))
	h.cycle(3)
	h.wantPic(`
		rack0 |....|....s|.x..|~~~~|
	`)
	h.ok(h.e.Recovered(3))
	h.ok(h.e.Recovered(2))
	h.cycle(4)
	h.wantPic(`
		rack0 |....|....s|....|....|
	`)
}

// TestSparePools: a rack policy and an SU pool add up.
func TestSparePools(t *testing.T) {
	sh := topology.Shape{Levels: []string{"su", "rack"}, FanOut: []int{1, 3, 3}, GPUsPerHost: 2}
	h := newHarness(t, sh, blink.Config{Spares: []blink.SparePolicy{{Level: 1, Hosts: 4}, {Level: 2, Hosts: 1}}})
	h.cycle(0)
	h.wantPic(`
		su0/rack0 |..|..|..s|
		su0/rack1 |..|..|..s|
		su0/rack2 |..|..s|..s|
	`)
}

// TestSpareGPULessHost: an idle host without GPUs is a spare candidate the
// aggregates do not show; after a drain and recovery it is a spare again
// (Check verifies no short rack keeps a candidate).
func TestSpareGPULessHost(t *testing.T) {
	h := newHarnessHosts(t, []string{"rack"}, []topology.HostSpec{
		{Name: "g0", Path: []string{"r0"}, GPUs: 4, CPUMilli: 32000, MemoryMiB: 65536},
		{Name: "g1", Path: []string{"r0"}, GPUs: 4, CPUMilli: 32000, MemoryMiB: 65536},
		{Name: "c0", Path: []string{"r0"}, GPUs: 0, CPUMilli: 32000, MemoryMiB: 65536}},
		blink.Config{Spares: []blink.SparePolicy{{Level: 1, Hosts: 1}}})
	e, tree := h.e, h.tree
	c0, _ := tree.HostByName("c0")
	if !e.IsSpare(c0) {
		t.Fatal("the idle GPU-less host is not the spare")
	}
	A := h.submit(0, gang(2, 4, 5)) // fills g0 and g1 with non-preemptible work
	h.confirmAll(h.cycle(1))
	h.ok(e.Drain(c0))
	h.cycle(2)
	if e.IsSpare(c0) {
		t.Fatal("a draining host stayed a spare")
	}
	h.ok(e.Recovered(c0))
	h.cycle(3)
	if !e.IsSpare(c0) {
		t.Fatal("the recovered GPU-less host is not a spare again")
	}
	h.wantStatus(A, blink.Running)
}

// TestRepairPreemptsCandidatesOutOfIDOrder: the candidates of a repair by
// preemption are listed in host order; placement takes them sorted by job id.
// Here the filler on the first host has the larger id. (The random loops'
// checkRequeue found repairs given up where evicting filler made room.)
func TestRepairPreemptsCandidatesOutOfIDOrder(t *testing.T) {
	h := newHarness(t, racks(1, 3, 4), blink.Config{})
	h.ok(h.e.Drain(0))
	h.ok(h.e.Drain(2))
	Y := h.submit(0, filler(1, 4, 1)) // host 1, the others drain
	h.confirmAll(h.cycle(0))
	h.ok(h.e.Recovered(0))
	X := h.submit(1, filler(1, 4, 1)) // host 0
	h.confirmAll(h.cycle(1))
	h.ok(h.e.Recovered(2))
	G := gang(1, 4, 10)
	G.Required = h.level("rack")
	g := h.submit(2, G) // host 2
	h.confirmAll(h.cycle(2))
	h.wantPic(`
		rack0 |BBBB|AAAA|CCCC|
	`)
	if X.Slot() < Y.Slot() {
		t.Fatalf("X %v, Y %v: want the filler on host 0 to have the larger id", X, Y)
	}
	h.ok(h.e.GPUFailed(8)) // G's pod on host 2
	r := oneRepair(t, h.cycle(3))
	if r.Job != g || r.Requeued || r.Source != blink.FromPreemption || len(r.Victims) != 1 {
		t.Fatalf("repair %+v, want G repaired in place of one filler", r)
	}
	h.check()
}
