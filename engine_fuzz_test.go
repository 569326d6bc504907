package blink_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// FuzzEngine drives an engine with calls decoded from the fuzzer's bytes:
// specs with any field at or past its limits (sizes, fractions, slices,
// levels, models, elastic minimums, priorities, run times), reports for
// jobs, hosts, GPUs and domains that exist or do not, in states that match
// or do not, and a clock that may run backwards. Every call either succeeds
// or returns an error and changes nothing; Check, ReadyAgrees and
// CandsAgree hold after every call; a cycle's decisions are what the State
// holds, and a job it answers does not fit fits nowhere when it ends
// (checkNoFit), nor does an
// elastic job it binds one size larger (checkElastic), nor a job whose
// repair it gives up (checkRequeue); every job keeps its required domain,
// slices and models after every call; and a second
// engine given the same calls decides the same. The tree is small and
// mixed (hosts of 2, 4 and 8 GPUs of two models, CPU and memory limits).
//
// go test runs the seed corpus (a few hand-made streams and 64 random ones);
// to search further: go test -run '^$' -fuzz FuzzEngine -fuzztime 10m .
func FuzzEngine(f *testing.F) {
	f.Add([]byte{0, 0, 1, 2, 3, 4, 5, 6, 1, 1, 1, 2, 2})
	f.Add([]byte{1, 0, 9, 9, 9, 9, 1, 7, 0, 1, 3, 3, 3, 1, 1, 2, 0, 4, 0})
	f.Add([]byte{2, 8, 3, 0, 0, 0, 0, 0, 1, 10, 1, 1, 11, 1, 12, 2, 1})
	rng := rand.New(rand.NewPCG(7, 11))
	for range 64 {
		b := make([]byte, 64+rng.IntN(400))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a := runFuzzEngine(t, data)
		if b := runFuzzEngine(t, data); a != b {
			t.Fatalf("two engines given the same calls decided differently:\n%s\n%s", a, b)
		}
	})
}

// fuzzIn reads the fuzzer's bytes; past their end it reads zeros.
type fuzzIn struct{ b []byte }

func (r *fuzzIn) more() bool { return len(r.b) > 0 }

func (r *fuzzIn) n(k int) int {
	if len(r.b) == 0 {
		return 0
	}
	v := int(r.b[0])
	r.b = r.b[1:]
	return v % k
}

func pickOf[T any](r *fuzzIn, vals ...T) T { return vals[r.n(len(vals))] }

