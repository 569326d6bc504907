package bench

import (
	"fmt"
	"math/bits"
	"math/rand/v2"

	"github.com/blinksched/blink/topology"
)

// The fill model's constants (see Fill).
const (
	maxPartialShare = 0.4  // largest share of last-level domains that is partly used
	partialMean     = 0.5  // mean load of a partly used domain
	partialMax      = 0.85 // no partly used domain is planned past this load
	maxFails        = 32   // consecutive failed small-job draws that end a partly used domain
)

// smallJobs are the single-pod jobs of partly used domains: GPUs per pod (0:
// a fractional pod of 250, 500 or 750 milli-GPU) and relative weight. Sizes
// larger than a host are left out and the rest renormalised.
var smallJobs = [...]struct {
	gpus   int
	weight int
}{{0, 5}, {1, 35}, {2, 25}, {4, 20}, {8, 15}}

// FillStats describes what Fill placed.
type FillStats struct {
	Jobs, Pods int // jobs added (ids 0…Jobs-1) and their pods
	// Last-level domains (racks for NVL72, SUs for HGX) by kind.
	Full, Partial, Free int
	// UsedGPUs are the healthy GPUs no longer free (a GPU that fractional pods
	// share counts as used); Load is UsedGPUs over the healthy GPUs.
	UsedGPUs int
	Load     float64
}

// Fill loads s, an empty State fresh from NewState, to about load (0…1) of its
// GPUs, deterministically for a seed, in O(GPUs). Jobs get ids 0, 1, 2, … and
// each is added by its own Delta (one AddJob) through s.Apply; no placement
// algorithm runs.
//
// The model: what a topology-aware scheduler leaves behind. Each domain of the
// last named level (a rack for NVL72, an SU for HGX) is one of three kinds:
//
//   - full: every GPU used by multi-host jobs, one pod per host holding all
//     its GPUs. A run of full domains under one parent is carved left to right
//     into jobs spanning 1, 2, 4 or 8 whole domains (Required: the parent
//     level when more than one, else the domain's level), or one domain split
//     into jobs of power-of-two host counts (an 18-host rack as 16+2, 8+8+2,
//     …; Required: the domain's level).
//   - partly used: single-pod jobs on random hosts until the domain reaches
//     its planned load — 1, 2, 4 or 8 whole GPUs (weights 35, 25, 20, 15; only
//     sizes that fit a host), placed on the host's first aligned free block
//     (else its lowest free GPUs), or a fractional pod (weight 5) of 250, 500
//     or 750 milli-GPU that joins a partly used GPU with room or takes a free
//     one. Planned loads are random (uniform weights 0.5…1.5 times the
//     mean), scaled so the domains together carry what the full domains
//     leave of the target, capped at 85%.
//   - free: untouched.
//
// Shares of domains: partly used p = min(0.4, load, 1-load), full
// load - p/2, the rest free (0.5 is the mean load of a partly used domain),
// so load 0.5 is 30% full, 40% partly used and 30% free racks, and load 0.9
// is 85% full, 10% partly used, 5% free. Kinds come in runs along the tree
// order, each run's kind drawn in proportion to the domains of each kind
// still to assign, its length uniform in 1…2m-1 where m, drawn for each run,
// is the number of last-level domains in one domain of a level above (for
// NVL72: 8 racks per SU or 128 per block; for HGX: 16 SUs per pod). Full,
// partly used and free racks cluster as a best-fit scheduler packs them, so
// entirely free SUs, blocks and pods remain at moderate load: on 1M NVL72
// GPUs with seed 1, load 0.25 leaves 34 of 109 blocks and 1,051 of 1,744 SUs
// entirely free, load 0.5 leaves 10 and 497, load 0.9 leaves 2 and 78.
//
// Every job draws one of 4 priority classes: 1 (40% of jobs), 10 (30%),
// 100 (20%) and 1000 (10%); classes 1 and 10 are preemptible, half of class
// 100, none of 1000 (80% of jobs in all). Single-pod jobs are movable,
// multi-host jobs are not. Each pod asks 3/4 of its host's CPU and memory per
// GPU for each whole GPU it holds (3/16 of one GPU's share when fractional),
// so CPU and memory never bind.
//
// Each partly used domain's overshoot (its last job may pass its target) is
// taken off the next one's target, so the achieved load is within a few GPUs
// of the target, or below it when partly used domains run out of room (small
// clusters, loads near 1): read FillStats.Load.
func Fill(s *topology.State, load float64, seed uint64) (FillStats, error) {
	if !(load >= 0 && load <= 1) {
		return FillStats{}, fmt.Errorf("bench: fill: load %v out of range 0…1", load)
	}
	t := s.Tree()
	if s.NumJobs() != 0 || s.NumNominations() != 0 || s.Free(0) != t.NumGPUs() {
		return FillStats{}, fmt.Errorf("bench: fill: the State is not empty and healthy")
	}
	f := &filler{
		s:     s,
		t:     t,
		rng:   rand.New(rand.NewPCG(seed, 0x626c696e6b)),
		last:  t.HostLevel() - 1,
		delta: topology.Delta{Ops: make([]topology.Op, 1)},
	}
	lo, hi := t.LevelDomains(f.last)
	n := int(hi - lo)
	budget := int(load*float64(t.NumGPUs()) + 0.5)
	kinds := f.kinds(n, load, budget)

	// Full domains, as runs under one parent; and the partial budget they leave.
	for i := 0; i < n; {
		if kinds[i] != kindFull {
			i++
			continue
		}
		j := i + 1
		for j < n && kinds[j] == kindFull && t.Parent(lo+topology.DomainID(j)) == t.Parent(lo+topology.DomainID(i)) {
			j++
		}
		if err := f.fullRun(lo+topology.DomainID(i), lo+topology.DomainID(j)); err != nil {
			return FillStats{}, err
		}
		budget -= f.gpus(lo+topology.DomainID(i), lo+topology.DomainID(j))
		i = j
	}
	if err := f.partials(lo, kinds, max(budget, 0)); err != nil {
		return FillStats{}, err
	}

	st := &f.stats
	for _, k := range kinds {
		switch k {
		case kindFull:
			st.Full++
		case kindPartial:
			st.Partial++
		default:
			st.Free++
		}
	}
	healthy := s.HealthyGPUs(0)
	st.UsedGPUs = healthy - s.Free(0)
	if healthy > 0 {
		st.Load = float64(st.UsedGPUs) / float64(healthy)
	}
	return *st, nil
}

