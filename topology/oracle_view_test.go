package topology

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// oracleView is everything the State's read API exposes, recomputed from
// the model's primary data from scratch with plain loops.
type oracleView struct {
	// per GPU
	milli   []int
	holders [][]JobID // ascending, distinct
	nominee []JobID   // -1 none
	free    []bool
	nFree   int

	// per host
	hostFree   []int
	hostMask   []uint64 // free GPUs, bit i = the host's GPU i
	hostUnused []uint64
	hostNom    []uint64
	hostFailed []uint64
	hostExcl   []JobID // -1 none
	hostIdle   []bool
	hostCPU    []int64
	hostMem    []int64
	hostPods   [][]HostPod       // ordered by (job, rank)
	hostPre    [][]oraclePreHold // preemptible holdings
	hostJobs   [][]JobID         // distinct, ascending

	// per domain
	domHosts  [][]HostID
	domFree   []int
	domCap    []int
	domIdle   []int
	domModel  [][]int   // [d][model]
	domHist   [][][]int // [d][model][free]
	domShared []int64
	domPart   [][PartialBuckets]int32
}

// oraclePreHold: GPUs held by a preemptible job of priority prio.
type oraclePreHold struct {
	prio int32
	gpus int
}

func (m *oracleModel) view() *oracleView {
	t := m.t
	G, H, D := t.NumGPUs(), t.NumHosts(), t.NumDomains()
	v := &oracleView{
		milli: make([]int, G), holders: make([][]JobID, G), nominee: make([]JobID, G), free: make([]bool, G),
		hostFree: make([]int, H), hostMask: make([]uint64, H), hostUnused: make([]uint64, H),
		hostNom: make([]uint64, H), hostFailed: make([]uint64, H), hostExcl: make([]JobID, H),
		hostIdle: make([]bool, H), hostCPU: make([]int64, H), hostMem: make([]int64, H),
		hostPods: make([][]HostPod, H), hostPre: make([][]oraclePreHold, H), hostJobs: make([][]JobID, H),
		domHosts: make([][]HostID, D), domFree: make([]int, D), domCap: make([]int, D), domIdle: make([]int, D),
		domModel: make([][]int, D), domHist: make([][][]int, D), domShared: make([]int64, D), domPart: make([][PartialBuckets]int32, D),
	}
	for g := range G {
		v.milli[g] = FullGPU
		v.nominee[g] = -1
	}
	for h := range H {
		v.hostExcl[h] = -1
		v.hostCPU[h] = int64(t.HostCPU(HostID(h)))
		v.hostMem[h] = int64(t.HostMemory(HostID(h)))
	}
	for _, id := range m.jobIDs() { // ascending: host lists come out ordered
		j := m.jobs[id]
		for rank, p := range j.pods {
			h := p.Host
			lo, _ := t.HostGPUs(h)
			v.hostPods[h] = append(v.hostPods[h], HostPod{Job: id, Rank: int32(rank), Pod: p})
			if js := v.hostJobs[h]; len(js) == 0 || js[len(js)-1] != id {
				v.hostJobs[h] = append(js, id)
			}
			v.hostCPU[h] -= int64(p.CPUMilli)
			v.hostMem[h] -= int64(p.MemoryMiB)
			gpus := oracleBits(p.GPUs)
			for _, i := range gpus {
				g := lo + GPUID(i)
				if p.Milli == 0 {
					v.milli[g] -= FullGPU
				} else {
					v.milli[g] -= int(p.Milli)
				}
				if hs := v.holders[g]; len(hs) == 0 || hs[len(hs)-1] != id {
					v.holders[g] = append(hs, id)
				}
			}
			switch {
			case j.info.Exclusive:
				if v.hostExcl[h] == -1 && j.info.Preemptible {
					v.hostPre[h] = append(v.hostPre[h], oraclePreHold{j.info.Priority, t.HostGPUCount(h)})
				}
				v.hostExcl[h] = id
			case j.info.Preemptible:
				v.hostPre[h] = append(v.hostPre[h], oraclePreHold{j.info.Priority, len(gpus)})
			}
		}
	}
	for _, id := range m.nomIDs() {
		for _, g := range m.noms[id].GPUs {
			v.nominee[g] = id
		}
	}
	m.viewHosts(v)
	m.viewDomains(v)
	return v
}

