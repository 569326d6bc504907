package topology

import (
	"fmt"
	"math/bits"
	"slices"
)

// Check verifies the State's invariants: it recomputes GPU, CPU and memory use
// from the pods, nominations from their records, and every aggregate from
// scratch, and reports the first difference. Tests call it after every step.
// O(GPUs + hosts·levels + pods); allocates.
func (s *State) Check() error {
	if err := s.checkJobs(); err != nil {
		return err
	}
	if err := s.checkMovable(); err != nil {
		return err
	}
	if err := s.checkPreSize(); err != nil {
		return err
	}
	if err := s.checkPreIndex(); err != nil {
		return err
	}
	if err := s.checkEnds(); err != nil {
		return err
	}
	if err := s.checkJobView(); err != nil {
		return err
	}
	if err := s.checkHosts(); err != nil {
		return err
	}
	if err := s.checkUsage(); err != nil {
		return err
	}
	if err := s.checkNominations(); err != nil {
		return err
	}
	return s.checkDerived()
}

func (s *State) checkJobs() error {
	live, pods := 0, 0
	for j := range s.jobs {
		r := &s.jobs[j]
		if !r.live {
			if r.first != -1 || r.n != 0 {
				return fmt.Errorf("check: absent job %d has pods", j)
			}
			continue
		}
		live++
		n, last := int32(0), int32(-1)
		for p := r.first; p >= 0; p = s.pods[p].jnext {
			if n > s.nPods || s.pods[p].job != JobID(j) || s.pods[p].rank != n {
				return fmt.Errorf("check: job %d: pod list broken at rank %d", j, n)
			}
			n, last = n+1, p
		}
		if n != r.n || last != r.last || n == 0 {
			return fmt.Errorf("check: job %d: %d pods listed, record says %d", j, n, r.n)
		}
		if len(r.info.Sets) > 0 {
			sum := int32(0)
			for _, set := range r.info.Sets {
				sum += set.Count
			}
			if sum != n {
				return fmt.Errorf("check: job %d: pod sets count %d pods, job has %d", j, sum, n)
			}
		}
		pods += int(n)
	}
	if live != int(s.nJobs) || pods != int(s.nPods) {
		return fmt.Errorf("check: %d jobs and %d pods, counters say %d and %d", live, pods, s.nJobs, s.nPods)
	}
	free := 0
	for p := s.podFree; p >= 0; p = s.pods[p].jnext {
		if free++; free > len(s.pods) || s.pods[p].job != -1 {
			return fmt.Errorf("check: free pod list broken at slot %d", p)
		}
	}
	if free+pods != len(s.pods) {
		return fmt.Errorf("check: %d free and %d live pod slots of %d", free, pods, len(s.pods))
	}
	return nil
}

func (s *State) checkHosts() error {
	seen := 0
	for hi := range s.t.NumHosts() {
		h := HostID(hi)
		f := s.hostFlags[h]
		if f&^(flagHealthMask|flagExclusive) != 0 || Health(f&flagHealthMask) > Failed {
			return fmt.Errorf("check: host %s: bad flags %#x", s.t.HostName(h), f)
		}
		prevJob, prevRank := JobID(-1), int32(-1)
		owners := 0
		for p, last := s.hostRing(h); p >= 0; p = s.hostAfter(p, last) {
			r := &s.pods[p]
			if seen++; seen > int(s.nPods) || r.Host != h {
				return fmt.Errorf("check: host %s: pod list broken", s.t.HostName(h))
			}
			if r.job < prevJob || r.job == prevJob && r.rank <= prevRank {
				return fmt.Errorf("check: host %s: pods not ordered by (job, rank)", s.t.HostName(h))
			}
			if r.job != prevJob {
				owners++
			}
			if s.jobs[r.job].info.Exclusive != (f&flagExclusive != 0) {
				return fmt.Errorf("check: host %s: exclusivity flag disagrees with job %d", s.t.HostName(h), r.job)
			}
			prevJob, prevRank = r.job, r.rank
		}
		if f&flagExclusive != 0 && owners != 1 {
			return fmt.Errorf("check: host %s: exclusive with %d jobs", s.t.HostName(h), owners)
		}
	}
	if seen != int(s.nPods) {
		return fmt.Errorf("check: host lists hold %d pods, %d live", seen, s.nPods)
	}
	return nil
}

// checkUsage recomputes milli, CPU and memory from the pods.
func (s *State) checkUsage() error {
	t := s.t
	milli := make([]int32, t.NumGPUs())
	for i := range milli {
		milli[i] = FullGPU
	}
	cpu := slices.Clone(t.hostCPU)
	mem := slices.Clone(t.hostMem)
	for j := range s.jobs {
		for p := s.jobs[j].first; s.jobs[j].live && p >= 0; p = s.pods[p].jnext {
			r := &s.pods[p]
			lo := int(t.hostGPU[r.Host])
			if r.GPUs&^hostMask(t.HostGPUCount(r.Host)) != 0 {
				return fmt.Errorf("check: job %d pod %d: GPU out of range", j, r.rank)
			}
			for m := r.GPUs; m != 0; m &= m - 1 {
				g := lo + bits.TrailingZeros64(m)
				switch {
				case r.Milli == 0 && milli[g] != FullGPU, r.Milli > 0 && milli[g] < r.Milli:
					return fmt.Errorf("check: GPU %d double-booked (job %d pod %d)", g, j, r.rank)
				case r.Milli == 0:
					milli[g] = 0
				default:
					milli[g] -= r.Milli
				}
			}
			cpu[r.Host] -= r.CPUMilli
			mem[r.Host] -= r.MemoryMiB
			if cpu[r.Host] < 0 || mem[r.Host] < 0 {
				return fmt.Errorf("check: host %s over its CPU or memory", t.HostName(r.Host))
			}
		}
	}
	for g, m := range milli {
		if int32(s.gpuMilli(g)) != m {
			return fmt.Errorf("check: GPU %d: free milli %d, pods leave %d", g, s.gpuMilli(g), m)
		}
		if testBit(s.unused, g) != (m == FullGPU) || testBit(s.partial, g) != (m > 0 && m < FullGPU) {
			return fmt.Errorf("check: GPU %d: unused/partial bits disagree with milli %d", g, m)
		}
	}
	for h := range cpu {
		if cpu[h] != s.hostCPU[h] || mem[h] != s.hostMem[h] {
			return fmt.Errorf("check: host %s: free CPU/memory %d/%d, pods leave %d/%d",
				t.HostName(HostID(h)), s.hostCPU[h], s.hostMem[h], cpu[h], mem[h])
		}
	}
	if w := (t.NumGPUs() + 63) / 64; len(s.unused) != w {
		return fmt.Errorf("check: bitset length")
	}
	return nil
}

