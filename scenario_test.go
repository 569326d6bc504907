package blink_test

import (
	"math"
	"slices"
	"testing"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Scenario tests of whole loops. Pictures: one line per rack, each host's
// GPUs between bars — a job's letter by its slot (A = slot 0), '.' free, '*'
// nominated, 'x' failed, '~' draining — and 's' after a spare host.

func TestLoopSubmitBindFinish(t *testing.T) {
	h := newHarness(t, racks(2, 4, 4), blink.Config{})
	rack := h.level("rack")
	a := gang(3, 4, 10)
	a.Required = rack
	A := h.submit(0, a)             // slot 0: a rack gang of 3 whole hosts
	B := h.submit(0, gang(1, 2, 5)) // slot 1: 2 GPUs
	C := h.submit(0, gang(6, 4, 1)) // slot 2: 6 whole hosts: does not fit after A
	d := h.cycle(1)
	if got := bindIDs(d); !slices.Equal(got, []blink.JobID{A, B}) {
		t.Fatalf("bound %v", got)
	}
	// C is the top blocked job: it reserves the free rack, and more hosts
	// whose jobs have no expected end.
	if r, ok := reasonOf(d, C); !ok || r.Code != blink.Reserved {
		t.Fatalf("C: %v %v", r, ok)
	}
	h.wantPic(`
		rack0 |AAAA|AAAA|AAAA|BB..|
		rack1 |****|****|****|****|
	`)
	h.wantStatus(A, blink.Binding)
	h.ok(h.e.Bound(A))
	h.ok(h.e.Bound(B))
	h.wantStatus(A, blink.Running)
	h.ok(h.e.Finished(A))
	if _, err := h.e.Status(A); err == nil {
		t.Fatal("a finished job is still known")
	}
	d = h.cycle(2)
	if got := bindIDs(d); !slices.Equal(got, []blink.JobID{C}) {
		t.Fatalf("bound %v", got)
	}
	h.wantPic(`
		rack0 |CCCC|CCCC|CCCC|BB..|
		rack1 |CCCC|CCCC|CCCC|....|
	`)
	// The finished job's slot 0 is reused by the next job, under a new id.
	D := h.submit(3, gang(1, 1, 1))
	if D.Slot() != A.Slot() || D == A {
		t.Fatalf("new job %v, finished %v", D, A)
	}
	if err := h.e.Finished(A); err == nil {
		t.Fatal("the old id of a reused slot was accepted")
	}
}

func TestLoopBindExpiresAndFails(t *testing.T) {
	h := newHarness(t, racks(1, 2, 4), blink.Config{BindTimeout: 10})
	A := h.submit(0, gang(1, 4, 1))
	d := h.cycle(0)
	if len(d.Binds) != 1 {
		t.Fatalf("binds %v", d.Binds)
	}
	// Not confirmed by time 9: still assumed, its GPUs not handed out again.
	B := h.submit(1, gang(2, 4, 1))
	d = h.cycle(9)
	if len(d.Binds) != 0 || len(d.Expired) != 0 {
		t.Fatalf("binds %v expired %v", d.Binds, d.Expired)
	}
	h.wantPic(`
		rack0 |AAAA|****|
	`)
	// At 10 the bind expires: A is pending again, behind nobody (B waits for
	// two hosts, A is older), and is bound again in the same cycle.
	d = h.cycle(10)
	if len(d.Expired) != 1 || d.Expired[0] != (blink.Expiry{Job: A, What: blink.BindExpired}) {
		t.Fatalf("expired %v", d.Expired)
	}
	if got := bindIDs(d); !slices.Equal(got, []blink.JobID{A}) {
		t.Fatalf("bound %v", got)
	}
	// BindFailed rolls back: B now fits and takes both hosts.
	h.ok(h.e.BindFailed(A))
	h.wantStatus(A, blink.Pending)
	d = h.cycle(11)
	if got := bindIDs(d); !slices.Equal(got, []blink.JobID{A}) {
		t.Fatalf("bound %v (A is older than B)", got)
	}
	_ = B
}

func TestLoopGangOfSets(t *testing.T) {
	h := newHarness(t, racks(2, 4, 4), blink.Config{})
	rack := h.level("rack")
	spec := blink.JobSpec{Sets: []placement.PodSet{
		{Pods: 1, GPUs: 1},  // a launcher
		{Pods: 3, GPUs: 4}}, // workers
		Required: rack, Priority: 5}
	h.submit(0, gang(2, 4, 9)) // A takes two hosts of rack0
	J := h.submit(0, spec)
	d := h.cycle(0)
	if len(d.Binds) != 2 || d.Binds[1].Job != J || !slices.Equal(d.Binds[1].Sizes, []int32{1, 3}) {
		t.Fatalf("binds %+v", d.Binds)
	}
	// Rank 0 is the launcher, ranks 1-3 the workers, all in one rack.
	h.wantPic(`
		rack0 |AAAA|AAAA|....|....|
		rack1 |BBBB|BBBB|BBBB|B...|
	`)
}

func TestLoopElastic(t *testing.T) {
	h := newHarness(t, racks(2, 4, 4), blink.Config{})
	h.submit(0, gang(3, 4, 9)) // A: 3 hosts
	el := gang(8, 4, 5)
	el.MinPods = []int32{2}
	E := h.submit(0, el) // elastic: 2…8 whole hosts; 5 are free
	d := h.cycle(0)
	if len(d.Binds) != 2 || d.Binds[1].Job != E || d.Binds[1].Sizes[0] != 5 {
		t.Fatalf("binds %+v", d.Binds)
	}
	h.wantPic(`
		rack0 |AAAA|AAAA|AAAA|BBBB|
		rack1 |BBBB|BBBB|BBBB|BBBB|
	`)
	// Below its minimum it waits.
	el.MinPods = []int32{1}
	F := h.submit(1, el)
	d = h.cycle(1)
	if r, ok := reasonOf(d, F); !ok || r.Code != blink.Reserved {
		t.Fatalf("F: %v", r)
	}
}

func TestLoopPriorityOrderAndMemo(t *testing.T) {
	h := newHarness(t, racks(1, 4, 4), blink.Config{MaxReservations: -1})
	low := h.submit(0, gang(1, 4, 1))
	high := h.submit(1, gang(4, 4, 9))
	d := h.cycle(1)
	// The high job goes first although submitted later: it takes the rack.
	if got := bindIDs(d); !slices.Equal(got, []blink.JobID{high}) {
		t.Fatalf("bound %v", got)
	}
	// Same-shape jobs after the first failure share its reason.
	var same []blink.JobID
	for i := range 5 {
		same = append(same, h.submit(2+int64(i), gang(2, 4, 3)))
	}
	d = h.cycle(10)
	first, _ := reasonOf(d, same[0])
	for _, id := range same {
		if r, _ := reasonOf(d, id); r != first || r.Code != blink.NoFit {
			t.Fatalf("job %v: %v, first %v", id, r, first)
		}
	}
	if r, _ := reasonOf(d, low); r.Code != blink.NoFit {
		t.Fatalf("low: %v", r)
	}
	if got := first.Format(h.tree); got != "no fit: the cluster has 0 free GPUs of acceptable models, the gang needs 8" {
		t.Fatalf("reason %q", got)
	}
}

func TestLoopNeverFits(t *testing.T) {
	h := newHarness(t, racks(2, 2, 4), blink.Config{})
	rack := h.level("rack")
	big := gang(3, 4, 1)
	big.Required = rack
	J := h.submit(0, big)
	d := h.cycle(0)
	r, _ := reasonOf(d, J)
	if r.Code != blink.NeverFits {
		t.Fatalf("reason %v", r)
	}
	if got := r.Format(h.tree); got != "never fits: required rack: the largest rack has 8 healthy GPUs it may use, the job needs 12" {
		t.Fatalf("reason %q", got)
	}
	if h.e.State().NumNominations() != 0 {
		t.Fatal("a job that never fits got a reservation")
	}
}

// TestLoopNeverFitsGangHost: a launcher and workers required on one host
// whose fractions pack into no host, even an empty one, never fit; a
// smaller such gang binds.
func TestLoopNeverFitsGangHost(t *testing.T) {
	h := newHarness(t, racks(2, 2, 4), blink.Config{})
	host := h.tree.HostLevel()
	spec := func(workers int32) blink.JobSpec {
		return blink.JobSpec{Required: host, Preferred: topology.NoLevel, Sets: []placement.PodSet{
			{Pods: 1, GPUs: 1, Milli: 600}, {Pods: workers, GPUs: 1, Milli: 600}}}
	}
	J := h.submit(0, spec(4)) // five pods of 600 milli: five GPUs
	K := h.submit(0, spec(3))
	d := h.cycle(0)
	r, _ := reasonOf(d, J)
	if r.Code != blink.NeverFits {
		t.Fatalf("reason %v", r)
	}
	if got := r.Format(h.tree); got != "never fits: the gang's pods together need a host of 5 GPUs or more, the largest acceptable host has 4" {
		t.Fatalf("reason %q", got)
	}
	if ids := bindIDs(d); len(ids) != 1 || ids[0] != K {
		t.Fatalf("binds %v, want %v", ids, K)
	}
}

// TestLoopNeverFitsCPU: a pod asking for more CPU than any host has, or
// more memory, never fits (the State stays as it was, no reservation); a
// launcher and worker on one host whose CPU together exceed a host's never
// fit either, and a job that fits beside them binds.
func TestLoopNeverFitsCPU(t *testing.T) {
	sh := racks(2, 2, 4)
	sh.CPUMilli, sh.MemoryMiB = 64000, 262144
	h := newHarness(t, sh, blink.Config{})
	one := func(cpu, mem int32) blink.JobSpec {
		return blink.JobSpec{Required: topology.NoLevel, Preferred: topology.NoLevel,
			Sets: []placement.PodSet{{Pods: 1, GPUs: 1, CPUMilli: cpu, MemoryMiB: mem}}}
	}
	cpu := h.submit(0, one(1000000, 0))
	mem := h.submit(0, one(1000, 300000))
	pair := h.submit(0, blink.JobSpec{Required: h.tree.HostLevel(), Preferred: topology.NoLevel,
		Sets: []placement.PodSet{{Pods: 1, CPUMilli: 4000}, {Pods: 2, GPUs: 1, CPUMilli: 32000}}})
	fits := h.submit(0, one(64000, 262144))
	d := h.cycle(0)
	for _, c := range []struct {
		id   blink.JobID
		want string
	}{
		{cpu, "never fits: pod set 0: a pod needs 1000000 milli-cores of CPU, the most an acceptable host with GPUs enough has is 64000"},
		{mem, "never fits: pod set 0: a pod needs 300000 MiB of memory, the most an acceptable host with GPUs and CPU enough has is 262144"},
		{pair, "never fits: the pod sets together need, on one host, 68000 milli-cores of CPU, the most an acceptable host with GPUs enough has is 64000"},
	} {
		r, _ := reasonOf(d, c.id)
		if r.Code != blink.NeverFits || r.Format(h.tree) != c.want {
			t.Errorf("job %v: %q, want %q", c.id, r.Format(h.tree), c.want)
		}
	}
	if ids := bindIDs(d); len(ids) != 1 || ids[0] != fits {
		t.Fatalf("binds %v, want %v", ids, fits)
	}
	if h.e.State().NumNominations() != 0 {
		t.Fatal("a job that never fits got a reservation")
	}
}

// TestHugeTimes: a run time or a timeout as long as an int64 holds means
// never — it does not wrap around to a time in the past: a job that runs
// "forever" stays out of a reservation, a reservation and a bind with such
// timeouts do not expire.
func TestHugeTimes(t *testing.T) {
	h := newHarness(t, racks(2, 4, 4), blink.Config{BindTimeout: math.MaxInt64, ReservationTimeout: math.MaxInt64})
	rack := h.level("rack")
	short := gang(3, 4, 5)
	short.RunTime = 100 // A: rack0, ends at 100
	short.Required = rack
	long := gang(4, 4, 5)
	long.RunTime = 500 // B: all of rack1, ends at 500
	long.Required = rack
	h.submit(5, short)
	h.submit(5, long)
	h.confirmAll(h.cycle(5))
	big := gang(4, 4, 9)
	big.Required = rack
	C := h.submit(6, big)
	huge := gang(1, 4, 1)
	huge.RunTime = math.MaxInt64
	bf := h.submit(6, huge)
	d := h.cycle(6)
	if r, _ := reasonOf(d, C); r.Code != blink.Reserved {
		t.Fatalf("C: %v", r)
	}
	if r, _ := reasonOf(d, bf); len(d.Binds) != 0 || r.Code == blink.Reserved {
		t.Fatalf("the job that never ends: bound %v, reason %v", bindIDs(d), r)
	}
	h.wantPic(`
		rack0 |AAAA|AAAA|AAAA|****|
		rack1 |BBBB|BBBB|BBBB|BBBB|
	`)
	if n, ok := h.e.State().NominationOf(C.Slot()); !ok || n.Expiry != math.MaxInt64 {
		t.Fatalf("C's reservation: %+v", n)
	}

	// A bind made at time 7 with a timeout of MaxInt64 does not expire at 8.
	h2 := newHarness(t, racks(1, 2, 4), blink.Config{BindTimeout: math.MaxInt64})
	h2.submit(7, gang(1, 4, 1))
	if d := h2.cycle(7); len(d.Binds) != 1 {
		t.Fatalf("binds %+v", d.Binds)
	}
	if d := h2.cycle(8); len(d.Expired) != 0 {
		t.Fatalf("expired %+v", d.Expired)
	}
}

// TestReservationBackfill: the top blocked job reserves the rack whose jobs
// end first; a lower job that would run past the reservation's ready time
// must stay out of it, one that ends before may use it.
func TestReservationBackfill(t *testing.T) {
	h := newHarness(t, racks(2, 4, 4), blink.Config{})
	rack := h.level("rack")
	short := gang(3, 4, 5)
	short.RunTime = 100 // A: rack0, ends at 100
	short.Required = rack
	long := gang(3, 4, 5)
	long.RunTime = 500 // B: rack1, ends at 500
	long.Required = rack
	A := h.submit(0, short)
	B := h.submit(0, long)
	d := h.cycle(0)
	h.confirmAll(d)
	h.wantPic(`
		rack0 |AAAA|AAAA|AAAA|....|
		rack1 |BBBB|BBBB|BBBB|....|
	`)
	big := gang(4, 4, 9) // a whole rack
	big.Required = rack
	C := h.submit(1, big)
	bf1 := h.submit(1, gang(1, 4, 1)) // no run time: must not touch the reservation
	quick := gang(1, 4, 1)
	quick.RunTime = 50 // ends at 51 < 100: may backfill inside it
	bf2 := h.submit(1, quick)
	d = h.cycle(1)
	if r, _ := reasonOf(d, C); r.Code != blink.Reserved {
		t.Fatalf("C: %v", r)
	}
	// rack0 is reserved for C (its job ends first); bf1 goes to rack1, bf2
	// backfills inside the reservation.
	if got := bindIDs(d); !slices.Equal(got, []blink.JobID{bf1, bf2}) {
		t.Fatalf("bound %v", got)
	}
	h.wantPic(`
		rack0 |AAAA|AAAA|AAAA|EEEE|
		rack1 |BBBB|BBBB|BBBB|DDDD|
	`)
	if n, ok := h.e.State().NominationOf(C.Slot()); !ok || n.Ready != 100 || len(n.GPUs) != 16 {
		t.Fatalf("nomination %+v", n)
	}
	h.confirmAll(d)
	// Sticky: the next cycles keep it; when A and the backfill end, C runs.
	d = h.cycle(20)
	if r, _ := reasonOf(d, C); r.Code != blink.Reserved {
		t.Fatalf("C: %v", r)
	}
	h.ok(h.e.Finished(A))
	d = h.cycle(100)
	if r, _ := reasonOf(d, C); r.Code != blink.Reserved {
		t.Fatalf("C: %v (the backfill still holds a host)", r)
	}
	h.ok(h.e.Finished(bf2))
	d = h.cycle(101)
	if got := bindIDs(d); !slices.Equal(got, []blink.JobID{C}) {
		t.Fatalf("bound %v", got)
	}
	h.wantPic(`
		rack0 |CCCC|CCCC|CCCC|CCCC|
		rack1 |BBBB|BBBB|BBBB|DDDD|
	`)
	if h.e.State().NumNominations() != 0 {
		t.Fatal("the reservation outlived its job's bind")
	}
	_ = B
}

// TestReservationYields: a reservation goes to the top blocked job; when a
// higher job blocks, it takes the reservation over.
func TestReservationYields(t *testing.T) {
	h := newHarness(t, racks(2, 2, 4), blink.Config{})
	h.submit(0, gang(1, 4, 1)) // A
	h.submit(0, gang(2, 4, 1)) // B
	h.cycle(0)
	low := h.submit(1, gang(4, 4, 3))
	h.cycle(1)
	if _, ok := h.e.State().NominationOf(low.Slot()); !ok {
		t.Fatal("the top blocked job has no reservation")
	}
	high := h.submit(2, gang(3, 4, 7))
	d := h.cycle(2)
	if r, _ := reasonOf(d, high); r.Code != blink.Reserved {
		t.Fatalf("high: %v", r)
	}
	if _, ok := h.e.State().NominationOf(low.Slot()); ok {
		t.Fatal("the lower job kept its reservation")
	}
	if r, _ := reasonOf(d, low); r.Code != blink.NoFit {
		t.Fatalf("low: %v", r)
	}
}

// TestNominationExpires: a reservation that is never used expires.
func TestNominationExpires(t *testing.T) {
	h := newHarness(t, racks(1, 2, 4), blink.Config{ReservationTimeout: 50})
	h.submit(0, gang(1, 4, 1))
	h.cycle(0)
	J := h.submit(0, gang(2, 4, 5))
	h.cycle(1)
	n, ok := h.e.State().NominationOf(J.Slot())
	if !ok || n.Expiry != 51 {
		t.Fatalf("nomination %+v %v", n, ok)
	}
	h.cycle(50)
	if _, ok := h.e.State().NominationOf(J.Slot()); !ok {
		t.Fatal("expired early")
	}
	h.cycle(51) // expires, and is made again at once (J is still the top blocked job)
	if n2, ok := h.e.State().NominationOf(J.Slot()); !ok || n2.Expiry != 101 {
		t.Fatalf("nomination %+v %v", n2, ok)
	}
	h.ok(h.e.Cancel(J))
	if h.e.State().NumNominations() != 0 {
		t.Fatal("a cancelled job kept its nomination")
	}
}

var _ = topology.NoLevel

// TestMemoKeepsAdmission: a job that fails outside a reservation must not
// answer, through the cycle's memo of failures, for a later job of the same
// shape that the reservation admits (it ends before the reservation's ready
// time). The engine asks for a job's admission mask only when the memo may
// hold its shape or the job failed; this checks the failure is kept under
// the failed job's own mask.
func TestMemoKeepsAdmission(t *testing.T) {
	h := newHarness(t, racks(2, 4, 4), blink.Config{})
	rack := h.level("rack")
	short := gang(3, 4, 5)
	short.RunTime, short.Required = 100, rack // rack0, ends at 100
	long := gang(3, 4, 5)
	long.RunTime, long.Required = 500, rack // rack1, ends at 500
	h.submit(0, short)
	h.submit(0, long)
	h.confirmAll(h.cycle(0))
	big := gang(4, 4, 9) // a whole rack: reserves rack0
	big.Required = rack
	C := h.submit(1, big)
	bf := h.submit(1, gang(1, 4, 1)) // takes rack1's free host
	X := h.submit(1, gang(1, 4, 1))  // no run time: no room outside the reservation
	X2 := h.submit(1, gang(1, 4, 1)) // the same: answered from the memo
	quick := gang(1, 4, 1)
	quick.RunTime = 50 // ends at 51 < 100: admitted into the reservation
	Q := h.submit(1, quick)
	d := h.cycle(1)
	if r, _ := reasonOf(d, C); r.Code != blink.Reserved {
		t.Fatalf("C: %v", r)
	}
	for _, id := range []blink.JobID{X, X2} {
		if r, _ := reasonOf(d, id); r.Code != blink.NoFit {
			t.Fatalf("job %v: %v, want NoFit", id, r)
		}
	}
	if got := bindIDs(d); !slices.Equal(got, []blink.JobID{bf, Q}) {
		t.Fatalf("bound %v, want %v", got, []blink.JobID{bf, Q})
	}
	h.wantPic(`
		rack0 |AAAA|AAAA|AAAA|GGGG|
		rack1 |BBBB|BBBB|BBBB|DDDD|
	`)
}