func (m *oracleModel) viewHosts(v *oracleView) {
	t := m.t
	for hi := range t.NumHosts() {
		h := HostID(hi)
		lo, hiG := t.HostGPUs(h)
		healthy := m.health[h] == Healthy
		for g := lo; g < hiG; g++ {
			bit := uint64(1) << uint(g-lo)
			if m.failed[g] {
				v.hostFailed[h] |= bit
			}
			if v.milli[g] == FullGPU {
				v.hostUnused[h] |= bit
			}
			if v.nominee[g] >= 0 {
				v.hostNom[h] |= bit
			}
			if v.milli[g] == FullGPU && !m.failed[g] && v.nominee[g] < 0 && healthy && v.hostExcl[h] < 0 {
				v.free[g] = true
				v.nFree++
				v.hostFree[h]++
				v.hostMask[h] |= bit
			}
		}
		v.hostIdle[h] = healthy && v.hostExcl[h] < 0 && len(v.hostPods[h]) == 0 && v.hostFree[h] == int(hiG-lo)
	}
}

func (m *oracleModel) viewDomains(v *oracleView) {
	t := m.t
	nm, nb := t.NumModels(), 1
	for h := range t.NumHosts() {
		nb = max(nb, t.HostGPUCount(HostID(h))+1)
	}
	for d := range t.NumDomains() {
		v.domModel[d] = make([]int, nm)
		v.domHist[d] = make([][]int, nm)
		for k := range nm {
			v.domHist[d][k] = make([]int, nb)
		}
	}
	for hi := range t.NumHosts() {
		h := HostID(hi)
		lo, hiG := t.HostGPUs(h)
		healthy := m.health[h] == Healthy
		cap, shared := 0, int64(0)
		var part [PartialBuckets]int32
		for g := lo; g < hiG; g++ {
			if healthy && !m.failed[g] {
				cap++
				if v.hostExcl[h] < 0 && v.nominee[g] < 0 && v.milli[g] > 0 && v.milli[g] < FullGPU {
					shared += int64(v.milli[g])
					part[v.milli[g]*PartialBuckets/FullGPU]++
				}
			}
		}
		model := t.HostModel(h)
		for d := t.HostParent(h); d >= 0; d = t.Parent(d) {
			v.domHosts[d] = append(v.domHosts[d], h)
			v.domFree[d] += v.hostFree[h]
			v.domCap[d] += cap
			if v.hostIdle[h] {
				v.domIdle[d]++
			}
			v.domModel[d][model] += v.hostFree[h]
			v.domHist[d][model][v.hostFree[h]]++
			v.domShared[d] += shared
			for b := range part {
				v.domPart[d][b] += part[b]
			}
		}
	}
}

// oracleSameHost reports whether host h looks the same in two views (what a
// generation must witness).
func oracleSameHost(a, b *oracleView, ma, mb *oracleModel, h HostID) bool {
	if ma.health[h] != mb.health[h] || a.hostExcl[h] != b.hostExcl[h] || a.hostCPU[h] != b.hostCPU[h] ||
		a.hostMem[h] != b.hostMem[h] || !slices.Equal(a.hostPods[h], b.hostPods[h]) {
		return false
	}
	lo, hi := ma.t.HostGPUs(h)
	for g := lo; g < hi; g++ {
		if ma.failed[g] != mb.failed[g] || a.nominee[g] != b.nominee[g] || a.milli[g] != b.milli[g] {
			return false
		}
	}
	return true
}

// oracleBucket groups priorities as PreemptibleBelow documents: negative
// priorities together, then one group per power-of-two band [2^k, 2^(k+1)),
// 0 on its own.
func oracleBucket(p int32) int {
	if p < 0 {
		return 0
	}
	n := 1
	for v := int64(p); v > 0; v /= 2 {
		n++
	}
	return n
}

// oracleQueryPrios are the priorities PreemptibleBelow is asked about.
var oracleQueryPrios = []int32{math.MinInt32, -5, -1, 0, 1, 2, 3, 4, 5, 8, 17, 100, 1 << 20, math.MaxInt32}

// oracleCompare compares every query of s with the view and returns the
// first difference; r picks the domain whose PodCapacity is probed for every
// pod size.
func oracleCompare(s *State, m *oracleModel, v *oracleView, r func(int) int) error {
	if err := oracleCompareGPUs(s, v); err != nil {
		return err
	}
	if err := oracleCompareHosts(s, m, v); err != nil {
		return err
	}
	if err := oracleCompareDomains(s, m, v, r); err != nil {
		return err
	}
	return oracleCompareJobs(s, m)
}

