package placement

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestReleaseOracle compares the released hosts' overlays (release.go), with
// the hosts listed by bitmap and by sorting, against a plain per-host
// recomputation from the State and the gone jobs' pods, on random clusters
// whose host counts and GPUs per host sit at word edges; and relGain over
// every domain and random host ranges against plain sums.
func TestReleaseOracle(t *testing.T) {
	seed := testkit.Seed(t, 1)
	var v Solver
	for i := range testkit.Steps(t, 500) {
		rng := rand.New(rand.NewPCG(seed, uint64(i)+1<<44))
		s, gone := genReleaseState(t, rng)
		r := genReleaseRequest(rng)
		for _, dense := range []bool{false, true} {
			v.begin(s, r)
			v.gone = gone
			v.gatherRel()
			v.buildRel(dense)
			want, wantMilli := releaseOracle(&v, s, gone)
			checkRel(t, &v, want, fmt.Sprintf("instance %d (seed %d), dense %v", i, seed, dense))
			checkRelMilli(t, &v, wantMilli)
			checkRelGain(t, &v, rng, want)
		}
	}
}

// relWant is releaseOracle's entry: the overlay and what the host gained.
type relWant struct {
	ov        hostOv
	gainGPUs  int64 // whole GPUs free for the gang that were not before
	gainMilli int64 // milli returned on GPUs that stay partly used
}

// checkRel compares the entries' overlays with want's, and the gains their
// prefix sums hold.
func checkRel(t *testing.T, v *Solver, want []relWant, msg string) {
	t.Helper()
	require.Len(t, v.rel, len(want), msg)
	res := v.resSets() || !v.wholeApplies() || len(v.relOrder) == 0 // else entries built by wholeEntries may leave CPU and memory 0
	for k := range want {
		w := want[k].ov
		if !res {
			w.cpu, w.mem = v.rel[k].cpu, v.rel[k].mem
		}
		require.Equal(t, w, v.rel[k], "%s, host %d", msg, want[k].ov.h)
		gains := [2]int64{v.relSum[k+1] - v.relSum[k], 0}
		if len(v.relSumM) != 0 {
			gains[1] = v.relSumM[k+1] - v.relSumM[k]
		}
		require.Equal(t, [2]int64{want[k].gainGPUs, want[k].gainMilli}, gains, "%s, host %d: gains", msg, want[k].ov.h)
	}
}

// checkRelMilli compares the entries' milli per GPU with want's when the
// request has fractional pods, and otherwise checks that every slot is zero
// (newRel reuses them as they are).
func checkRelMilli(t *testing.T, v *Solver, want []gpuMilli) {
	t.Helper()
	if v.fracs {
		for k := range want {
			require.Equal(t, want[k], v.relMilli[k], "entry %d", k)
		}
		return
	}
	require.False(t, v.relDirty)
	for k := range v.relMilli {
		require.Equal(t, gpuMilli{}, v.relMilli[k], "slot %d", k)
	}
}

