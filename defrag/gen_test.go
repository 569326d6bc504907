package defrag_test

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// Random tests draw small clusters from a fixed, logged seed; BLINK_SEED
// replays another and BLINK_STEPS scales the number of instances.

func testSeed(t testing.TB) uint64 {
	t.Helper()
	if v := os.Getenv("BLINK_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "BLINK_SEED")
		t.Logf("seed %d (from BLINK_SEED)", s)
		return s
	}
	const s = 1
	t.Logf("seed %d (try others with BLINK_SEED)", s)
	return s
}

func testSteps(t testing.TB, def int) int {
	t.Helper()
	if v := os.Getenv("BLINK_STEPS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "BLINK_STEPS")
		return n
	}
	return def
}

// genOpts shapes a random instance.
type genOpts struct {
	maxMovable int  // movable and preemptible jobs, at most
	frac       bool // fractional pods and requests
	cpu        bool // CPU limits
	sets       bool // jobs with recorded pod sets and slices
	health     bool // failed and draining hosts, failed GPUs
	models     bool // two GPU models
	mostly     bool // most jobs movable and preemptible (9 in 10 each, not 4 in 5)
	elig       bool // requests restricted to eligible hosts, now and then
	noms       bool // nominations (for jobs of priority 3, 5 or 7: below, as and above the requests')
}

// genEligible restricts r, one time in three when o.elig, to a random three
// quarters of the hosts: an eligible-host bitset, or the same hosts as a
// placement.Restriction.
func genEligible(rng *rand.Rand, t *topology.Tree, r *placement.Request, o genOpts) {
	if !o.elig || rng.IntN(3) > 0 {
		return
	}
	x := placement.NewRestriction(t)
	for h := range topology.HostID(t.NumHosts()) {
		if rng.IntN(4) == 0 {
			_ = x.Close(h)
		}
	}
	if rng.IntN(2) == 0 {
		r.Eligible, r.Restriction = x.Eligible(), x
		return
	}
	r.Eligible = append([]uint64(nil), x.Eligible()...)
}

// genCluster draws a small tree: 1–2 levels, 2–4 last-level domains of 1–3
// hosts with 1–4 GPUs.
func genCluster(rng *rand.Rand, o genOpts) *topology.Tree {
	levels := []string{"rack"}
	blocks := 1
	if rng.IntN(3) == 0 {
		levels = []string{"block", "rack"}
		blocks = 2
	}
	var hosts []topology.HostSpec
	racks := 2 + rng.IntN(2)
	gpus := 2 + rng.IntN(3)
	for b := range blocks {
		for r := range racks {
			n := 1 + rng.IntN(3)
			for h := range n {
				spec := topology.HostSpec{Name: fmt.Sprintf("b%dr%dh%d", b, r, h), GPUs: gpus,
					CPUMilli: topology.Unlimited, MemoryMiB: topology.Unlimited, Model: "A"}
				if rng.IntN(5) == 0 {
					spec.GPUs = 1 + rng.IntN(4)
				}
				if o.cpu && rng.IntN(2) == 0 {
					spec.CPUMilli = int64(1000 * (1 + rng.IntN(4)))
				}
				if o.models && rng.IntN(3) == 0 {
					spec.Model = "B"
				}
				spec.Path = []string{fmt.Sprintf("r%d", r)}
				if len(levels) == 2 {
					spec.Path = []string{fmt.Sprintf("b%d", b), fmt.Sprintf("r%d", r)}
				}
				hosts = append(hosts, spec)
			}
		}
	}
	t, err := topology.BuildHosts(levels, hosts)
	if err != nil {
		panic(err)
	}
	return t
}

// genLoad adds random jobs until about load of the GPUs are used (or the
// draws stop fitting), with at most o.maxMovable movable ones.
func genLoad(rng *rand.Rand, s *topology.State, o genOpts, load float64) {
	t := s.Tree()
	if o.health {
		for h := range topology.HostID(t.NumHosts()) {
			switch rng.IntN(12) {
			case 0:
				mustApply(s, topology.SetHostHealth(h, topology.Failed))
			case 1:
				mustApply(s, topology.SetHostHealth(h, topology.Draining))
			case 2:
				lo, _ := t.HostGPUs(h)
				mustApply(s, topology.SetGPUHealth(lo, topology.Failed))
			}
		}
	}
	movable := 0
	id := topology.JobID(0)
	for fails := 0; fails < 30 && float64(t.NumGPUs()-s.Free(0)) < load*float64(t.NumGPUs()); {
		odds := 5
		if o.mostly {
			odds = 10
		}
		info := topology.Job{Priority: int32(rng.IntN(3)), Preemptible: rng.IntN(odds) > 0, Movable: rng.IntN(odds) > 0,
			Required: topology.NoLevel, Preferred: topology.NoLevel}
		if movable >= o.maxMovable {
			info.Movable = false
		}
		pods, ok := genJob(rng, s, &info, o)
		if !ok {
			fails++
			continue
		}
		if err := s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(id, info, pods...)}}); err != nil {
			fails++
			continue
		}
		if info.Movable && info.Preemptible {
			movable++
		}
		id++
	}
	if o.noms {
		genNominations(rng, s)
	}
}