func oracleCompareGPUs(s *State, v *oracleView) error {
	fm, fw := s.FreeMask(), s.FreeWords()
	var buf []JobID
	for gi := range v.milli {
		g := GPUID(gi)
		if got := fm.Test(uint(g)); got != v.free[g] {
			return fmt.Errorf("FreeMask bit %d = %v, oracle %v", g, got, v.free[g])
		}
		if got := fw[gi/64]>>uint(gi%64)&1 == 1; got != v.free[g] {
			return fmt.Errorf("FreeWords bit %d = %v, oracle %v", g, got, v.free[g])
		}
		if got := s.GPUFree(g); got != v.free[g] {
			return fmt.Errorf("GPUFree(%d) = %v, oracle %v", g, got, v.free[g])
		}
		if got := s.GPUMilli(g); got != v.milli[g] {
			return fmt.Errorf("GPUMilli(%d) = %d, oracle %d", g, got, v.milli[g])
		}
		j, ok := s.GPUNominee(g)
		if want := v.nominee[g]; ok != (want >= 0) || ok && j != want {
			return fmt.Errorf("GPUNominee(%d) = %d, %v, oracle %d", g, j, ok, want)
		}
		buf = s.GPUHolders(buf[:0], g)
		if !slices.Equal(buf, v.holders[g]) {
			return fmt.Errorf("GPUHolders(%d) = %v, oracle %v", g, buf, v.holders[g])
		}
	}
	if got := int(fm.Count()); got != v.nFree {
		return fmt.Errorf("FreeMask.Count() = %d, oracle %d", got, v.nFree)
	}
	return nil
}

func oracleCompareHosts(s *State, m *oracleModel, v *oracleView) error {
	t := s.Tree()
	var pods []HostPod
	var jobs []JobID
	var jg []JobGPUs
	idleW := s.IdleHostWords()
	for hi := range t.NumHosts() {
		h := HostID(hi)
		lo, hiG := t.HostGPUs(h)
		for g := lo; g < hiG; g++ {
			if got, want := s.GPUFailed(g), m.failed[g]; got != want {
				return fmt.Errorf("GPUFailed(%d) = %v, oracle %v", g, got, want)
			}
		}
		switch {
		case s.HostFree(h) != v.hostFree[h]:
			return fmt.Errorf("HostFree(%d) = %d, oracle %d", h, s.HostFree(h), v.hostFree[h])
		case s.HostFreeMask(h) != v.hostMask[h]:
			return fmt.Errorf("HostFreeMask(%d) = %#x, oracle %#x", h, s.HostFreeMask(h), v.hostMask[h])
		case s.HostUnusedMask(h) != v.hostUnused[h]:
			return fmt.Errorf("HostUnusedMask(%d) = %#x, oracle %#x", h, s.HostUnusedMask(h), v.hostUnused[h])
		case s.HostNominatedMask(h) != v.hostNom[h]:
			return fmt.Errorf("HostNominatedMask(%d) = %#x, oracle %#x", h, s.HostNominatedMask(h), v.hostNom[h])
		case s.HostFailedMask(h) != v.hostFailed[h]:
			return fmt.Errorf("HostFailedMask(%d) = %#x, oracle %#x", h, s.HostFailedMask(h), v.hostFailed[h])
		case s.HostHealth(h) != m.health[h]:
			return fmt.Errorf("HostHealth(%d) = %s, oracle %s", h, s.HostHealth(h), m.health[h])
		case s.HostHealthyGPUs(h) != oracleHealthyGPUs(s.Tree(), h, m.health[h], v.hostFailed[h]):
			return fmt.Errorf("HostHealthyGPUs(%d) = %d, oracle %d", h, s.HostHealthyGPUs(h),
				oracleHealthyGPUs(s.Tree(), h, m.health[h], v.hostFailed[h]))
		case s.HostIdle(h) != v.hostIdle[h]:
			return fmt.Errorf("HostIdle(%d) = %v, oracle %v", h, s.HostIdle(h), v.hostIdle[h])
		case (idleW[hi/64]>>uint(hi%64)&1 == 1) != v.hostIdle[h]:
			return fmt.Errorf("IdleHostWords bit %d disagrees with oracle %v", h, v.hostIdle[h])
		case int64(s.HostCPU(h)) != v.hostCPU[h]:
			return fmt.Errorf("HostCPU(%d) = %d, oracle %d", h, s.HostCPU(h), v.hostCPU[h])
		case int64(s.HostMemory(h)) != v.hostMem[h]:
			return fmt.Errorf("HostMemory(%d) = %d, oracle %d", h, s.HostMemory(h), v.hostMem[h])
		}
		j, ok := s.HostExclusive(h)
		if want := v.hostExcl[h]; ok != (want >= 0) || ok && j != want {
			return fmt.Errorf("HostExclusive(%d) = %d, %v, oracle %d", h, j, ok, want)
		}
		pods = s.AppendHostPods(pods[:0], h)
		if !slices.Equal(pods, v.hostPods[h]) {
			return fmt.Errorf("AppendHostPods(%d) = %+v, oracle %+v", h, pods, v.hostPods[h])
		}
		jg = s.AppendHostJobGPUs(jg[:0], h)
		if len(jg) != len(pods) {
			return fmt.Errorf("AppendHostJobGPUs(%d) = %+v, oracle %+v", h, jg, pods)
		}
		for i := range jg {
			if jg[i].Job != pods[i].Job || jg[i].GPUs != pods[i].GPUs {
				return fmt.Errorf("AppendHostJobGPUs(%d) = %+v, oracle %+v", h, jg, pods)
			}
		}
		if err := checkSolePodRun(s, v, h); err != nil {
			return err
		}
		jobs = s.AppendHostJobs(jobs[:0], h)
		if !slices.Equal(jobs, v.hostJobs[h]) {
			return fmt.Errorf("AppendHostJobs(%d) = %v, oracle %v", h, jobs, v.hostJobs[h])
		}
	}
	for i, w := range idleW { // no stray bits past the last host
		for b := range 64 {
			if w>>uint(b)&1 == 1 && i*64+b >= t.NumHosts() {
				return fmt.Errorf("IdleHostWords: stray bit %d", i*64+b)
			}
		}
	}
	return nil
}