// releaseOracle recomputes each released host's entry from scratch, and its
// milli per GPU when the request has fractional pods.
func releaseOracle(v *Solver, s *topology.State, gone []topology.JobID) ([]relWant, []gpuMilli) {
	t := s.Tree()
	byHost := map[topology.HostID][]topology.Pod{}
	for _, j := range gone {
		for _, p := range s.AppendJobPods(nil, j) {
			byHost[p.Host] = append(byHost[p.Host], p)
		}
	}
	var hosts []topology.HostID
	for h := range byHost {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	fracs := v.fracSets()
	var out []relWant
	var outMilli []gpuMilli
	for _, h := range hosts {
		lo, _ := t.HostGPUs(h)
		n := t.HostGPUCount(h)
		after := make([]int, n)
		for i := range n {
			after[i] = s.GPUMilli(lo + topology.GPUID(i))
		}
		r := relWant{ov: hostOv{h: h, cpu: s.HostCPU(h), mem: s.HostMemory(h)}}
		var ms gpuMilli
		for _, p := range byHost[h] {
			for i := range n {
				if p.GPUs&(1<<uint(i)) == 0 {
					continue
				}
				if p.Milli == 0 {
					after[i] = topology.FullGPU
				} else {
					after[i] += int(p.Milli)
				}
			}
			r.ov.cpu += p.CPUMilli
			r.ov.mem += p.MemoryMiB
		}
		share := v.shareMask(h)
		for i := range n {
			bit := uint64(1) << uint(i)
			switch {
			case share&bit == 0:
			case after[i] == topology.FullGPU:
				r.ov.mask |= bit
			default:
				r.gainMilli += int64(after[i] - s.GPUMilli(lo+topology.GPUID(i)))
			}
			if fracs && share&bit != 0 {
				ms[i] = uint16(after[i])
			}
		}
		r.gainGPUs = int64(bits.OnesCount64(r.ov.mask &^ s.HostFreeMask(h)))
		if v.r.Exclusive {
			for _, j := range s.AppendHostJobs(nil, h) {
				if _, ok := slices.BinarySearch(gone, j); !ok {
					r.ov.others = true
				}
			}
		}
		out, outMilli = append(out, r), append(outMilli, ms)
	}
	return out, outMilli
}

// checkRelGain compares relGain with plain sums over want's entries, for
// every domain and random host ranges.
func checkRelGain(t *testing.T, v *Solver, rng *rand.Rand, want []relWant) {
	t.Helper()
	sum := func(lo, hi topology.HostID) (g, m int64) {
		for _, r := range want {
			if r.ov.h >= lo && r.ov.h < hi {
				g, m = g+r.gainGPUs, m+r.gainMilli
			}
		}
		return g, m
	}
	tr := v.t
	for d := range topology.DomainID(tr.NumDomains()) {
		lo, hi := tr.Hosts(d)
		wg, wm := sum(lo, hi)
		gg, gm := v.relGain(lo, hi)
		require.Equal(t, [2]int64{wg, wm}, [2]int64{gg, gm}, "domain %d", d)
	}
	for range 20 {
		a := topology.HostID(rng.IntN(tr.NumHosts() + 1))
		b := topology.HostID(rng.IntN(tr.NumHosts() + 1))
		lo, hi := min(a, b), max(a, b)
		wg, wm := sum(lo, hi)
		gg, gm := v.relGain(lo, hi)
		require.Equal(t, [2]int64{wg, wm}, [2]int64{gg, gm}, "hosts [%d, %d)", lo, hi)
	}
}

// genReleaseState builds a random cluster (host counts and GPUs per host at
// word edges), loads it with jobs of whole and fractional pods, some
// exclusive, fails some GPUs and nominates some, and picks jobs gone.
func genReleaseState(t *testing.T, rng *rand.Rand) (*topology.State, []topology.JobID) {
	perHost := []int{1, 4, 8, 63, 64}[rng.IntN(5)]
	hosts := []int{2, 63, 64, 65, 127, 128, 129, 200}[rng.IntN(8)]
	racks := 1
	for _, k := range []int{3, 2, 1} {
		if hosts%k == 0 {
			racks = k
			break
		}
	}
	tr, err := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{racks, hosts / racks},
		GPUsPerHost: perHost, CPUMilli: 64000, MemoryMiB: 1 << 20})
	require.NoError(t, err)
	s := topology.NewState(tr)
	var live []topology.JobID
	for j := range topology.JobID(5 + rng.IntN(60)) {
		info := topology.Job{Priority: int32(rng.IntN(4)), Preemptible: true, Exclusive: rng.IntN(8) == 0}
		var pods []topology.Pod
		for range 1 + rng.IntN(4) {
			if p, ok := genReleasePod(rng, s, pods); ok {
				pods = append(pods, p)
			}
		}
		if len(pods) > 0 && s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(j, info, pods...)}}) == nil {
			live = append(live, j)
		}
	}
	for range rng.IntN(4) {
		g := topology.GPUID(rng.IntN(tr.NumGPUs()))
		_ = s.Apply(topology.Delta{Ops: []topology.Op{topology.SetGPUHealth(g, topology.Failed)}})
	}
	if rng.IntN(2) == 0 {
		g := topology.GPUID(rng.IntN(tr.NumGPUs()))
		_ = s.Apply(topology.Delta{Ops: []topology.Op{topology.Nominate(topology.Nomination{Job: 1000,
			Priority: int32(rng.IntN(6)), Ready: 5, Expiry: 50, GPUs: []topology.GPUID{g}})}})
	}
	require.NoError(t, s.Check())
	var gone []topology.JobID
	for _, j := range live {
		if rng.IntN(3) > 0 {
			gone = append(gone, j)
		}
	}
	return s, gone
}

