package defrag_test

import (
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/defrag"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// bruteMetrics computes the metrics host by host.
func bruteMetrics(s *topology.State, g int) defrag.Metrics {
	t := s.Tree()
	m := defrag.Metrics{PodGPUs: g, FreeGPUs: int64(s.Free(0)), SharedMilli: s.SharedMilli(0)}
	domain := func(l topology.Level, lo, hi topology.HostID) (idle bool, gang int) {
		idle = true
		for h := lo; h < hi; h++ {
			idle = idle && s.HostIdle(h)
			gang += s.HostFree(h) / g
		}
		return idle, gang
	}
	for l := topology.Level(0); l <= t.HostLevel(); l++ {
		lm := defrag.LevelMetrics{Level: l, FreeGPUs: m.FreeGPUs}
		visit := func(lo, hi topology.HostID, gpus int) {
			lm.Domains++
			idle, gang := domain(l, lo, hi)
			if idle {
				lm.FreeDomains++
				lm.FreeInFreeDomains += int64(gpus)
			}
			lm.LargestGang = max(lm.LargestGang, gang)
		}
		if l == t.HostLevel() {
			for h := range topology.HostID(t.NumHosts()) {
				visit(h, h+1, t.HostGPUCount(h))
			}
		} else {
			lo, hi := t.LevelDomains(l)
			for d := lo; d < hi; d++ {
				a, b := t.Hosts(d)
				visit(a, b, t.DomainGPUs(d))
			}
		}
		m.Levels = append(m.Levels, lm)
	}
	return m
}

// TestMeter compares Meter with a host-by-host computation after every step
// of random changes, with one Meter kept across steps (incremental, from
// the touch log) and a fresh one (rebuilt): all three agree.
func TestMeter(t *testing.T) {
	seed := testSeed(t)
	n := testSteps(t, 60)
	var kept defrag.Meter
	var got, fresh defrag.Metrics
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		var tree *topology.Tree
		if i%4 == 0 {
			var err error
			tree, err = topology.BuildShape(topology.Shape{Levels: []string{"block", "rack"}, FanOut: []int{3, 4, 1 + rng.IntN(5)}, GPUsPerHost: 1 + rng.IntN(8)})
			require.NoError(t, err)
		} else {
			tree = genCluster(rng, genOpts{frac: true, cpu: true})
		}
		o := genOpts{maxMovable: 100, frac: true, cpu: true, health: true}
		s := topology.NewState(tree)
		genLoad(rng, s, o, rng.Float64())
		g := 1 + rng.IntN(4)
		for step := range 20 {
			kept.Measure(s, g, &got)
			var m defrag.Meter
			m.Measure(s, g, &fresh)
			want := bruteMetrics(s, g)
			require.Equal(t, want, got, "instance %d step %d (kept meter)\n%s", i, step, render(s))
			require.Equal(t, want, fresh, "instance %d step %d (fresh meter)", i, step)
			mutate(rng, s, o)
		}
	}
}

// mutate changes s at random: a job leaves, one arrives, or a host's health
// changes.
func mutate(rng *rand.Rand, s *topology.State, o genOpts) {
	t := s.Tree()
	switch rng.IntN(4) {
	case 0, 1:
		for range 4 {
			j := topology.JobID(rng.IntN(int(max(s.JobIDBound(), 1))))
			if s.HasJob(j) {
				mustApply(s, topology.RemoveJob(j))
				return
			}
		}
	case 2:
		info := topology.Job{Priority: 1, Preemptible: true, Movable: true, Required: topology.NoLevel, Preferred: topology.NoLevel}
		if pods, ok := genJob(rng, s, &info, o); ok {
			_ = s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(s.JobIDBound(), info, pods...)}})
		}
	default:
		h := topology.HostID(rng.IntN(t.NumHosts()))
		_ = s.Apply(topology.Delta{Ops: []topology.Op{topology.SetHostHealth(h, topology.Health(rng.IntN(3)))}})
	}
}

// TestMeterNoLevels: a tree of hosts only.
func TestMeterNoLevels(t *testing.T) {
	tree, err := topology.BuildHosts(nil, []topology.HostSpec{{Name: "a", GPUs: 4}, {Name: "b", GPUs: 2}})
	require.NoError(t, err)
	s := topology.NewState(tree)
	mustApply(s, topology.AddJob(0, topology.Job{}, topology.Pod{Host: 0, GPUs: 1}))
	var m defrag.Meter
	var got defrag.Metrics
	m.Measure(s, 2, &got)
	require.Equal(t, bruteMetrics(s, 2), got)
	require.Len(t, got.Levels, 2)
}

// TestMeterAllocs: a measure of an unchanged State allocates nothing.
func TestMeterAllocs(t *testing.T) {
	tree, err := topology.BuildShape(topology.NVL72(1))
	require.NoError(t, err)
	s := topology.NewState(tree)
	var m defrag.Meter
	var got defrag.Metrics
	m.Measure(s, 4, &got)
	allocs := testing.AllocsPerRun(100, func() { m.Measure(s, 4, &got) })
	require.Zero(t, allocs)
}
