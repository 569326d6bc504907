package bench

import (
	"fmt"
	"math/bits"
	"math/rand/v2"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
)

// fullFillBase is the load Fill runs at before FillFull tops the cluster up.
const fullFillBase = 0.6

// fullTopUpJobs are the single-pod jobs that fill what Fill leaves free: GPUs per
// pod and relative weight (Fill's small-job weights without fractions).
var fullTopUpJobs = [...]struct {
	gpus   int
	weight int
}{{1, 35}, {2, 25}, {4, 20}, {8, 15}}

// FillFull loads an empty State until no GPU is free, deterministically for a
// seed: Fill at load 0.6 (full domains of multi-host gangs spanning 1, 2, 4 or
// 8 racks or SUs, partly used domains of single-pod jobs, free domains), then
// every host's free GPUs are taken by single-pod jobs of 1, 2, 4 or 8 GPUs
// (weights 35, 25, 20, 15 among the sizes that still fit the host, each taking
// the host's lowest free GPUs), and every partly used GPU's free milli by one
// fractional pod. Every job draws one of Fill's 4 priority classes (1, 10,
// 100, 1000; 80% preemptible). On NVL72 that is 40% of racks held by gangs and
// 60% by small jobs, which outnumber the gangs by far: the cluster a
// preemption benchmark needs, where nothing fits without evicting someone.
// Jobs get ids 0, 1, 2, …; FillStats counts them all.
func FillFull(s *topology.State, seed uint64) (FillStats, error) {
	st, err := Fill(s, fullFillBase, seed)
	if err != nil {
		return st, err
	}
	t := s.Tree()
	f := &filler{s: s, t: t, rng: rand.New(rand.NewPCG(seed, 0x66756c6c)), last: t.HostLevel() - 1,
		delta: topology.Delta{Ops: make([]topology.Op, 1)}, next: topology.JobID(st.Jobs), stats: st}
	for h := range topology.HostID(t.NumHosts()) {
		if err := f.topUp(h); err != nil {
			return FillStats{}, err
		}
	}
	st = f.stats
	healthy := s.HealthyGPUs(0)
	st.UsedGPUs = healthy - s.Free(0)
	st.Load = 1
	if healthy > 0 {
		st.Load = float64(st.UsedGPUs) / float64(healthy)
	}
	return st, nil
}

// topUp fills host h's free GPUs and partly used GPUs with single-pod jobs.
func (f *filler) topUp(h topology.HostID) error {
	s := f.s
	small := topology.Job{Movable: true, Required: topology.NoLevel, Preferred: topology.NoLevel}
	for free := s.HostFreeMask(h); free != 0; free = s.HostFreeMask(h) {
		n := bits.OnesCount64(free)
		total := 0
		for _, j := range fullTopUpJobs {
			if j.gpus <= n {
				total += j.weight
			}
		}
		k, x := 1, f.rng.IntN(total)
		for _, j := range fullTopUpJobs {
			if j.gpus <= n {
				if x -= j.weight; x < 0 {
					k = j.gpus
					break
				}
			}
		}
		var m uint64
		for range k {
			m |= free & -free
			free &= free - 1
		}
		cpu, mem := f.share(h, 4*k)
		f.pods = append(f.pods, topology.Pod{Host: h, GPUs: m, CPUMilli: cpu, MemoryMiB: mem})
		small.Priority, small.Preemptible = f.class()
		if err := f.add(small); err != nil {
			return err
		}
	}
	lo, hi := f.t.HostGPUs(h)
	for g := lo; g < hi; g++ {
		if milli := s.GPUMilli(g); milli > 0 && milli < topology.FullGPU && !s.GPUFailed(g) {
			cpu, mem := f.share(h, 1)
			f.pods = append(f.pods, topology.Pod{Host: h, GPUs: 1 << uint(g-lo), Milli: int32(milli), CPUMilli: cpu, MemoryMiB: mem})
			small.Priority, small.Preemptible = f.class()
			if err := f.add(small); err != nil {
				return err
			}
		}
	}
	return nil
}

type fullStateKey struct {
	clusterKey
	seed uint64
}

