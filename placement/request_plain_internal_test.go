package placement

import (
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
)

// TestValidatePlain compares Validate's quick acceptance (plain) with its
// every check (validate) on random requests, each field valid three times in
// four and otherwise at or past a check's edge: plain may only accept what
// validate accepts, and it must accept the plain requests validate accepts
// (or Validate would stay slow).
func TestValidatePlain(t *testing.T) {
	seed := testkit.Seed(t, 8)
	steps := testkit.Steps(t, 20000)
	rng := rand.New(rand.NewPCG(seed, 0))
	tr, err := topology.BuildShape(topology.Shape{Levels: []string{"block", "rack"}, FanOut: []int{2, 2, 3}, GPUsPerHost: 8})
	if err != nil {
		t.Fatal(err)
	}
	hl := int32(tr.HostLevel())
	eligible := make([]uint64, (tr.NumHosts()+63)/64)
	rx := NewRestriction(tr)
	// pick returns one of good three times in four, else one of edge.
	pick := func(good, edge []int32) int32 {
		if rng.IntN(4) > 0 {
			return good[rng.IntN(len(good))]
		}
		return edge[rng.IntN(len(edge))]
	}
	levels, badLevels := []int32{-1, 0, 0, 1, 2, hl}, []int32{-2, hl + 1, 127, -128}
	var accepted, plainKind int
	for step := range steps {
		r := &Request{Job: topology.JobID(pick([]int32{0, 7, int32(topology.MaxJobID)}, []int32{-1, int32(topology.MaxJobID) + 1, -1 << 31})),
			Required: topology.Level(pick(levels, badLevels)), Preferred: topology.Level(pick(levels, badLevels)),
			Policy: Policy(pick([]int32{0, 1, 2}, []int32{3, 255}))}
		if rng.IntN(8) == 0 {
			r.Models = []int{int(pick([]int32{0, int32(tr.NumModels()) - 1}, []int32{-1, int32(tr.NumModels())}))}
		}
		if rng.IntN(8) == 0 { // a bitset of the tree's size, or too short
			r.Eligible = eligible[:rng.IntN(len(eligible)+1)]
		}
		if rng.IntN(8) == 0 { // with its own bitset, or without
			r.Restriction = rx
			if rng.IntN(2) == 0 {
				r.Eligible = rx.Eligible()
			}
		}
		for range pick([]int32{1, 1, 2, 3}, []int32{0}) {
			p := PodSet{Pods: pick([]int32{1, 2, topology.MaxJobPods}, []int32{0, -1, topology.MaxJobPods + 1, 1 << 30}),
				GPUs: pick([]int32{0, 1, 8, 64}, []int32{65, -1}), Milli: pick([]int32{0, 0, 1, 999}, []int32{1000, -1}),
				CPUMilli: pick([]int32{0, 100}, []int32{-1}), MemoryMiB: pick([]int32{0, 100}, []int32{-1})}
			if p.Milli > 0 && rng.IntN(4) > 0 {
				p.GPUs = 1
			}
			if rng.IntN(4) == 0 {
				p.SliceSize, p.SliceLevel = pick([]int32{1, 2}, []int32{0, -1}), topology.Level(pick(levels, badLevels))
			}
			r.Sets = append(r.Sets, p)
		}
		plain, err := r.plain(tr), r.validate(tr)
		if plain && err != nil {
			t.Fatalf("step %d: plain accepts %+v, validate says %v", step, r, err)
		}
		if !plain && err == nil && r.isPlainKind() {
			t.Fatalf("step %d: plain rejects %+v, which validate accepts", step, r)
		}
		if got := r.Validate(tr); (got == nil) != (err == nil) {
			t.Fatalf("step %d: Validate %v, validate %v", step, got, err)
		}
		if plain {
			accepted++
		}
		if r.isPlainKind() {
			plainKind++
		}
	}
	t.Logf("plain accepted %d of %d requests, %d of its kind", accepted, steps, plainKind)
	if accepted == 0 || accepted == plainKind {
		t.Fatal("the requests do not exercise both sides of plain")
	}
}

// isPlainKind reports whether r is of the kind plain is for (no models,
// eligible hosts, restriction or slice fields).
func (r *Request) isPlainKind() bool {
	if len(r.Models) != 0 || r.Eligible != nil || r.Restriction != nil {
		return false
	}
	for i := range r.Sets {
		if r.Sets[i].SliceSize != 0 || r.Sets[i].SliceLevel != 0 {
			return false
		}
	}
	return true
}

// TestJobInfoFields guards setJobInfo, which writes a reused topology.Job
// field by field: a field added to topology.Job must be written there too (or
// the last request's value would stay), and then listed here.
func TestJobInfoFields(t *testing.T) {
	testkit.RequireFields(t, topology.Job{}, "setJobInfo", "Priority", "Preemptible", "Movable", "Exclusive",
		"HasEnd", "End", "Required", "Preferred", "Sets")
}
