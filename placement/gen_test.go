package placement_test

import (
	"fmt"
	"github.com/blinksched/blink/internal/testkit"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Random inputs for the oracle and loop tests. Every randomized test logs its
// seed; BLINK_SEED replays it and BLINK_STEPS scales the number of steps.

// pick returns one of xs at random.
func pick[T any](rng *rand.Rand, xs ...T) T { return xs[rng.IntN(len(xs))] }

// genTree builds a random tree of 1–maxHosts hosts under one or two named
// levels, with 0–8 GPUs per host, mixed models and finite CPU and memory.
func genTree(rng *rand.Rand, maxHosts int) *topology.Tree {
	levels := []string{"rack"}
	if rng.IntN(2) == 0 {
		levels = []string{"block", "rack"}
	}
	blocks, racks := 1+rng.IntN(3), 1+rng.IntN(3)
	models := []string{"A", "B", "C"}[:1+rng.IntN(3)]
	n := 1 + rng.IntN(maxHosts)
	hosts := make([]topology.HostSpec, n)
	for i := range hosts {
		b, r := rng.IntN(blocks), rng.IntN(racks)
		path := []string{fmt.Sprintf("r%d", b*racks+r)}
		if len(levels) == 2 {
			path = []string{fmt.Sprintf("b%d", b), fmt.Sprintf("b%dr%d", b, r)}
		}
		hosts[i] = topology.HostSpec{
			Name: fmt.Sprintf("h%d", i), Path: path, GPUs: rng.IntN(9),
			Model:     models[rng.IntN(len(models))],
			CPUMilli:  pick[int64](rng, 0, 4000, 8000, 16000, 16000, 64000, 64000),
			MemoryMiB: pick[int64](rng, 0, 8192, 32768, 32768, 262144, 262144),
		}
	}
	t, err := topology.BuildHosts(levels, hosts)
	if err != nil {
		panic(err)
	}
	return t
}

// Job ids: load jobs count up from 0, nominees from nomineeBase, requests
// use requestJob or a nominee.
const (
	nomineeBase = 100
	requestJob  = 200
)

// genLoad applies random load to s through State.Apply: whole-GPU,
// fractional and CPU-only jobs (some exclusive), nominations, failed GPUs,
// draining and failed hosts. Operations the State refuses are skipped. It
// returns the nominees.
func genLoad(rng *rand.Rand, s *topology.State) []topology.JobID {
	t := s.Tree()
	H := t.NumHosts()
	for j := range rng.IntN(7) {
		info := topology.Job{Priority: int32(rng.IntN(20)), Preemptible: rng.IntN(2) == 0, Movable: true,
			Exclusive: rng.IntN(7) == 0}
		var pods []topology.Pod
		for range 1 + rng.IntN(3) {
			h := topology.HostID(rng.IntN(H))
			p := topology.Pod{Host: h, CPUMilli: pick[int32](rng, 0, 0, 1000, 4000), MemoryMiB: pick[int32](rng, 0, 0, 4096)}
			n := t.HostGPUCount(h)
			switch k := rng.IntN(4); {
			case k < 2 && n > 0: // whole GPUs, not necessarily contiguous
				unused := s.HostUnusedMask(h)
				for range 1 + rng.IntN(min(n, 4)) {
					if unused == 0 {
						break
					}
					i := randomBit(rng, unused)
					p.GPUs |= 1 << i
					unused &^= 1 << i
				}
			case k == 2 && n > 0: // a fraction of one GPU
				i := rng.IntN(n)
				lo, _ := t.HostGPUs(h)
				p.GPUs = 1 << uint(i)
				p.Milli = int32(1 + rng.IntN(max(1, min(999, s.GPUMilli(lo+topology.GPUID(i))))))
			}
			pods = append(pods, p)
		}
		_ = s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(topology.JobID(j), info, pods...)}})
	}
	var nominees []topology.JobID
	for k := range rng.IntN(3) {
		h := topology.HostID(rng.IntN(H))
		lo, hi := t.HostGPUs(h)
		if lo == hi {
			continue
		}
		var gpus []topology.GPUID
		for g := lo; g < hi; g++ {
			if rng.IntN(2) == 0 {
				gpus = append(gpus, g)
			}
		}
		if len(gpus) == 0 {
			gpus = append(gpus, lo+topology.GPUID(rng.IntN(int(hi-lo))))
		}
		id := topology.JobID(nomineeBase + k)
		n := topology.Nomination{Job: id, Priority: int32(rng.IntN(20)), Ready: int64(rng.IntN(100)), Expiry: 1000, GPUs: gpus}
		if s.Apply(topology.Delta{Ops: []topology.Op{topology.Nominate(n)}}) == nil {
			nominees = append(nominees, id)
		}
	}
	var ops []topology.Op
	for range rng.IntN(3) {
		if G := t.NumGPUs(); G > 0 && rng.IntN(2) == 0 {
			ops = append(ops, topology.SetGPUHealth(topology.GPUID(rng.IntN(G)), topology.Failed))
		}
	}
	for h := range H {
		switch rng.IntN(12) {
		case 0:
			ops = append(ops, topology.SetHostHealth(topology.HostID(h), topology.Draining))
		case 1:
			ops = append(ops, topology.SetHostHealth(topology.HostID(h), topology.Failed))
		}
	}
	for _, op := range ops {
		_ = s.Apply(topology.Delta{Ops: []topology.Op{op}})
	}
	return nominees
}

