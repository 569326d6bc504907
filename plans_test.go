package blink_test

import (
	"slices"
	"testing"

	"github.com/blinksched/blink"
)

// TestPreemption: a high-priority job that does not fit evicts the
// cheapest lower-priority preemptible work (package preempt), holds a
// nomination of the GPUs while the victims terminate — sticky: later cycles
// keep it — and is placed on them once they are gone.
func TestPreemption(t *testing.T) {
	h := newHarness(t, racks(1, 4, 4), blink.Config{MaxReservations: -1, MaxDefragAttempts: -1})
	A := h.submit(0, gang(2, 4, 50))  // not preemptible
	B := h.submit(0, filler(1, 4, 1)) // preemptible, priority 1
	C := h.submit(0, filler(1, 4, 5)) // preemptible, priority 5
	h.confirmAll(h.cycle(0))
	h.wantPic(`
		rack0 |AAAA|AAAA|CCCC|BBBB|
	`)
	D := h.submit(1, gang(1, 4, 9)) // fits only by evicting B or C: B is cheaper
	d := h.cycle(1)
	if len(d.Preemptions) != 1 || d.Preemptions[0].Job != D || !slices.Equal(d.Preemptions[0].Victims, []blink.JobID{B}) {
		t.Fatalf("preemptions %+v", d.Preemptions)
	}
	h.wantStatus(B, blink.Evicting)
	// The victim still runs on its GPUs, now nominated for D.
	h.wantPic(`
		rack0 |AAAA|AAAA|CCCC|BBBB|
	`)
	if n, ok := h.e.State().NominationOf(D.Slot()); !ok || len(n.GPUs) != 4 {
		t.Fatalf("nomination %+v", n)
	}
	// Sticky: while B terminates, D waits; no second plan, no other victim.
	d = h.cycle(2)
	if len(d.Preemptions) != 0 {
		t.Fatalf("re-planned: %+v", d.Preemptions)
	}
	if r, _ := reasonOf(d, D); r.Code != blink.Preempting {
		t.Fatalf("D: %v", r)
	}
	// A lower job cannot take the nominated GPUs once B is gone.
	E := h.submit(3, gang(1, 4, 2))
	h.ok(h.e.Evicted(B))
	d = h.cycle(4)
	if got := bindIDs(d); !slices.Equal(got, []blink.JobID{D}) {
		t.Fatalf("bound %v", got)
	}
	h.wantPic(`
		rack0 |AAAA|AAAA|CCCC|DDDD|
	`)
	if r, _ := reasonOf(d, E); r.Code == 0 {
		t.Fatalf("E: %v", d)
	}
	if r, _ := reasonOf(d, B); r.Code == 0 {
		t.Fatalf("the evicted job is not pending again: %+v", d.Pending)
	}
	_ = A
	_ = C
}

// TestPreemptionExpires: a victim that is never evicted counts as running
// again after EvictTimeout; the preemptor's nomination expires after
// NominationTimeout and it may plan again.
func TestPreemptionExpires(t *testing.T) {
	h := newHarness(t, racks(1, 2, 4), blink.Config{MaxReservations: -1, MaxDefragAttempts: -1, EvictTimeout: 10, NominationTimeout: 20})
	B := h.submit(0, filler(2, 4, 1))
	h.confirmAll(h.cycle(0))
	D := h.submit(1, gang(1, 4, 9))
	d := h.cycle(1)
	if len(d.Preemptions) != 1 {
		t.Fatalf("preemptions %+v", d.Preemptions)
	}
	d = h.cycle(11)
	if len(d.Expired) != 1 || d.Expired[0] != (blink.Expiry{Job: B, What: blink.EvictionExpired}) {
		t.Fatalf("expired %+v", d.Expired)
	}
	h.wantStatus(B, blink.Running)
	d = h.cycle(21) // the nomination expired: D plans again
	if len(d.Preemptions) != 1 || d.Preemptions[0].Job != D {
		t.Fatalf("preemptions %+v", d.Preemptions)
	}
}

// TestHigherJobTakesOverNomination: a job of higher priority that needs the
// GPUs nominated for a lower preemptor takes them over.
func TestPreemptionDisplacesLowerNomination(t *testing.T) {
	h := newHarness(t, racks(1, 2, 4), blink.Config{MaxReservations: -1, MaxDefragAttempts: -1})
	h.submit(0, filler(2, 4, 1))
	h.confirmAll(h.cycle(0))
	low := h.submit(1, gang(2, 4, 5))
	d := h.cycle(1)
	if len(d.Preemptions) != 1 || d.Preemptions[0].Job != low {
		t.Fatalf("preemptions %+v", d.Preemptions)
	}
	high := h.submit(2, blink.JobSpec{Sets: gang(2, 4, 9).Sets, Priority: 9})
	h.cycle(2)
	// The victim is already leaving: high waits for the same GPUs or takes
	// the nomination over; either way no GPU is nominated twice (Check).
	_, lowNom := h.e.State().NominationOf(low.Slot())
	_, highNom := h.e.State().NominationOf(high.Slot())
	if lowNom && highNom {
		t.Fatal("two nominations of the same GPUs")
	}
}

