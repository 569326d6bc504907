package bench

import (
	"fmt"
	"math/rand/v2"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// The engine benchmarks' fixtures: a loaded NVL72 cluster adopted by a
// blink.Engine, with a seeded queue of pending jobs (EngineFixture), or with
// rack gangs over spare hosts holding filler (RepairFixture).

// EngineLoad is the load of the engine benchmarks' clusters.
const EngineLoad = 0.9

// PendingMix is the pending-job mix of EngineFixture, openb-like: single-pod
// jobs dominate (1 GPU, a fraction of one, 2 or 4 GPUs, or 8 GPUs as two
// unconstrained 4-GPU pods), plus gangs of whole NVL72 hosts from one rack
// (72 GPUs) to a block (9,216), each requiring the smallest level that holds
// it. Weights are per 1,000 jobs. By GPUs the gangs dominate (≈129k GPUs per
// 1,000 jobs, 97% of it in gangs), so the queue asks for far more than the
// ≈100k GPUs a 90%-loaded 1M cluster has free: the small jobs all fit, and
// the gangs only where a whole free rack, SU or block remains (at seed 1,
// 86% of the 10k jobs bind).
var PendingMix = []JobKind{
	{"frac", 200, 0}, {"gpu1", 400, 1}, {"gpu2", 100, 2}, {"gpu4", 100, 4}, {"gpu8", 50, 8},
	{"gang72", 60, 72}, {"gang144", 30, 144}, {"gang576", 25, 576}, {"gang1152", 15, 1152},
	{"gang2304", 10, 2304}, {"gang4608", 6, 4608}, {"gang9216", 4, 9216},
}

// EngineConfig is the Config of the engine benchmarks: the default planners
// (packages preempt and defrag) capped at one preemption and one
// defragmentation attempt per cycle, one reservation; with spares, one
// spare host per NVL72 rack.
func EngineConfig(t *topology.Tree, spares bool) blink.Config {
	cfg := blink.Config{MaxPreemptAttempts: 1, MaxDefragAttempts: 1, MaxReservations: 1}
	if spares {
		rack, _ := t.LevelByName("rack")
		cfg.Spares = []blink.SparePolicy{{Level: rack, Hosts: 1}}
	}
	return cfg
}

// JobKind is one entry of a job mix: a name, a relative weight, and the
// whole GPUs per job (0: a fraction of one GPU: 250, 500 or 750 milli).
type JobKind struct {
	Name   string
	Weight int
	GPUs   int
}

// PendingSpec draws one job of PendingMix. Priorities follow Fill's classes
// (1, 10, 100, 1000 with weights 4:3:2:1; 1 and 10 preemptible). Single-pod
// preemptible jobs are movable. Jobs give no expected run time: backfill
// into a reservation would make every placement of an admitted job pay
// placement's collectExtra, quadratic in the reservation's GPUs (see the
// engine's README notes).
func PendingSpec(t *topology.Tree, rng *rand.Rand) blink.JobSpec {
	return DrawSpec(t, rng, PendingMix, false)
}

// DrawSpec draws one job of mix on tree t: a single pod up to a host's GPUs
// (several whole-host pods beyond, below 64 GPUs), else a gang of whole-host
// pods requiring the smallest level that holds it. Priorities follow Fill's
// classes (1, 10, 100, 1000 with weights 4:3:2:1; 1 and 10 preemptible);
// with productionGangs, gangs of 64 GPUs or more take 100 or 1000 (2:1).
// Single-pod preemptible jobs are movable.
func DrawSpec(t *topology.Tree, rng *rand.Rand, mix []JobKind, productionGangs bool) blink.JobSpec {
	total := 0
	for _, m := range mix {
		total += m.Weight
	}
	r := rng.IntN(total)
	k := 0
	for r >= mix[k].Weight {
		r -= mix[k].Weight
		k++
	}
	g, host := mix[k].GPUs, t.MaxHostGPUs()
	var spec blink.JobSpec
	switch {
	case g == 0:
		spec.Sets = []placement.PodSet{{Pods: 1, GPUs: 1, Milli: int32(250 * (1 + rng.IntN(3)))}}
	case g <= host:
		spec.Sets = []placement.PodSet{{Pods: 1, GPUs: int32(g)}}
	case g < 64:
		spec.Sets = []placement.PodSet{{Pods: int32(g / host), GPUs: int32(host)}}
	default:
		spec.Sets = []placement.PodSet{{Pods: int32(g / host), GPUs: int32(host)}}
		spec.Required = smallestLevel(t, g)
	}
	c := rng.IntN(10)
	if productionGangs && g >= 64 {
		c = 7 + c%3
	}
	switch {
	case c < 4:
		spec.Priority, spec.Preemptible = 1, true
	case c < 7:
		spec.Priority, spec.Preemptible = 10, true
	case c < 9:
		spec.Priority = 100
	default:
		spec.Priority = 1000
	}
	spec.Movable = spec.Preemptible && spec.Sets[0].Pods == 1
	return spec
}

// smallestLevel is the deepest named level whose domains hold gpus GPUs
// (0, none, above them all).
func smallestLevel(t *topology.Tree, gpus int) topology.Level {
	for l := t.HostLevel() - 1; l > 0; l-- {
		lo, _ := t.LevelDomains(l)
		if t.DomainGPUs(lo) >= gpus {
			return l
		}
	}
	return 0
}

// EngineFixture returns an Engine over a clone of Loaded("nvl72", gpus,
// EngineLoad, DefaultSeed) with EngineConfig(spares), its fill jobs adopted
// as running, and pending jobs drawn from PendingMix with seed, submitted at
// time 0; the State has room for every pending pod (topology.State.Grow). The caller owns it (clone it to reuse it).
func EngineFixture(gpus string, pending int, spares bool, seed uint64) (*blink.Engine, error) {
	return engineFixture(gpus, pending, spares, seed, nil)
}

// engineFixture is EngineFixture with the config changed by edit, if not nil.
func engineFixture(gpus string, pending int, spares bool, seed uint64, edit func(*blink.Config)) (*blink.Engine, error) {
	s, _, err := Loaded("nvl72", gpus, EngineLoad, DefaultSeed)
	if err != nil {
		return nil, err
	}
	cfg := EngineConfig(s.Tree(), spares)
	if edit != nil {
		edit(&cfg)
	}
	return EngineOver(s, PendingSpecs(s.Tree(), pending, seed), cfg)
}

// PendingSpecs draws n jobs of PendingMix (PendingSpec) from seed: the queue
// of EngineFixture.
func PendingSpecs(t *topology.Tree, n int, seed uint64) []blink.JobSpec {
	rng := rand.New(rand.NewPCG(seed, 0x656e67696e65))
	specs := make([]blink.JobSpec, n)
	for i := range specs {
		specs[i] = PendingSpec(t, rng)
	}
	return specs
}

// EngineOver returns an Engine with config cfg over a clone of s, its jobs
// adopted as running, and specs submitted at time 0; the clone has room for
// every pending pod (topology.State.Grow). The caller owns it.
func EngineOver(s *topology.State, specs []blink.JobSpec, cfg blink.Config) (*blink.Engine, error) {
	pods := 0
	for _, spec := range specs {
		for _, set := range spec.Sets {
			pods += int(set.Pods)
		}
	}
	// A running engine's tables have grown to their working size; a fresh
	// State's have no room: without Grow the first cycle would pay for
	// growing them.
	st := s.Clone()
	st.Grow(pods, len(specs))
	e, err := blink.New(st, cfg)
	if err != nil {
		return nil, fmt.Errorf("bench: engine fixture: %w", err)
	}
	for _, spec := range specs {
		if _, err := e.Submit(0, spec); err != nil {
			return nil, fmt.Errorf("bench: engine fixture: %w", err)
		}
	}
	return e, nil
}

// RepairFixture returns an Engine over an empty NVL72 cluster of size gpus
// in which every rack holds one rack gang (16 whole hosts, required rack,
// priority 100, not preemptible) and two spare hosts (SparePolicy 2 per
// rack) each running a one-host filler job (priority 1, preemptible): the
// "2 spares per NVL72 rack" layout. Racks are identical, so failing a gang
// host in rack i and repairing it costs the same for every i. It also
// returns the hosts of the gangs' rank-0 pods, one per rack.
func RepairFixture(gpus string) (*blink.Engine, []topology.HostID, error) {
	t, err := Cluster("nvl72", gpus)
	if err != nil {
		return nil, nil, err
	}
	s := topology.NewState(t)
	rack, _ := t.LevelByName("rack")
	lo, hi := t.LevelDomains(rack)
	gang := topology.Job{Priority: 100, Required: rack, Preferred: topology.NoLevel}
	fill := topology.Job{Priority: 1, Preemptible: true, Movable: true, Required: topology.NoLevel, Preferred: topology.NoLevel}
	var pods []topology.Pod
	var first []topology.HostID
	id := topology.JobID(0)
	delta := topology.Delta{Ops: make([]topology.Op, 1)}
	for d := lo; d < hi; d++ {
		h0, h1 := t.Hosts(d)
		if h1-h0 != 18 {
			return nil, nil, fmt.Errorf("bench: repair fixture: rack %s has %d hosts", t.DomainPath(d), h1-h0)
		}
		pods = pods[:0]
		for h := h0; h < h0+16; h++ {
			pods = append(pods, topology.Pod{Host: h, GPUs: 0b1111})
		}
		delta.Ops[0] = topology.AddJob(id, gang, pods...)
		if err := s.Apply(delta); err != nil {
			return nil, nil, err
		}
		id++
		for h := h0 + 16; h < h1; h++ {
			delta.Ops[0] = topology.AddJob(id, fill, topology.Pod{Host: h, GPUs: 0b1111})
			if err := s.Apply(delta); err != nil {
				return nil, nil, err
			}
			id++
		}
		first = append(first, h0)
	}
	e, err := blink.New(s, blink.Config{Spares: []blink.SparePolicy{{Level: rack, Hosts: 2}}})
	if err != nil {
		return nil, nil, err
	}
	return e, first, nil
}