const (
	kindFree uint8 = iota
	kindFull
	kindPartial
)

type filler struct {
	s     *topology.State
	t     *topology.Tree
	rng   *rand.Rand
	last  topology.Level // the last named level
	pods  []topology.Pod // the job being built
	delta topology.Delta // one AddJob, reused
	next  topology.JobID
	stats FillStats
}

// kinds assigns each last-level domain a kind, in runs (see Fill).
func (f *filler) kinds(n int, load float64, budget int) []uint8 {
	p := min(maxPartialShare, load, 1-load)
	nPartial := int(p*float64(n) + 0.5)
	nFull := min(int((load-partialMean*p)*float64(n)+0.5), n-nPartial)
	nFull = max(nFull, 0)
	// Small trees: add partly used domains until they can carry the rest.
	avg := float64(f.t.NumGPUs()) / float64(n)
	for float64(budget)-float64(nFull)*avg > partialMax*avg*float64(nPartial) && nFull+nPartial < n {
		nPartial++
	}
	scales := f.runScales(n)
	rem := [3]int{n - nFull - nPartial, nFull, nPartial} // by kind
	kinds := make([]uint8, n)
	for pos := 0; pos < n; {
		r := f.rng.IntN(rem[0] + rem[1] + rem[2])
		k := 0
		for r >= rem[k] {
			r -= rem[k]
			k++
		}
		scale := scales[f.rng.IntN(len(scales))]
		m := min(1+f.rng.IntN(2*scale-1), rem[k])
		for range m {
			kinds[pos] = uint8(k)
			pos++
		}
		rem[k] -= m
	}
	return kinds
}

// runScales returns the mean run lengths of kinds: for each named level above
// the last, the number of last-level domains in one of its domains (8 racks
// per SU and 128 per block for NVL72, 16 SUs per pod for HGX); 8 when the
// last level is the only one.
func (f *filler) runScales(n int) []int {
	t := f.t
	first, _ := t.LevelDomains(f.last)
	var scales []int
	for a := t.Parent(first); a >= 0 && t.DomainLevel(a) >= 1; a = t.Parent(a) {
		lo, hi := a, a+1
		for l := t.DomainLevel(a); l < f.last; l++ {
			lo, _ = t.Children(lo)
			_, hi = t.Children(hi - 1)
		}
		scales = append(scales, int(hi-lo))
	}
	if len(scales) == 0 {
		scales = append(scales, min(8, n))
	}
	return scales
}