func oracleCompareDomains(s *State, m *oracleModel, v *oracleView, r func(int) int) error {
	t := s.Tree()
	nm := t.NumModels()
	probe := r(t.NumDomains()) // the domain whose PodCapacity is checked for every g
	for di := range t.NumDomains() {
		d := DomainID(di)
		nominated := false
		for _, h := range v.domHosts[d] {
			nominated = nominated || v.hostNom[h] != 0
		}
		switch {
		case s.NominatedIn(d) != nominated:
			return fmt.Errorf("NominatedIn(%d) = %v, oracle %v", d, s.NominatedIn(d), nominated)
		case s.Free(d) != v.domFree[d]:
			return fmt.Errorf("Free(%d) = %d, oracle %d", d, s.Free(d), v.domFree[d])
		case s.HealthyGPUs(d) != v.domCap[d]:
			return fmt.Errorf("HealthyGPUs(%d) = %d, oracle %d", d, s.HealthyGPUs(d), v.domCap[d])
		case s.IdleHosts(d) != v.domIdle[d]:
			return fmt.Errorf("IdleHosts(%d) = %d, oracle %d", d, s.IdleHosts(d), v.domIdle[d])
		case s.DomainIdle(d) != (v.domIdle[d] == len(v.domHosts[d])):
			return fmt.Errorf("DomainIdle(%d) = %v, oracle %d of %d hosts idle", d, s.DomainIdle(d), v.domIdle[d], len(v.domHosts[d]))
		case s.SharedMilli(d) != v.domShared[d]:
			return fmt.Errorf("SharedMilli(%d) = %d, oracle %d", d, s.SharedMilli(d), v.domShared[d])
		case s.PartialGPUs(d) != v.domPart[d]:
			return fmt.Errorf("PartialGPUs(%d) = %v, oracle %v", d, s.PartialGPUs(d), v.domPart[d])
		}
		for k := range nm {
			if got := s.FreeOfModel(d, k); got != v.domModel[d][k] {
				return fmt.Errorf("FreeOfModel(%d, %d) = %d, oracle %d", d, k, got, v.domModel[d][k])
			}
			got := s.Histogram(d, k)
			if len(got) != len(v.domHist[d][k]) {
				return fmt.Errorf("Histogram(%d, %d) has %d buckets, oracle %d", d, k, len(got), len(v.domHist[d][k]))
			}
			for i := range got {
				if int(got[i]) != v.domHist[d][k][i] {
					return fmt.Errorf("Histogram(%d, %d) = %v, oracle %v", d, k, got, v.domHist[d][k])
				}
			}
		}
		gs := []int{1, 2, 4, 8}
		if di == probe {
			gs = gs[:0]
			for g := -1; g <= t.MaxHostGPUs()+1; g++ {
				gs = append(gs, g)
			}
		}
		for _, g := range gs {
			want := 0
			for _, h := range v.domHosts[d] {
				if g >= 1 {
					want += v.hostFree[h] / g
				}
			}
			if got := s.PodCapacity(d, g); got != want {
				return fmt.Errorf("PodCapacity(%d, %d) = %d, oracle %d", d, g, got, want)
			}
		}
		if err := oracleComparePreemptible(s, v, d); err != nil {
			return err
		}
	}
	for l := Level(0); int(l) < t.Levels(); l++ {
		lo, hi := t.LevelDomains(l)
		bs := s.IdleDomains(l)
		n := 0
		for d := lo; d < hi; d++ {
			want := v.domIdle[d] == len(v.domHosts[d])
			if want {
				n++
			}
			if got := bs.Test(uint(d - lo)); got != want {
				return fmt.Errorf("IdleDomains(%d) bit %d (domain %d) = %v, oracle %v", l, d-lo, d, got, want)
			}
		}
		if int(bs.Count()) != n {
			return fmt.Errorf("IdleDomains(%d).Count() = %d, oracle %d", l, bs.Count(), n)
		}
	}
	return nil
}