var fullStates struct {
	m map[fullStateKey]loaded // guarded by cache's mutex
}

// LoadedFull returns a State of the grid cluster filled by FillFull(seed),
// built on first use and shared for the rest of the process: treat it as
// read-only, and Clone it before applying anything.
func LoadedFull(shape, gpus string, seed uint64) (*topology.State, FillStats, error) {
	cache.Lock()
	defer cache.Unlock()
	k := fullStateKey{clusterKey{shape, gpus}, seed}
	if l, ok := fullStates.m[k]; ok {
		return l.s, l.stats, nil
	}
	t, err := clusterLocked(k.clusterKey)
	if err != nil {
		return nil, FillStats{}, err
	}
	s := topology.NewState(t)
	st, err := FillFull(s, seed)
	if err != nil {
		return nil, FillStats{}, fmt.Errorf("bench: %s/%s: %w", shape, gpus, err)
	}
	if fullStates.m == nil {
		fullStates.m = map[fullStateKey]loaded{}
	}
	fullStates.m[k] = loaded{s, st}
	return s, st, nil
}

// PreemptAfterCycle returns the State and request of BenchmarkPreemptAfterCycle:
// EngineFixture("1M", 10000, false, seed) run for one cycle with preemption
// off, and the request of the job the same cycle preempts for with it on.
func PreemptAfterCycle(seed uint64) (*topology.State, placement.Request, error) {
	base, err := EngineFixture("1M", 10000, false, seed)
	if err != nil {
		return nil, placement.Request{}, err
	}
	d := base.Clone().Cycle(1)
	if len(d.Preemptions) == 0 {
		return nil, placement.Request{}, fmt.Errorf("bench: the fixture's cycle preempts for no job")
	}
	spec, err := base.Spec(d.Preemptions[0].Job)
	if err != nil {
		return nil, placement.Request{}, err
	}
	e, err := engineFixture("1M", 10000, false, seed, func(c *blink.Config) { c.MaxPreemptAttempts = -1 })
	if err != nil {
		return nil, placement.Request{}, err
	}
	e.Cycle(1)
	s := e.State().Clone()
	req := placement.Request{Job: s.JobIDBound(), Priority: spec.Priority, Preemptible: spec.Preemptible,
		Sets: spec.Sets, Required: spec.Required, Preferred: spec.Preferred, Exclusive: spec.Exclusive,
		Models: spec.Models}
	return s, req, nil
}

// PreemptRequests names the requests of the preemption grid, per shape (see
// PlaceRequest); PreemptPriority is their priority: above classes 1, 10 and
// 100 of the fill, below 1000.
var PreemptRequests = map[string][]string{
	"nvl72": {"host4", "rack72", "su576", "gpus200k", "fracrack", "fracpair", "pair", "fracany", "cpugang", "su128", "mpisu", "mpiblock", "exclpair", "exclsu"},
	"hgx":   {"host8", "su256", "pod4096", "gpus200k", "pair", "fracany", "cpugang", "exclpair"},
}

// PreemptPriority is the priority of the grid's requests.
const PreemptPriority = 500

// Preempt200k returns BenchmarkPreempt's gpus200k case on shape at 1M GPUs —
// the fully loaded State, the request and the preemption answer — for the
// benchmarks that time one step of that answer.
func Preempt200k(shape string) (*topology.State, placement.Request, *preempt.Result, error) {
	s, _, err := LoadedFull(shape, "1M", DefaultSeed)
	if err != nil {
		return nil, placement.Request{}, nil, err
	}
	req, err := PlaceRequest(s.Tree(), "gpus200k")
	if err != nil {
		return nil, placement.Request{}, nil, err
	}
	req.Job, req.Priority = s.JobIDBound(), PreemptPriority
	var p preempt.Planner
	res := &preempt.Result{}
	ok, why, err := p.Plan(s, &req, 0, 1, res)
	if err != nil {
		return nil, placement.Request{}, nil, err
	}
	if !ok {
		return nil, placement.Request{}, nil, fmt.Errorf("bench: gpus200k on %s: no answer: %s", shape, why.Format(s.Tree()))
	}
	return s, req, res, nil
}