func (s *State) checkNominations() error {
	want := make([]uint64, len(s.nominated))
	for i := range s.noms {
		n := &s.noms[i]
		if !n.live {
			continue
		}
		if n.Job < 0 || int(n.Job) >= len(s.jobs) || s.jobs[n.Job].nom != int32(i) {
			return fmt.Errorf("check: nomination %d of job %d not linked from its job", i, n.Job)
		}
		for k, g := range n.GPUs {
			if g < 0 || int(g) >= s.t.NumGPUs() || k > 0 && g <= n.GPUs[k-1] || testBit(want, int(g)) {
				return fmt.Errorf("check: nomination of job %d: bad or shared GPU %d", n.Job, g)
			}
			want[g>>6] |= 1 << (uint(g) & 63)
		}
	}
	for j := range s.jobs {
		if k := s.jobs[j].nom; k >= 0 && (int(k) >= len(s.noms) || !s.noms[k].live || s.noms[k].Job != JobID(j)) {
			return fmt.Errorf("check: job %d points to nomination %d which is not its own", j, k)
		}
	}
	if !slices.Equal(want, s.nominated) {
		return fmt.Errorf("check: nominated bits disagree with nominations")
	}
	if b := s.boundsOfNoms(); b != s.nomB {
		return fmt.Errorf("check: nomination bounds %+v, recount gives %+v", s.nomB, b)
	}
	return nil
}

// checkDerived compares every aggregate with a rebuild from scratch.
func (s *State) checkDerived() error {
	a := s.derive()
	cmp := func(name string, got, want []int32) error {
		if i := firstDiff(got, want); i >= 0 {
			return fmt.Errorf("check: %s[%d] = %d, rebuild gives %d", name, i, got[i], want[i])
		}
		return nil
	}
	if i := firstDiff(s.freeW, a.freeW); i >= 0 {
		return fmt.Errorf("check: free-mask word %d = %#x, rebuild gives %#x", i, s.freeW[i], a.freeW[i])
	}
	if i := firstDiff(s.hostFree, a.hostFree); i >= 0 {
		return fmt.Errorf("check: host %s: %d free GPUs, rebuild gives %d", s.t.HostName(HostID(i)), s.hostFree[i], a.hostFree[i])
	}
	if i := firstDiff(s.hostCap, a.hostCap); i >= 0 {
		return fmt.Errorf("check: host %s: %d healthy GPUs, rebuild gives %d", s.t.HostName(HostID(i)), s.hostCap[i], a.hostCap[i])
	}
	if i := firstDiff(s.hostShared, a.hostShared); i >= 0 {
		return fmt.Errorf("check: host %s: %d shared milli, rebuild gives %d", s.t.HostName(HostID(i)), s.hostShared[i], a.hostShared[i])
	}
	if i := firstDiff(s.hostPart, a.hostPart); i >= 0 {
		return fmt.Errorf("check: host %s: partly used GPUs by bucket %#x, rebuild gives %#x", s.t.HostName(HostID(i)), s.hostPart[i], a.hostPart[i])
	}
	if i := firstDiff(s.idleHostW, a.idleHostW); i >= 0 {
		return fmt.Errorf("check: idle-host word %d = %#x, rebuild gives %#x", i, s.idleHostW[i], a.idleHostW[i])
	}
	for _, c := range []struct {
		name      string
		got, want []int32
	}{{"free", s.domFree, a.domFree}, {"capacity", s.domCap, a.domCap}, {"idle hosts", s.domIdle, a.domIdle},
		{"free by model", s.domModel, a.domModel}, {"histogram", s.domHist, a.domHist},
		{"preemptible", s.domPre, a.domPre}, {"exclusive", s.domExcl, a.domExcl}, {"partly used GPUs", s.domPart, a.domPart}} {
		if err := cmp(c.name, c.got, c.want); err != nil {
			return err
		}
	}
	if i := firstDiff(s.domShared, a.domShared); i >= 0 {
		return fmt.Errorf("check: shared milli of domain %d = %d, rebuild gives %d", i, s.domShared[i], a.domShared[i])
	}
	for l := range s.idleW {
		if i := firstDiff(s.idleW[l], a.idleW[l]); i >= 0 {
			return fmt.Errorf("check: idle domains of level %d, word %d = %#x, rebuild gives %#x", l, i, s.idleW[l][i], a.idleW[l][i])
		}
	}
	return nil
}

func firstDiff[T comparable](a, b []T) int {
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
