package defrag

import (
	"math/bits"

	"github.com/blinksched/blink/topology"
)

// Topology fragmentation metrics. These measure how free capacity sits in
// the topology — whether it forms entirely free domains a large gang can
// take, or is scattered over partly used ones. They are not the
// workload-aware fragmentation of the FGD paper (the GPUs expected to be
// unusable by the next task drawn from a workload distribution), which
// `blink fgd` reports.

// LevelMetrics are the topology fragmentation figures of one level.
type LevelMetrics struct {
	Level topology.Level
	// Domains of the level (hosts at the host level, 1 at the root).
	Domains int
	// FreeDomains are the entirely free ones: every host healthy, without
	// pods, every GPU free.
	FreeDomains int
	// FreeGPUs are the cluster's free GPUs (the same at every level).
	FreeGPUs int64
	// FreeInFreeDomains are the free GPUs inside entirely free domains.
	FreeInFreeDomains int64
	// LargestGang is the most pods of Metrics.PodGPUs whole GPUs that one
	// domain of the level takes now: the largest such gang placeable with the
	// level required (pods on one host at a time, free GPUs only; CPU and
	// memory not counted).
	LargestGang int
}

// TopoFrag is the topology fragmentation ratio of the level: the share of
// free GPUs outside entirely free domains, (FreeGPUs − FreeInFreeDomains) /
// FreeGPUs; 0 when nothing is free. 0 means every free GPU sits in an
// entirely free domain; 1 that no domain of the level is entirely free.
func (m *LevelMetrics) TopoFrag() float64 {
	if m.FreeGPUs == 0 {
		return 0
	}
	return float64(m.FreeGPUs-m.FreeInFreeDomains) / float64(m.FreeGPUs)
}

// Metrics are the topology fragmentation figures of a State, per level.
type Metrics struct {
	// PodGPUs is the pod shape LargestGang counts (whole GPUs per pod).
	PodGPUs int
	// FreeGPUs are the cluster's free GPUs.
	FreeGPUs int64
	// SharedMilli is the stranded milli-GPU: free milli on partly used GPUs,
	// which only fractional pods can use.
	SharedMilli int64
	// Levels from the root (level 0) to the host level.
	Levels []LevelMetrics
}

// Meter computes Metrics. It caches, per level and per child of the root,
// the largest gang, and brings the cache up to date from the State's touch
// log (State.Touched), so a measure costs O(levels × children of the root)
// plus O(domains below each child of the root touched since the last
// measure); a State it has not seen, another pod shape or a touch log that
// overflowed rebuild the cache in O(domains). The other figures are read
// from aggregates: free-domain bitsets (popcounts), idle-host counts and the
// root's histogram and free counts. A Meter is not safe for concurrent use.
type Meter struct {
	t       *topology.Tree
	s       *topology.State
	podGPUs int
	seq     uint64
	valid   bool

	size    []int64   // per level: GPUs of each domain when all are equal, else 0
	gmax    [][]int32 // per named level, per child of the root: largest gang below it
	touched []topology.DomainID
	seen    []bool // per child of the root, during an update
}

// Measure writes s's metrics for pods of podGPUs whole GPUs (≥ 1) into dst,
// reusing dst.Levels. It does not change s.
func (m *Meter) Measure(s *topology.State, podGPUs int, dst *Metrics) {
	podGPUs = max(podGPUs, 1)
	t := s.Tree()
	if m.t != t {
		m.setTree(t)
	}
	m.update(s, podGPUs)
	hl := t.HostLevel()
	free := int64(s.Free(0))
	*dst = Metrics{PodGPUs: podGPUs, FreeGPUs: free, SharedMilli: s.SharedMilli(0), Levels: dst.Levels[:0]}
	root := LevelMetrics{Level: 0, Domains: 1, FreeGPUs: free, LargestGang: s.PodCapacity(0, podGPUs)}
	if s.DomainIdle(0) {
		root.FreeDomains, root.FreeInFreeDomains = 1, free
	}
	dst.Levels = append(dst.Levels, root)
	for l := topology.Level(1); l < hl; l++ {
		lo, hi := t.LevelDomains(l)
		lm := LevelMetrics{Level: l, Domains: int(hi - lo), FreeGPUs: free}
		idle := s.IdleDomains(l)
		lm.FreeDomains = int(idle.Count())
		if sz := m.size[l]; sz > 0 {
			lm.FreeInFreeDomains = int64(lm.FreeDomains) * sz
		} else {
			for i, ok := idle.NextSet(0); ok; i, ok = idle.NextSet(i + 1) {
				lm.FreeInFreeDomains += int64(t.DomainGPUs(lo + topology.DomainID(i)))
			}
		}
		for _, g := range m.gmax[l] {
			lm.LargestGang = max(lm.LargestGang, int(g))
		}
		dst.Levels = append(dst.Levels, lm)
	}
	dst.Levels = append(dst.Levels, m.hostLevel(s, podGPUs, free))
}