// TestDefragMove: a rack gang blocked by one movable job gets a move
// (package defrag) instead of an eviction, waits for it, then runs.
func TestDefragMove(t *testing.T) {
	h := newHarness(t, racks(2, 4, 4), blink.Config{MaxReservations: -1, MaxPreemptAttempts: -1})
	rackGang := func(pods int32, prio int32) blink.JobSpec {
		s := gang(pods, 4, prio)
		s.Required = h.level("rack")
		return s
	}
	h.submit(0, rackGang(3, 50))     // A: rack0, hosts 0-2
	T := h.submit(0, gang(1, 4, 50)) // B: rack0, host 3, for now
	h.confirmAll(h.cycle(0))
	m := filler(1, 1, 1)
	m.Movable = true
	M := h.submit(1, m) // C: rack0 is full, so rack1
	h.confirmAll(h.cycle(1))
	h.ok(h.e.Finished(T))
	h.wantPic(`
		rack0 |AAAA|AAAA|AAAA|....|
		rack1 |C...|....|....|....|
	`)
	G := h.submit(2, rackGang(4, 30)) // a whole rack: only by moving C
	d := h.cycle(2)
	if len(d.Moves) != 1 || d.Moves[0].Job != M || d.Moves[0].For != G {
		t.Fatalf("moves %+v pending %+v", d.Moves, d.Pending)
	}
	if r, _ := reasonOf(d, G); r.Code != blink.WaitingMoves {
		t.Fatalf("G: %v", r)
	}
	h.wantStatus(M, blink.Moving)
	// The State has C at its new place already; rack1 is nominated for G.
	h.wantPic(`
		rack0 |AAAA|AAAA|AAAA|C...|
		rack1 |****|****|****|****|
	`)
	h.ok(h.e.Moved(M))
	d = h.cycle(3)
	if got := bindIDs(d); !slices.Equal(got, []blink.JobID{G}) {
		t.Fatalf("bound %v", got)
	}
	h.wantPic(`
		rack0 |AAAA|AAAA|AAAA|C...|
		rack1 |BBBB|BBBB|BBBB|BBBB|
	`)
}

// TestDefragMoveExpires: an unconfirmed move is rolled back.
func TestDefragMoveExpires(t *testing.T) {
	h := newHarness(t, racks(2, 4, 4), blink.Config{MaxReservations: -1, MaxPreemptAttempts: -1, MoveTimeout: 10})
	rackGang := func(pods int32, prio int32) blink.JobSpec {
		s := gang(pods, 4, prio)
		s.Required = h.level("rack")
		return s
	}
	h.submit(0, rackGang(3, 50))
	T := h.submit(0, gang(1, 4, 50))
	h.confirmAll(h.cycle(0))
	m := filler(1, 1, 1)
	m.Movable = true
	M := h.submit(1, m)
	h.confirmAll(h.cycle(1))
	h.ok(h.e.Finished(T))
	G := h.submit(2, rackGang(4, 30))
	if d := h.cycle(2); len(d.Moves) != 1 {
		t.Fatalf("moves %+v", d.Moves)
	}
	d := h.cycle(12)
	if len(d.Expired) != 1 || d.Expired[0] != (blink.Expiry{Job: M, What: blink.MoveExpired}) {
		t.Fatalf("expired %+v", d.Expired)
	}
	// Rolled back (C is on rack1 again, G's nomination dropped), then the
	// same cycle plans the move anew for G, still blocked.
	if len(d.Moves) != 1 || d.Moves[0].For != G {
		t.Fatalf("moves %+v", d.Moves)
	}
	h.ok(h.e.Moved(M))
	if got := bindIDs(h.cycle(13)); !slices.Equal(got, []blink.JobID{G}) {
		t.Fatalf("bound %v", got)
	}
}

// TestRepairAfterMove: a job moved to another domain of its required level
// is repaired inside the domain it moved to. (FuzzLoop found the engine
// repairing a moved job inside the domain it had left, breaking its required
// level.)
func TestRepairAfterMove(t *testing.T) {
	h := newHarness(t, racks(2, 4, 4), blink.Config{MaxReservations: -1, MaxPreemptAttempts: -1})
	rack := h.level("rack")
	rackGang := gang(3, 4, 50)
	rackGang.Required = rack
	h.submit(0, rackGang)            // A: rack0, hosts 0-2
	T := h.submit(0, gang(1, 4, 50)) // B: rack0, host 3, for now
	h.confirmAll(h.cycle(0))
	m := filler(2, 1, 1)
	m.Movable, m.Required = true, rack
	M := h.submit(1, m) // C: rack0 is full, so rack1
	h.confirmAll(h.cycle(1))
	h.ok(h.e.Finished(T))
	whole := gang(4, 4, 30)
	whole.Required = rack
	h.submit(2, whole) // D: a whole rack, only by moving C
	if d := h.cycle(2); len(d.Moves) != 1 || d.Moves[0].Job != M {
		t.Fatalf("moves %+v", d.Moves)
	}
	h.ok(h.e.Moved(M))
	h.confirmAll(h.cycle(3))
	h.wantPic(`
		rack0 |AAAA|AAAA|AAAA|CC..|
		rack1 |BBBB|BBBB|BBBB|BBBB|
	`)
	h.ok(h.e.GPUFailed(12)) // C's rank 0 on host 3
	r := oneRepair(t, h.cycle(4))
	if r.Job != M || r.Requeued || r.Source != blink.FromFree || r.Pods[0].Host != 3 {
		t.Fatalf("repair %+v, want C's rank 0 on host 3, in rack0 where C runs now", r)
	}
	h.check()
}