// genNominations nominates a few random GPUs, used or not (all healthy, else
// the nomination is refused), for up to three
// absent jobs (ids past the live ones) of priority 3, 5 or 7 (requests have 5).
func genNominations(rng *rand.Rand, s *topology.State) {
	t := s.Tree()
	for i := range rng.IntN(4) {
		var gpus []topology.GPUID
		for range 1 + rng.IntN(6) {
			g := topology.GPUID(rng.IntN(t.NumGPUs()))
			h := t.GPUHost(g)
			lo, _ := t.HostGPUs(h)
			if !slices.Contains(gpus, g) && s.HostNominatedMask(h)&(1<<uint(g-lo)) == 0 {
				gpus = append(gpus, g)
			}
		}
		slices.Sort(gpus)
		n := topology.Nomination{Job: s.JobIDBound() + topology.JobID(i), Priority: int32(3 + 2*rng.IntN(3)), Ready: 10, Expiry: 100, GPUs: gpus}
		if len(gpus) > 0 {
			_ = s.Apply(topology.Delta{Ops: []topology.Op{topology.Nominate(n)}}) // refused on failed GPUs or hosts
		}
	}
}

// genJob draws a job's shape and a random place for it that keeps its own
// required level (and slices).
func genJob(rng *rand.Rand, s *topology.State, info *topology.Job, o genOpts) ([]topology.Pod, bool) {
	t := s.Tree()
	npods := 1 + rng.IntN(2)
	if rng.IntN(6) == 0 {
		npods = 3
	}
	g := 1 + rng.IntN(2)
	var milli, cpu int32
	if o.frac && rng.IntN(4) == 0 {
		g, milli = 1, int32(250*(1+rng.IntN(3)))
	}
	if o.cpu && rng.IntN(3) == 0 {
		cpu = 500
	}
	switch rng.IntN(4) {
	case 0:
		info.Required = t.HostLevel() - 1 // the last named level
	case 1:
		info.Required = t.HostLevel()
	}
	if o.sets && rng.IntN(2) == 0 {
		set := topology.PodSet{Count: int32(npods), GPUs: int32(g), Milli: milli, CPUMilli: cpu}
		if npods == 2 && rng.IntN(2) == 0 && info.Required != t.HostLevel() {
			set.SliceSize, set.SliceLevel = 2, t.HostLevel()
		}
		info.Sets = []topology.PodSet{set}
	}
	// Place pod by pod on random hosts of one random domain of the required level.
	lo, hi := topology.HostID(0), topology.HostID(t.NumHosts())
	if info.Required > 0 && info.Required < t.HostLevel() {
		dlo, dhi := t.LevelDomains(info.Required)
		lo, hi = t.Hosts(dlo + topology.DomainID(rng.IntN(int(dhi-dlo))))
	}
	if info.Required == t.HostLevel() || len(info.Sets) > 0 && info.Sets[0].SliceSize > 0 {
		h := lo + topology.HostID(rng.IntN(int(hi-lo)))
		lo, hi = h, h+1
	}
	use := map[topology.HostID]uint64{}
	shared := map[topology.GPUID]int32{}
	cpuUsed := map[topology.HostID]int32{}
	var pods []topology.Pod
	for range npods {
		placed := false
		for try := 0; try < 8 && !placed; try++ {
			h := lo + topology.HostID(rng.IntN(int(hi-lo)))
			if s.HostHealth(h) != topology.Healthy || s.HostCPU(h)-cpuUsed[h] < cpu {
				continue
			}
			if len(pods) > 0 && t.HostModel(h) != t.HostModel(pods[0].Host) {
				continue
			}
			free := s.HostFreeMask(h) &^ use[h]
			glo, _ := t.HostGPUs(h)
			if milli > 0 {
				for i := range t.HostGPUCount(h) {
					gpu := glo + topology.GPUID(i)
					if s.GPUFailed(gpu) || s.HostNominatedMask(h)&(1<<i) != 0 || use[h]&(1<<i) != 0 {
						continue
					}
					if int32(s.GPUMilli(gpu))-shared[gpu] >= milli {
						shared[gpu] += milli
						pods = append(pods, topology.Pod{Host: h, GPUs: 1 << i, Milli: milli, CPUMilli: cpu})
						cpuUsed[h] += cpu
						placed = true
						break
					}
				}
				continue
			}
			if bits.OnesCount64(free) < g {
				continue
			}
			var m uint64
			for range g {
				m |= free & -free
				free &= free - 1
			}
			use[h] |= m
			cpuUsed[h] += cpu
			pods = append(pods, topology.Pod{Host: h, GPUs: m, CPUMilli: cpu})
			placed = true
		}
		if !placed {
			return nil, false
		}
	}
	return pods, true
}