// hostLevel measures the host level: idle hosts from the root's count, the
// largest gang from the root's histograms.
func (m *Meter) hostLevel(s *topology.State, g int, free int64) LevelMetrics {
	t := s.Tree()
	lm := LevelMetrics{Level: t.HostLevel(), Domains: t.NumHosts(), FreeGPUs: free, FreeDomains: s.IdleHosts(0)}
	if sz := m.size[t.HostLevel()]; sz > 0 {
		lm.FreeInFreeDomains = int64(lm.FreeDomains) * sz
	} else {
		for w, word := range s.IdleHostWords() {
			for ; word != 0; word &= word - 1 {
				h := topology.HostID(w*64 + bits.TrailingZeros64(word))
				lm.FreeInFreeDomains += int64(t.HostGPUCount(h))
			}
		}
	}
	for model := range t.NumModels() {
		hist := s.Histogram(0, model)
		for k := len(hist) - 1; k >= g; k-- {
			if hist[k] > 0 {
				lm.LargestGang = max(lm.LargestGang, k/g)
				break
			}
		}
	}
	return lm
}

// setTree sizes the Meter for t.
func (m *Meter) setTree(t *topology.Tree) {
	m.t, m.s, m.valid = t, nil, false
	hl := t.HostLevel()
	m.size = make([]int64, hl+1)
	for l := topology.Level(1); l < hl; l++ {
		lo, hi := t.LevelDomains(l)
		m.size[l] = int64(t.DomainGPUs(lo))
		for d := lo + 1; d < hi; d++ {
			if int64(t.DomainGPUs(d)) != m.size[l] {
				m.size[l] = 0
				break
			}
		}
	}
	m.size[hl] = int64(t.HostGPUCount(0))
	for h := 1; h < t.NumHosts(); h++ {
		if int64(t.HostGPUCount(topology.HostID(h))) != m.size[hl] {
			m.size[hl] = 0
			break
		}
	}
	m.gmax = make([][]int32, hl)
	groups := 0
	if hl > 1 {
		lo, hi := t.LevelDomains(1)
		groups = int(hi - lo)
	}
	for l := topology.Level(1); l < hl; l++ {
		m.gmax[l] = make([]int32, groups)
	}
	m.seen = make([]bool, groups)
}

// update brings the largest-gang cache up to date with s.
func (m *Meter) update(s *topology.State, g int) {
	t := m.t
	if t.HostLevel() == 1 {
		return // no named level: nothing cached
	}
	lo, hi := t.LevelDomains(1)
	if m.valid && m.s == s && m.podGPUs == g {
		var ok bool
		m.touched, ok = s.Touched(m.seq, m.touched[:0])
		if ok {
			for _, d := range m.touched {
				if i := d - lo; !m.seen[i] {
					m.seen[i] = true
					m.group(s, d, g)
				}
			}
			for _, d := range m.touched {
				m.seen[d-lo] = false
			}
			m.seq = s.TouchSeq()
			return
		}
	}
	for d := lo; d < hi; d++ {
		m.group(s, d, g)
	}
	m.s, m.podGPUs, m.valid, m.seq = s, g, true, s.TouchSeq()
}

// group recomputes the largest gang of every named level below (and at)
// child d of the root.
func (m *Meter) group(s *topology.State, d topology.DomainID, g int) {
	t := m.t
	first, _ := t.LevelDomains(1)
	i := d - first
	for l := topology.Level(1); l < t.HostLevel(); l++ {
		lo, hi := t.Descendants(d, l)
		best := 0
		for e := lo; e < hi; e++ {
			if s.Free(e)/g > best {
				best = max(best, s.PodCapacity(e, g))
			}
		}
		m.gmax[l][i] = int32(best)
	}
}