// randomBit returns the index of a random set bit of m (m ≠ 0).
func randomBit(rng *rand.Rand, m uint64) uint {
	k := rng.IntN(bits.OnesCount64(m))
	for ; k > 0; k-- {
		m &= m - 1
	}
	return uint(bits.TrailingZeros64(m))
}

// reqLimits bounds a random request.
type reqLimits struct {
	maxPods  int // over all pod sets
	maxGPUs  int // per whole-GPU pod
	maxSets  int
	policies bool // also FirstFit and Spread
	restrict bool // always eligible hosts, given as a Restriction
	// hostSlices: one set of whole GPUs and nothing else (exact capacities),
	// in slices of 2 or 3 pods a host, on any host: capacities rounded to
	// whole slices host by host.
	hostSlices bool
}

// genRequest returns a random well-formed request for tree t: 1–2 pod sets of
// whole, fractional or CPU-only pods with CPU and memory, optional required
// and preferred levels, slices, exclusivity, model filter, eligible hosts, and
// a job id and priority that may or may not pass the nominations.
func genRequest(rng *rand.Rand, t *topology.Tree, nominees []topology.JobID, lim reqLimits) *placement.Request {
	hl := t.HostLevel()
	r := &placement.Request{Job: requestJob, Priority: int32(rng.IntN(22)) - 1, Preemptible: rng.IntN(3) == 0}
	if len(nominees) > 0 && rng.IntN(3) == 0 {
		r.Job = pick(rng, nominees...)
	}
	if rng.IntN(5) == 0 {
		r.HasEnd, r.End = true, int64(rng.IntN(120))
	}
	switch rng.IntN(6) {
	case 0:
		r.Required = topology.NoLevel
	case 1, 2:
		r.Required = 0
	default:
		r.Required = topology.Level(1 + rng.IntN(int(hl)))
	}
	if rng.IntN(3) == 0 && max(r.Required, 0) < hl {
		lo := max(r.Required, 0) + 1
		r.Preferred = lo + topology.Level(rng.IntN(int(hl-lo+1)))
	}
	r.Exclusive = rng.IntN(7) == 0
	if rng.IntN(3) == 0 {
		for m := range t.NumModels() {
			if rng.IntN(2) == 0 {
				r.Models = append(r.Models, m)
			}
		}
	}
	if lim.restrict || rng.IntN(5) == 0 {
		w := make([]uint64, (t.NumHosts()+63)/64)
		for i := range w {
			w[i] = rng.Uint64()
		}
		r.Eligible = w
		if lim.restrict || rng.IntN(2) == 0 { // the same hosts, as a Restriction
			x := placement.NewRestriction(t)
			for h := range topology.HostID(t.NumHosts()) {
				if w[h/64]&(1<<(uint(h)%64)) == 0 {
					_ = x.Close(h)
				}
			}
			r.Eligible, r.Restriction = x.Eligible(), x
		}
	}
	if lim.policies {
		r.Policy = pick(rng, placement.BestFit, placement.BestFit, placement.FirstFit, placement.Spread)
	}
	nSets := 1
	if lim.maxSets > 1 && rng.IntN(3) == 0 {
		nSets = 2
	}
	left := lim.maxPods
	for k := range nSets {
		pods := 1 + rng.IntN(left-(nSets-1-k))
		if rng.IntN(3) == 0 {
			pods = 1
		}
		left -= pods
		r.Sets = append(r.Sets, genSet(rng, t, r.Required, int32(pods), lim.maxGPUs))
	}
	if lim.hostSlices {
		hostSliced(rng, t, r)
	}
	return r
}

