package preempt_test

import (
	"cmp"
	"fmt"
	"github.com/blinksched/blink/internal/testkit"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Random clusters for the oracle tests. Every randomized test logs its seed;
// BLINK_SEED replays it and BLINK_STEPS scales the number of instances.

func pick[T any](rng *rand.Rand, xs ...T) T { return xs[rng.IntN(len(xs))] }

// genTree builds 2–maxHosts hosts under one or two named levels, with 0–8
// GPUs per host (a third of the trees one count for all hosts, 1–8), one or
// two models, and finite or unlimited CPU and memory.
func genTree(rng *rand.Rand, maxHosts int) *topology.Tree {
	levels := []string{"rack"}
	if rng.IntN(2) == 0 {
		levels = []string{"block", "rack"}
	}
	blocks, racks := 1+rng.IntN(2), 1+rng.IntN(3)
	models := []string{"A", "B"}[:1+rng.IntN(2)]
	n := 2 + rng.IntN(maxHosts-1)
	hosts := make([]topology.HostSpec, n)
	uniform := 0 // hosts of one GPU count (Tree.UniformHostGPUs), 3 and 6 across words
	if rng.IntN(3) == 0 {
		uniform = pick(rng, 1, 3, 4, 6, 8)
	}
	for i := range hosts {
		b, r := rng.IntN(blocks), rng.IntN(racks)
		path := []string{fmt.Sprintf("r%d", b*racks+r)}
		if len(levels) == 2 {
			path = []string{fmt.Sprintf("b%d", b), fmt.Sprintf("b%dr%d", b, r)}
		}
		hosts[i] = topology.HostSpec{
			Name: fmt.Sprintf("h%d", i), Path: path, GPUs: cmp.Or(uniform, pick(rng, 0, 2, 4, 4, 4, 8, 8)),
			Model:     models[rng.IntN(len(models))],
			CPUMilli:  pick[int64](rng, 0, 16000, 64000, 64000),
			MemoryMiB: pick[int64](rng, 0, 32768, 262144, 262144),
		}
	}
	t, err := topology.BuildHosts(levels, hosts)
	if err != nil {
		panic(err)
	}
	return t
}

const (
	nomineeBase = 100
	requestJob  = 200
)

// genLoad fills s with up to maxJobs jobs (ids from 0) through State.Apply:
// whole-GPU pods (mostly), fractions and CPU-only pods, some jobs over
// several hosts, some exclusive; priorities 0–9, most preemptible. Then
// nominations, failed GPUs, draining and failed hosts. Refused operations
// are skipped. It returns the nominees.
func genLoad(rng *rand.Rand, s *topology.State, maxJobs int) []topology.JobID {
	t := s.Tree()
	H := t.NumHosts()
	for j := range maxJobs {
		info := topology.Job{Priority: int32(rng.IntN(10)), Preemptible: rng.IntN(5) != 0, Movable: true,
			Exclusive: rng.IntN(12) == 0, Required: topology.NoLevel, Preferred: topology.NoLevel}
		var pods []topology.Pod
		nPods := 1
		if rng.IntN(4) == 0 {
			nPods = 2 + rng.IntN(3)
		}
		for range nPods {
			h := topology.HostID(rng.IntN(H))
			for try := 0; try < 4 && s.HostUnusedMask(h) == 0; try++ { // prefer hosts with room
				h = topology.HostID(rng.IntN(H))
			}
			p := topology.Pod{Host: h, CPUMilli: pick[int32](rng, 0, 0, 2000, 8000), MemoryMiB: pick[int32](rng, 0, 0, 8192)}
			n := t.HostGPUCount(h)
			unused := s.HostUnusedMask(h)
			for _, q := range pods { // earlier pods of this job
				if q.Host == h {
					unused &^= q.GPUs
				}
			}
			switch k := rng.IntN(10); {
			case k < 8 && unused != 0:
				for range 1 + rng.IntN(min(n, 4)) {
					if unused == 0 {
						break
					}
					i := randomBit(rng, unused)
					p.GPUs |= 1 << i
					unused &^= 1 << i
				}
			case k == 8 && n > 0:
				i := rng.IntN(n)
				lo, _ := t.HostGPUs(h)
				m := s.GPUMilli(lo + topology.GPUID(i))
				if m < 2 {
					continue
				}
				p.GPUs = 1 << uint(i)
				p.Milli = int32(1 + rng.IntN(min(999, m-1)))
			}
			pods = append(pods, p)
		}
		_ = s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(topology.JobID(j), info, pods...)}})
	}
	nominees := genNominations(rng, s, false)
	genFaults(rng, s, 16)
	return nominees
}