// oracleComparePreemptible checks PreemptibleBelow: lo ≤ true ≤ hi, and both
// bounds exactly as the priority groups make them.
func oracleComparePreemptible(s *State, v *oracleView, d DomainID) error {
	for _, p := range oracleQueryPrios {
		truth, wantLo, wantHi := 0, 0, 0
		for _, h := range v.domHosts[d] {
			for _, hold := range v.hostPre[h] {
				if hold.prio < p {
					truth += hold.gpus
				}
				if b, bp := oracleBucket(hold.prio), oracleBucket(p); b < bp {
					wantLo += hold.gpus
					wantHi += hold.gpus
				} else if b == bp {
					wantHi += hold.gpus
				}
			}
		}
		lo, hi := s.PreemptibleBelow(d, p)
		if lo > truth || hi < truth || lo != wantLo || hi != wantHi {
			return fmt.Errorf("PreemptibleBelow(%d, %d) = %d, %d; oracle: %d held below, bounds %d, %d",
				d, p, lo, hi, truth, wantLo, wantHi)
		}
	}
	return nil
}

func oracleCompareJobs(s *State, m *oracleModel) error {
	if s.NumJobs() != len(m.jobs) {
		return fmt.Errorf("NumJobs() = %d, oracle %d", s.NumJobs(), len(m.jobs))
	}
	if s.NumNominations() != len(m.noms) {
		return fmt.Errorf("NumNominations() = %d, oracle %d", s.NumNominations(), len(m.noms))
	}
	if s.JobIDBound() != m.bound {
		return fmt.Errorf("JobIDBound() = %d, oracle %d", s.JobIDBound(), m.bound)
	}
	if err := oracleCompareJobsPods(s, m); err != nil {
		return err
	}
	nPods := 0
	var pods []Pod
	for id := JobID(-1); id <= m.bound; id++ {
		j := m.jobs[id]
		info, ok := s.JobInfo(id)
		if ok != (j != nil) || s.HasJob(id) != ok {
			return fmt.Errorf("JobInfo(%d) present = %v, HasJob %v, oracle %v", id, ok, s.HasJob(id), j != nil)
		}
		pods = s.AppendJobPods(pods[:0], id)
		if j != nil {
			nPods += len(j.pods)
			if !oracleSameJob(info, j.info) {
				return fmt.Errorf("JobInfo(%d) = %+v, oracle %+v", id, info, j.info)
			}
			if !slices.Equal(pods, j.pods) || s.JobPodCount(id) != len(j.pods) {
				return fmt.Errorf("AppendJobPods(%d) = %+v (count %d), oracle %+v", id, pods, s.JobPodCount(id), j.pods)
			}
			var milli int64
			for _, p := range j.pods {
				if p.Milli > 0 {
					milli += int64(p.Milli)
				} else {
					milli += int64(len(oracleBits(p.GPUs))) * FullGPU
				}
			}
			if got := s.JobMilliGPU(id); got != milli {
				return fmt.Errorf("JobMilliGPU(%d) = %d, oracle %d", id, got, milli)
			}
		} else if len(pods) != 0 || s.JobPodCount(id) != 0 || s.JobMilliGPU(id) != 0 {
			return fmt.Errorf("absent job %d has pods %+v", id, pods)
		}
		n, ok := s.NominationOf(id)
		want := m.noms[id]
		if ok != (want != nil) || ok && (n.Job != want.Job || n.Priority != want.Priority ||
			n.Ready != want.Ready || n.Expiry != want.Expiry || !slices.Equal(n.GPUs, want.GPUs)) {
			return fmt.Errorf("NominationOf(%d) = %+v, %v, oracle %+v", id, n, ok, want)
		}
	}
	if s.NumPods() != nPods {
		return fmt.Errorf("NumPods() = %d, oracle %d", s.NumPods(), nPods)
	}
	if got, want := s.AppendNominees(nil), m.nomIDs(); !slices.Equal(got, want) {
		return fmt.Errorf("AppendNominees = %v, oracle %v", got, want)
	}
	return oracleCompareJobView(s, m)
}