// hostSliced makes r a request of one set of whole GPUs, in slices of 2 or
// 3 pods a host, with no CPU, memory, exclusivity, models or eligibility.
func hostSliced(rng *rand.Rand, t *topology.Tree, r *placement.Request) {
	size := int32(2 + rng.IntN(2))
	r.Sets = []placement.PodSet{{Pods: size * int32(1+rng.IntN(4)), GPUs: int32(1 + rng.IntN(2)),
		SliceSize: size, SliceLevel: t.HostLevel()}}
	r.Exclusive, r.Models, r.Eligible, r.Restriction = false, nil, nil, nil
	r.Required, r.Preferred = pick(rng, topology.NoLevel, 0), topology.NoLevel
}

func genSet(rng *rand.Rand, t *topology.Tree, required topology.Level, pods int32, maxGPUs int) placement.PodSet {
	hl := t.HostLevel()
	p := placement.PodSet{Pods: pods}
	switch rng.IntN(6) {
	case 0, 1, 2:
		p.GPUs = int32(1 + rng.IntN(maxGPUs))
		if rng.IntN(3) > 0 {
			p.GPUs = int32(1 + rng.IntN(min(maxGPUs, 2)))
		}
	case 3, 4:
		p.GPUs, p.Milli = 1, pick[int32](rng, 100, 250, 300, 400, 500, 500, 700, 999)
	}
	p.CPUMilli = pick[int32](rng, 0, 0, 1000, 2000, 4000, 8000)
	p.MemoryMiB = pick[int32](rng, 0, 0, 1024, 4096, 16384)
	if p.GPUs == 0 && p.CPUMilli == 0 && p.MemoryMiB == 0 {
		p.CPUMilli = 1000 // a CPU-only pod that asks for nothing fits anywhere, without bound
	}
	if pods > 1 && rng.IntN(3) == 0 {
		var divs []int32
		for s := int32(1); s <= pods; s++ {
			if pods%s == 0 {
				divs = append(divs, s)
			}
		}
		p.SliceSize = pick(rng, divs...)
		lo := max(required, 1)
		p.SliceLevel = lo + topology.Level(rng.IntN(int(hl-lo+1)))
	}
	return p
}

// describe renders a State and a request for people: hosts with their GPUs
// (free milli, x failed, n nominated), health, CPU and memory; jobs;
// nominations; the request.
func describe(s *topology.State, r *placement.Request) string {
	t := s.Tree()
	var b strings.Builder
	fmt.Fprintf(&b, "levels:")
	for l := topology.Level(1); l < t.HostLevel(); l++ {
		fmt.Fprintf(&b, " %s", t.LevelName(l))
	}
	b.WriteString("\n")
	for h := range topology.HostID(t.NumHosts()) {
		lo, hi := t.HostGPUs(h)
		fmt.Fprintf(&b, "  host %d %-4s %-8s model %s cpu %d/%d mem %d/%d %s", h, t.HostName(h),
			t.DomainPath(t.HostParent(h)), t.ModelName(t.HostModel(h)), s.HostCPU(h), t.HostCPU(h),
			s.HostMemory(h), t.HostMemory(h), s.HostHealth(h))
		if j, ok := s.HostExclusive(h); ok {
			fmt.Fprintf(&b, " exclusive(job %d)", j)
		}
		b.WriteString(" gpus [")
		for g := lo; g < hi; g++ {
			if g > lo {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "%d", s.GPUMilli(g))
			if s.GPUFailed(g) {
				b.WriteString("x")
			}
			if j, ok := s.GPUNominee(g); ok {
				fmt.Fprintf(&b, "n%d", j)
			}
		}
		b.WriteString("]\n")
	}
	var ids [256]topology.JobID
	for _, id := range s.AppendNominees(ids[:0]) {
		n, _ := s.NominationOf(id)
		fmt.Fprintf(&b, "  nomination job %d priority %d ready %d gpus %v\n", n.Job, n.Priority, n.Ready, n.GPUs)
	}
	for id := range s.JobIDBound() {
		if info, ok := s.JobInfo(id); ok {
			fmt.Fprintf(&b, "  job %d priority %d exclusive %v pods %v\n", id, info.Priority, info.Exclusive, s.AppendJobPods(nil, id))
		}
	}
	fmt.Fprintf(&b, "  request job %d priority %d hasEnd %v end %d required %d preferred %d exclusive %v models %v eligible %v policy %s\n",
		r.Job, r.Priority, r.HasEnd, r.End, r.Required, r.Preferred, r.Exclusive, r.Models, r.Eligible, r.Policy)
	for i, set := range r.Sets {
		fmt.Fprintf(&b, "    set %d: %+v\n", i, set)
	}
	return b.String()
}

func testSeed(t testing.TB) uint64        { return testkit.Seed(t, 1) }
func testSteps(t testing.TB, def int) int { return testkit.Steps(t, def) }