// gpus counts the GPUs of domains [d0, d1) of the last level.
func (f *filler) gpus(d0, d1 topology.DomainID) int {
	lo, _ := f.t.GPUs(d0)
	_, hi := f.t.GPUs(d1 - 1)
	return int(hi - lo)
}

// fullRun fills domains [d0, d1) (last level, one parent) with multi-host jobs.
func (f *filler) fullRun(d0, d1 topology.DomainID) error {
	for d := d0; d < d1; {
		m := topology.DomainID(1)
		if f.rng.IntN(2) == 0 {
			m = min(d1-d, topology.DomainID(1)<<f.rng.IntN(4))
		}
		var err error
		switch {
		case m > 1:
			h0, _ := f.t.Hosts(d)
			_, h1 := f.t.Hosts(d + m - 1)
			err = f.hostsJob(h0, h1, f.last-1)
		case f.rng.IntN(2) == 0:
			err = f.splitDomain(d)
		default:
			h0, h1 := f.t.Hosts(d)
			err = f.hostsJob(h0, h1, f.last)
		}
		if err != nil {
			return err
		}
		d += m
	}
	return nil
}

// splitDomain fills domain d with jobs of power-of-two host counts.
func (f *filler) splitDomain(d topology.DomainID) error {
	h, end := f.t.Hosts(d)
	for h < end {
		c := topology.HostID(1) << (bits.Len(uint(end-h)) - 1)
		if c > 1 && f.rng.IntN(2) == 0 {
			c /= 2
		}
		if err := f.hostsJob(h, h+c, f.last); err != nil {
			return err
		}
		h += c
	}
	return nil
}

// hostsJob adds one job holding every GPU of hosts [h0, h1).
func (f *filler) hostsJob(h0, h1 topology.HostID, required topology.Level) error {
	for h := h0; h < h1; h++ {
		n := f.t.HostGPUCount(h)
		if n == 0 {
			continue
		}
		cpu, mem := f.share(h, 4*n)
		f.pods = append(f.pods, topology.Pod{Host: h, GPUs: 1<<n - 1, CPUMilli: cpu, MemoryMiB: mem})
	}
	if len(f.pods) == 0 {
		return nil
	}
	prio, pre := f.class()
	return f.add(topology.Job{Priority: prio, Preemptible: pre, Required: required, Preferred: topology.NoLevel})
}

// partials fills the partly used domains so they carry budget GPUs in all.
func (f *filler) partials(lo topology.DomainID, kinds []uint8, budget int) error {
	weights := make([]float64, len(kinds))
	total := 0.0
	for i, k := range kinds {
		if k == kindPartial {
			d := lo + topology.DomainID(i)
			weights[i] = (0.5 + f.rng.Float64()) * float64(f.t.DomainGPUs(d))
			total += weights[i]
		}
	}
	carry := 0 // planned minus used so far: overshoot lowers the next target
	for i, k := range kinds {
		if k != kindPartial {
			continue
		}
		d := lo + topology.DomainID(i)
		plan := int(float64(budget)*weights[i]/total + 0.5)
		target := min(max(plan+carry, 0), int(partialMax*float64(f.t.DomainGPUs(d))))
		used, err := f.partial(d, target)
		if err != nil {
			return err
		}
		carry += plan - used
	}
	return nil
}

// partial adds single-pod jobs on random hosts of d until target GPUs are
// used, and returns the GPUs it used.
func (f *filler) partial(d topology.DomainID, target int) (int, error) {
	h0, h1 := f.t.Hosts(d)
	used := 0
	for fails := 0; used < target && fails < maxFails; {
		h := h0 + topology.HostID(f.rng.IntN(int(h1-h0)))
		n := f.t.HostGPUCount(h)
		pod, fresh, ok := f.smallPod(h, f.smallSize(n))
		if !ok {
			fails++
			continue
		}
		fails = 0
		f.pods = append(f.pods, pod)
		prio, pre := f.class()
		job := topology.Job{Priority: prio, Preemptible: pre, Movable: true,
			Required: topology.NoLevel, Preferred: topology.NoLevel}
		if err := f.add(job); err != nil {
			return 0, err
		}
		used += fresh
	}
	return used, nil
}