// genNominations nominates 0–2 random GPU sets of one host each (one GPU
// each with oneGPU) for jobs nomineeBase, nomineeBase+1 (random priorities
// and ready times) and returns the nominees whose nomination applied.
func genNominations(rng *rand.Rand, s *topology.State, oneGPU bool) []topology.JobID {
	t := s.Tree()
	var nominees []topology.JobID
	for k := range rng.IntN(3) {
		h := topology.HostID(rng.IntN(t.NumHosts()))
		lo, hi := t.HostGPUs(h)
		if lo == hi {
			continue
		}
		var gpus []topology.GPUID
		for g := lo; g < hi && !oneGPU; g++ {
			if rng.IntN(3) == 0 {
				gpus = append(gpus, g)
			}
		}
		if len(gpus) == 0 {
			gpus = append(gpus, lo+topology.GPUID(rng.IntN(int(hi-lo))))
		}
		id := topology.JobID(nomineeBase + k)
		n := topology.Nomination{Job: id, Priority: int32(rng.IntN(12)), Ready: int64(rng.IntN(100)), Expiry: 1000, GPUs: gpus}
		if s.Apply(topology.Delta{Ops: []topology.Op{topology.Nominate(n)}}) == nil {
			nominees = append(nominees, id)
		}
	}
	return nominees
}

// genFaults fails a random GPU one time in three, and drains or fails each
// host one time in oneIn (each); refused operations are skipped.
func genFaults(rng *rand.Rand, s *topology.State, oneIn int) {
	t := s.Tree()
	var ops []topology.Op
	if G := t.NumGPUs(); G > 0 && rng.IntN(3) == 0 {
		ops = append(ops, topology.SetGPUHealth(topology.GPUID(rng.IntN(G)), topology.Failed))
	}
	for h := range topology.HostID(t.NumHosts()) {
		switch rng.IntN(oneIn) {
		case 0:
			ops = append(ops, topology.SetHostHealth(h, topology.Draining))
		case 1:
			ops = append(ops, topology.SetHostHealth(h, topology.Failed))
		}
	}
	for _, op := range ops {
		_ = s.Apply(topology.Delta{Ops: []topology.Op{op}})
	}
}

func randomBit(rng *rand.Rand, m uint64) uint {
	k := rng.IntN(bits.OnesCount64(m))
	for ; k > 0; k-- {
		m &= m - 1
	}
	return uint(bits.TrailingZeros64(m))
}

// genRequest returns a random request of one pod set (several when sets):
// whole GPUs mostly, else a fraction or CPU-only; optional CPU and memory,
// required and preferred levels, slices, exclusivity, a model, eligible
// hosts; a priority 0–11 and a job that may be a nominee.
func genRequest(rng *rand.Rand, t *topology.Tree, nominees []topology.JobID, sets int) *placement.Request {
	hl := t.HostLevel()
	r := &placement.Request{Job: requestJob, Priority: int32(rng.IntN(12)), Preemptible: rng.IntN(2) == 0}
	if len(nominees) > 0 && rng.IntN(4) == 0 {
		r.Job = pick(rng, nominees...)
	}
	if rng.IntN(6) == 0 {
		r.HasEnd, r.End = true, int64(rng.IntN(120))
	}
	switch rng.IntN(6) {
	case 0:
		r.Required = topology.NoLevel
	case 1:
		r.Required = hl
	default:
		r.Required = topology.Level(rng.IntN(int(hl)))
	}
	if rng.IntN(3) == 0 {
		r.Preferred = topology.Level(1 + rng.IntN(int(hl)))
		if r.Required > 0 && r.Preferred <= r.Required {
			r.Preferred = topology.NoLevel
		}
	}
	for range sets {
		ps := placement.PodSet{Pods: pick[int32](rng, 1, 1, 2, 3, 4)}
		switch k := rng.IntN(10); {
		case k < 7:
			ps.GPUs = pick[int32](rng, 1, 1, 2, 2, 3, 4, 4, 8)
		case k < 9:
			ps.GPUs, ps.Milli = 1, int32(100*(1+rng.IntN(9)))
		}
		if rng.IntN(4) == 0 {
			ps.CPUMilli = pick[int32](rng, 1000, 8000, 16000)
		}
		if rng.IntN(5) == 0 {
			ps.MemoryMiB = pick[int32](rng, 4096, 65536)
		}
		if rng.IntN(6) == 0 && ps.Pods > 1 && ps.Pods%2 == 0 {
			ps.SliceSize = 2
			ps.SliceLevel = topology.Level(max(1, int(r.Required)) + rng.IntN(int(hl)-max(1, int(r.Required))+1))
		}
		r.Sets = append(r.Sets, ps)
	}
	if rng.IntN(8) == 0 {
		r.Exclusive = true
	}
	if rng.IntN(6) == 0 {
		r.Models = []int{rng.IntN(t.NumModels())}
	}
	if rng.IntN(6) == 0 {
		r.Eligible = make([]uint64, (t.NumHosts()+63)/64)
		for h := range t.NumHosts() {
			if rng.IntN(4) != 0 {
				r.Eligible[h/64] |= 1 << (uint(h) % 64)
			}
		}
		if rng.IntN(2) == 0 { // the same hosts, as a placement.Restriction
			x := placement.NewRestriction(t)
			for h := range topology.HostID(t.NumHosts()) {
				if r.Eligible[h/64]&(1<<(uint(h)%64)) == 0 {
					_ = x.Close(h)
				}
			}
			r.Eligible, r.Restriction = x.Eligible(), x
		}
	}
	r.Policy = placement.Policy(rng.IntN(3))
	return r
}

func testSeed(t testing.TB) uint64        { return testkit.Seed(t, 1) }
func testSteps(t testing.TB, def int) int { return testkit.Steps(t, def) }