// genRequest draws a one-set request: 1–3 pods of 1–4 GPUs (or a
// fraction), a required level sometimes.
func genRequest(rng *rand.Rand, t *topology.Tree, id topology.JobID, o genOpts) *placement.Request {
	set := placement.PodSet{Pods: int32(1 + rng.IntN(3)), GPUs: int32(1 + rng.IntN(4))}
	if o.frac && rng.IntN(5) == 0 {
		set.GPUs, set.Milli = 1, int32(250*(1+rng.IntN(3)))
	}
	if o.cpu && rng.IntN(3) == 0 {
		set.CPUMilli = 500
	}
	r := &placement.Request{Job: id, Priority: 5, Sets: []placement.PodSet{set},
		Required: topology.NoLevel, Preferred: topology.NoLevel}
	switch rng.IntN(3) {
	case 0:
		r.Required = t.HostLevel() - 1
	case 1:
		if set.Pods == 1 {
			r.Required = t.HostLevel()
		}
	}
	if o.models && rng.IntN(3) == 0 {
		if m, ok := t.ModelByName("A"); ok {
			r.Models = []int{m}
		}
	}
	genEligible(rng, t, r, o)
	return r
}

func mustApply(s *topology.State, ops ...topology.Op) {
	if err := s.Apply(topology.Delta{Ops: ops}); err != nil {
		panic(err)
	}
}

// genTightRequest draws a one-set request sized for a random domain (of
// the last named level, or a host): more GPUs than it has free, no more than
// it has healthy, so that moves may make room.
func genTightRequest(rng *rand.Rand, s *topology.State, id topology.JobID, o genOpts) *placement.Request {
	return genTightRequestN(rng, s, id, o, 2)
}

// genTightRequestN is genTightRequest missing 1…extra GPUs.
func genTightRequestN(rng *rand.Rand, s *topology.State, id topology.JobID, o genOpts, extra int) *placement.Request {
	t := s.Tree()
	r := &placement.Request{Job: id, Priority: 5, Required: topology.NoLevel, Preferred: topology.NoLevel}
	var healthy, free, maxHost int
	if rng.IntN(3) == 0 {
		h := topology.HostID(rng.IntN(t.NumHosts()))
		healthy, free, maxHost = t.HostGPUCount(h), s.HostFree(h), t.HostGPUCount(h)
		r.Required = t.HostLevel()
	} else {
		l := t.HostLevel() - 1
		lo, hi := t.LevelDomains(l)
		d := lo + topology.DomainID(rng.IntN(int(hi-lo)))
		healthy, free = s.HealthyGPUs(d), s.Free(d)
		hlo, hhi := t.Hosts(d)
		for h := hlo; h < hhi; h++ {
			maxHost = max(maxHost, t.HostGPUCount(h))
		}
		if rng.IntN(4) > 0 {
			r.Required = l
		}
	}
	if healthy == 0 || maxHost == 0 {
		return genRequest(rng, t, id, o)
	}
	want := min(free+1+rng.IntN(extra), healthy)
	g := 1 + rng.IntN(min(maxHost, 4))
	pods := max((want+g-1)/g, 1)
	if r.Required == t.HostLevel() {
		g, pods = min(want, maxHost), 1
	}
	set := placement.PodSet{Pods: int32(pods), GPUs: int32(g)}
	if o.cpu && rng.IntN(3) == 0 {
		set.CPUMilli = 500
	}
	r.Sets = []placement.PodSet{set}
	genEligible(rng, t, r, o)
	return r
}