// fuzzTree: two SUs of two racks of three hosts, GPUs 4, 8 and 2 per host,
// models "A" and "B", CPU and memory limited on some hosts.
func fuzzTree(t testing.TB) *topology.Tree {
	var hosts []topology.HostSpec
	for i := range 12 {
		h := topology.HostSpec{Name: fmt.Sprintf("h%d", i), Path: []string{fmt.Sprintf("s%d", i/6), fmt.Sprintf("r%d", i/3)},
			GPUs: []int{4, 8, 2}[i%3], Model: []string{"A", "B"}[i/3%2],
			CPUMilli: topology.Unlimited, MemoryMiB: topology.Unlimited}
		if i%2 == 0 {
			h.CPUMilli, h.MemoryMiB = 16000, 65536
		}
		hosts = append(hosts, h)
	}
	tree, err := topology.BuildHosts([]string{"su", "rack"}, hosts)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// fuzzRun is one engine driven by one byte stream.
type fuzzRun struct {
	t    testing.TB
	in   *fuzzIn
	e    *blink.Engine
	tree *topology.Tree
	now  int64
	ids  []blink.JobID
	out  bytes.Buffer
	l    *loop // for verify
}

func runFuzzEngine(t *testing.T, data []byte) string {
	in := &fuzzIn{b: data}
	tree := fuzzTree(t)
	cfg := blink.Config{BindTimeout: 20, EvictTimeout: 30, MoveTimeout: 40, ReservationTimeout: 100,
		MaxMoves: 2, MaxPreemptAttempts: 2, MaxDefragAttempts: 1, MaxReservations: 2}
	switch in.n(4) {
	case 1:
		cfg.Spares = []blink.SparePolicy{{Level: 2, Hosts: 1}}
		cfg.DefaultRunTime = 50
	case 2:
		cfg.Spares = []blink.SparePolicy{{Level: 1, Hosts: 2}}
		cfg.MaxRepairCandidates = 3
	case 3:
		cfg.DefaultRunTime = math.MaxInt64 - 1
		cfg.MaxPlaceAttempts = 3
	}
	e, err := blink.New(topology.NewState(tree), cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &fuzzRun{t: t, in: in, e: e, tree: tree}
	r.l = &loop{t: t, h: &harness{t: t, e: e, tree: tree}, n: map[string]int{}}
	for step := 0; in.more() && step < 400; step++ {
		r.step(step)
		if err := e.Check(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if err := e.ReadyAgrees(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if err := e.CandsAgree(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		wantKeepsDomains(t, step, e.State())
		wantModels(t, step, e)
	}
	return r.out.String()
}

// step decodes and makes one call.
func (r *fuzzRun) step(step int) {
	in, e := r.in, r.e
	switch d := in.n(8); {
	case d < 5:
		r.now += int64(d)
	case d == 5:
		r.now -= 7 // the engine counts an earlier time as the latest it saw
	case d == 6:
		r.now = math.MaxInt64 - int64(in.n(4))
	}
	before := snapshot(r.t, e)
	var err error
	op := in.n(15)
	switch op {
	case 0, 1:
		var id blink.JobID
		id, err = e.Submit(r.now, r.spec())
		if err == nil {
			r.ids = append(r.ids, id)
		}
	case 2, 3:
		noms := snapNoms(e.State())
		pre := snapPre(e)
		d := e.Cycle(r.now)
		r.l.verify(step, d)
		r.l.checkNoFit(step, d, noms)
		r.l.checkElastic(step, d, noms)
		r.l.checkRequeue(step, d, pre)
		fmt.Fprintf(&r.out, "%d|%v|%v|%v|%v|%v|%v\n", d.Now, d.Binds, d.Repairs, d.Preemptions, d.Moves, d.Expired, d.Pending)
		return
	case 4:
		err = e.Bound(r.job())
	case 5:
		err = e.BindFailed(r.job())
	case 6:
		err = e.Finished(r.job())
	case 7:
		err = e.Evicted(r.job())
	case 8:
		err = e.Moved(r.job())
	case 9:
		err = e.Cancel(r.job())
	case 10:
		err = e.HostFailed(r.host())
	case 11:
		err = e.GPUFailed(topology.GPUID(in.n(r.tree.NumGPUs()+3) - 1))
	case 12:
		err = e.DomainFailed(topology.DomainID(in.n(r.tree.NumDomains()+2) - 1))
	case 13:
		err = e.Recovered(r.host())
	case 14:
		err = e.Drain(r.host())
	}
	fmt.Fprintf(&r.out, "op %d: %v\n", op, err)
	if err == nil {
		return
	}
	if !errors.Is(err, blink.ErrInvalid) && !errors.Is(err, blink.ErrUnknown) && !errors.Is(err, blink.ErrState) &&
		!errors.Is(err, topology.ErrInvalid) {
		r.t.Fatalf("step %d: op %d: error %v wraps none of the engine's kinds", step, op, err)
	}
	if after := snapshot(r.t, e); !bytes.Equal(before, after) {
		r.t.Fatalf("step %d: op %d was rejected (%v) but changed the engine", step, op, err)
	}
}

// job is a job id the engine gave out, or one it never did.
func (r *fuzzRun) job() blink.JobID {
	if k := r.in.n(len(r.ids) + 2); k < len(r.ids) {
		return r.ids[k]
	} else if k == len(r.ids) {
		return blink.JobID(1<<40 | 3)
	}
	return ^blink.JobID(0)
}

func (r *fuzzRun) host() topology.HostID {
	return topology.HostID(r.in.n(r.tree.NumHosts()+3) - 1)
}

// spec decodes a job spec, each field from a table of ordinary values and
// values at or past its limits.
func (r *fuzzRun) spec() blink.JobSpec {
	in := r.in
	var s blink.JobSpec
	for range in.n(4) {
		set := placement.PodSet{
			Pods:       pickOf[int32](in, 1, 1, 2, 3, 4, 6, 0, -1, 1<<30),
			GPUs:       pickOf[int32](in, 1, 1, 2, 4, 8, 0, 3, 65, -2),
			CPUMilli:   pickOf[int32](in, 0, 0, 1000, 8000, 16000, 20000, -1),
			MemoryMiB:  pickOf[int32](in, 0, 0, 4096, 65536, 70000, -1),
			SliceSize:  pickOf[int32](in, 0, 0, 0, 1, 2, 3, -1),
			SliceLevel: pickOf[topology.Level](in, 0, 1, 2, 3, topology.NoLevel, 9),
		}
		if in.n(4) == 0 {
			set.GPUs, set.Milli = 1, pickOf[int32](in, 250, 500, 750, 999, 1000, -5)
		}
		s.Sets = append(s.Sets, set)
	}
	if in.n(4) == 0 {
		s.MinPods = make([]int32, pickOf(in, len(s.Sets), len(s.Sets), len(s.Sets)+1, 0))
		for i := range s.MinPods {
			s.MinPods[i] = pickOf[int32](in, 1, 2, 0, -1, 7)
		}
	}
	s.Priority = pickOf[int32](in, 0, 1, 2, 3, math.MinInt32, math.MaxInt32)
	s.Preemptible, s.Movable, s.Exclusive = in.n(2) == 0, in.n(2) == 0, in.n(5) == 0
	s.Required = pickOf[topology.Level](in, 0, 0, 1, 2, 3, topology.NoLevel, 7)
	s.Preferred = pickOf[topology.Level](in, 0, 0, 1, 2, 3, topology.NoLevel, 7)
	switch in.n(6) {
	case 0:
		s.Models = []int{0}
	case 1:
		s.Models = []int{1, 0}
	case 2:
		s.Models = []int{5}
	}
	s.Policy = pickOf[placement.Policy](in, placement.BestFit, placement.BestFit, placement.FirstFit, placement.Spread, 9)
	s.RunTime = pickOf[int64](in, 0, 0, 5, 40, -1, math.MaxInt64)
	return s
}