func oracleSameJob(a, b Job) bool {
	return a.Priority == b.Priority && a.Preemptible == b.Preemptible && a.Movable == b.Movable &&
		a.Exclusive == b.Exclusive && a.HasEnd == b.HasEnd && a.End == b.End &&
		a.Required == b.Required && a.Preferred == b.Preferred && slices.Equal(a.Sets, b.Sets)
}

// oracleHealthyGPUs: a healthy host's GPUs that have not failed, else 0.
func oracleHealthyGPUs(t *Tree, h HostID, health Health, failed uint64) int {
	if health != Healthy {
		return 0
	}
	return t.HostGPUCount(h) - bits.OnesCount64(failed)
}

// oracleCompareJobsPods checks AppendJobsPods on every id from -1 to the
// bound, backwards and with each id twice (absent ones included), against
// the oracle's pods, job after job.
func oracleCompareJobsPods(s *State, m *oracleModel) error {
	var ids []JobID
	for id := m.bound; id >= -1; id-- {
		ids = append(ids, id, id)
	}
	starts := make([]int32, len(ids))
	pods := s.AppendJobsPods([]Pod{{Host: -7}}, ids, starts) // after what dst holds
	at := 1
	for i, id := range ids {
		var want []Pod
		if j := m.jobs[id]; j != nil {
			want = j.pods
		}
		if int(starts[i]) != at || at+len(want) > len(pods) || !slices.Equal(pods[at:at+len(want)], want) {
			return fmt.Errorf("AppendJobsPods: job %d (entry %d) starts at %d, want %d with pods %+v", id, i, starts[i], at, want)
		}
		at += len(want)
	}
	if at != len(pods) || pods[0].Host != -7 {
		return fmt.Errorf("AppendJobsPods: %d pods, want %d after the first", len(pods), at)
	}
	return nil
}

// checkSolePodRun checks SolePodRun from host h (to the last host, and to
// the next one) against the oracle's pods per host.
func checkSolePodRun(s *State, v *oracleView, h HostID) error {
	H := HostID(s.Tree().NumHosts())
	for _, hi := range []HostID{H, min(h+1, H)} {
		want := h
		if pods := v.hostPods[h]; len(pods) == 1 {
			for want = h + 1; want < hi; want++ {
				if q := v.hostPods[want]; len(q) != 1 || q[0].Job != pods[0].Job || q[0].GPUs != pods[0].GPUs {
					break
				}
			}
		}
		j, gpus, end := s.SolePodRun(h, hi)
		if end != want || end > h && (j != v.hostPods[h][0].Job || gpus != v.hostPods[h][0].GPUs) {
			return fmt.Errorf("SolePodRun(%d, %d) = %d, %#x, %d, oracle end %d, pods %+v", h, hi, j, gpus, end, want, v.hostPods[h])
		}
	}
	return nil
}