// smallSize draws a small job's GPUs (0: fractional) among the sizes that fit
// a host of n GPUs.
func (f *filler) smallSize(n int) int {
	total := 0
	for _, j := range smallJobs {
		if j.gpus <= n {
			total += j.weight
		}
	}
	if total == 0 {
		return 0
	}
	r := f.rng.IntN(total)
	for _, j := range smallJobs {
		if j.gpus <= n {
			if r < j.weight {
				return j.gpus
			}
			r -= j.weight
		}
	}
	return 0
}

// smallPod makes a pod of k whole GPUs (k = 0: fractional) on host h, and
// returns how many GPUs it takes that were free.
func (f *filler) smallPod(h topology.HostID, k int) (topology.Pod, int, bool) {
	n := f.t.HostGPUCount(h)
	if n == 0 {
		return topology.Pod{}, 0, false
	}
	free := f.s.HostFreeMask(h)
	if k == 0 {
		milli := int32(250 * (1 + f.rng.IntN(3)))
		cpu, mem := f.share(h, 1)
		if cpu > f.s.HostCPU(h) || mem > f.s.HostMemory(h) {
			return topology.Pod{}, 0, false
		}
		lo, _ := f.t.HostGPUs(h)
		for i := range n {
			if m := int32(f.s.GPUMilli(lo + topology.GPUID(i))); m < topology.FullGPU && m >= milli &&
				f.s.HostNominatedMask(h)&(1<<i) == 0 && !f.s.GPUFailed(lo+topology.GPUID(i)) {
				return topology.Pod{Host: h, GPUs: 1 << i, Milli: milli, CPUMilli: cpu, MemoryMiB: mem}, 0, true
			}
		}
		if free == 0 {
			return topology.Pod{}, 0, false
		}
		return topology.Pod{Host: h, GPUs: free & -free, Milli: milli, CPUMilli: cpu, MemoryMiB: mem}, 1, true
	}
	if bits.OnesCount64(free) < k {
		return topology.Pod{}, 0, false
	}
	cpu, mem := f.share(h, 4*k)
	if cpu > f.s.HostCPU(h) || mem > f.s.HostMemory(h) {
		return topology.Pod{}, 0, false
	}
	block := uint64(1)<<k - 1
	for i := 0; i+k <= n; i += k {
		if free&(block<<i) == block<<i {
			return topology.Pod{Host: h, GPUs: block << i, CPUMilli: cpu, MemoryMiB: mem}, k, true
		}
	}
	var m uint64
	for range k {
		m |= free & -free
		free &= free - 1
	}
	return topology.Pod{Host: h, GPUs: m, CPUMilli: cpu, MemoryMiB: mem}, k, true
}

// share is 3/4 of host h's CPU and memory per GPU, times quarters/4 (0 where
// the host declares no limit).
func (f *filler) share(h topology.HostID, quarters int) (cpu, mem int32) {
	n := int64(f.t.HostGPUCount(h))
	part := func(v int32) int32 {
		if v == topology.Unlimited || n == 0 {
			return 0
		}
		return int32(int64(v) * 3 * int64(quarters) / (16 * n))
	}
	return part(f.t.HostCPU(h)), part(f.t.HostMemory(h))
}

// class draws a job's priority class and preemptible flag (see Fill).
func (f *filler) class() (int32, bool) {
	switch x := f.rng.IntN(20); {
	case x < 8:
		return 1, true
	case x < 14:
		return 10, true
	case x < 18:
		return 100, x < 16
	default:
		return 1000, false
	}
}

// add applies one Delta adding the pods built so far as job f.next.
func (f *filler) add(info topology.Job) error {
	f.delta.Ops[0] = topology.AddJob(f.next, info, f.pods...)
	if err := f.s.Apply(f.delta); err != nil {
		return fmt.Errorf("bench: fill: job %d: %w", f.next, err)
	}
	f.next++
	f.stats.Jobs++
	f.stats.Pods += len(f.pods)
	f.pods = f.pods[:0]
	return nil
}