// genReleasePod draws a pod on a random host: whole free GPUs, or a
// fraction of a GPU with room (pods holds the job's pods drawn so far,
// not yet in s).
func genReleasePod(rng *rand.Rand, s *topology.State, pods []topology.Pod) (topology.Pod, bool) {
	tr := s.Tree()
	h := topology.HostID(rng.IntN(tr.NumHosts()))
	taken := uint64(0)
	for _, p := range pods {
		if p.Host == h {
			taken |= p.GPUs
		}
	}
	cpu, mem := int32(1000*rng.IntN(3)), int32(1024*rng.IntN(3))
	lo, _ := tr.HostGPUs(h)
	if g := rng.IntN(tr.HostGPUCount(h)); rng.IntN(3) == 0 && taken&(1<<uint(g)) == 0 {
		milli := int32(100 * (1 + rng.IntN(9)))
		if s.GPUMilli(lo+topology.GPUID(g)) >= int(milli) {
			return topology.Pod{Host: h, GPUs: 1 << uint(g), Milli: milli, CPUMilli: cpu, MemoryMiB: mem}, true
		}
	}
	free := s.HostFreeMask(h) &^ taken
	var m uint64
	for k := 1 + rng.IntN(3); k > 0 && free != 0; k-- {
		m |= free & -free
		free &= free - 1
	}
	return topology.Pod{Host: h, GPUs: m, CPUMilli: cpu, MemoryMiB: mem}, m != 0
}

// genReleaseRequest draws a request of whole GPUs or of a fraction,
// sometimes exclusive, of a priority that may or may not displace the
// nomination.
func genReleaseRequest(rng *rand.Rand) *Request {
	set := PodSet{Pods: 1 + int32(rng.IntN(4)), GPUs: 1}
	if rng.IntN(2) == 0 {
		set.Milli = int32(100 * (1 + rng.IntN(9)))
	}
	return &Request{Job: 2000, Priority: int32(rng.IntN(8)), Exclusive: rng.IntN(4) == 0, Sets: []PodSet{set}}
}

// TestReleaseAllocs: a warmed-up Solver places around many jobs gone (the
// hosts listed by bitmap) and around one (by sorting) without allocating.
func TestReleaseAllocs(t *testing.T) {
	tr, err := topology.BuildShape(topology.NVL72(1))
	require.NoError(t, err)
	s := topology.NewState(tr)
	var all []topology.JobID
	for h := range topology.HostID(tr.NumHosts()) {
		j := topology.JobID(h)
		require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{
			topology.AddJob(j, topology.Job{Priority: 1, Preemptible: true}, topology.Pod{Host: h, GPUs: 0xF})}}))
		all = append(all, j)
	}
	for _, tc := range []struct {
		name  string
		gone  []topology.JobID
		pods  int32
		dense bool
	}{{"dense", all[:600], 500, true}, {"sparse", all[7:8], 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			var v Solver
			var plan Plan
			r := &Request{Job: 5000, Priority: 9, Sets: []PodSet{{Pods: tc.pods, GPUs: 4}}}
			ok, _, err := v.PlaceWithout(s, r, 0, tc.gone, &plan)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, tc.dense, len(v.relOrder) > 0) // listed by bitmap
			allocs := testing.AllocsPerRun(20, func() { _, _, _ = v.PlaceWithout(s, r, 0, tc.gone, &plan) })
			require.Zero(t, allocs)
			pods := s.AppendJobsPods(nil, tc.gone, make([]int32, len(tc.gone))) // given: the same, nothing allocated
			ok, _, err = v.PlaceWithoutPods(s, r, 0, tc.gone, pods, &plan)
			require.NoError(t, err)
			require.True(t, ok)
			allocs = testing.AllocsPerRun(20, func() { _, _, _ = v.PlaceWithoutPods(s, r, 0, tc.gone, pods, &plan) })
			require.Zero(t, allocs)
		})
	}
}
