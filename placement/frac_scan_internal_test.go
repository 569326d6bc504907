package placement

import (
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestFracScan compares the fractional fast paths with bestScan, which they
// replace, on every domain and every rack after each of random steps (jobs of
// whole GPUs and fractions added and removed, exclusive jobs — also asking
// for more pods beside their own —, hosts and GPUs
// failing, nominations, Clones, snapshot round trips), for pod sizes that are
// and are not multiples of the partial buckets' width, with and without a
// Restriction; and fracHostCap, bestHostFrac's count as the last descent
// reads it, with hostCap on every open host.
func TestFracScan(t *testing.T) {
	seed := testkit.Seed(t, 5)
	rng := rand.New(rand.NewPCG(seed, 3))
	tr, err := topology.BuildShape(topology.Shape{Levels: []string{"su", "rack"}, FanOut: []int{3, 4, 5}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := topology.NewState(tr)
	x := NewRestriction(tr) // every fourth host closed to the restricted requests
	for h := topology.HostID(0); int(h) < tr.NumHosts(); h += 4 {
		require.NoError(t, x.Close(h))
	}
	var v Solver
	next := topology.JobID(0)
	var live, exclusive []topology.JobID
	checks := 0
	for step := range testkit.Steps(t, 2000) {
		switch k := rng.IntN(10); {
		case k == 0: // an exclusive one-pod job
			h := topology.HostID(rng.IntN(tr.NumHosts()))
			if m := s.HostFreeMask(h); m != 0 && s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(next,
				topology.Job{Exclusive: true, Required: topology.NoLevel, Preferred: topology.NoLevel},
				topology.Pod{Host: h, GPUs: m & -m})}}) == nil {
				live = append(live, next)
				exclusive = append(exclusive, next)
				next++
			}
		case k == 1: // a host or a GPU fails or comes back
			h := topology.HostID(rng.IntN(tr.NumHosts()))
			op := topology.SetHostHealth(h, topology.Failed)
			if s.HostHealth(h) != topology.Healthy {
				op = topology.SetHostHealth(h, topology.Healthy)
			} else if rng.IntN(2) == 0 {
				lo, _ := tr.HostGPUs(h)
				g := lo + topology.GPUID(rng.IntN(tr.HostGPUCount(h)))
				health := topology.Failed
				if s.GPUFailed(g) {
					health = topology.Healthy
				}
				op = topology.SetGPUHealth(g, health)
			}
			require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{op}}))
		case k == 2: // a nomination of one GPU
			g := topology.GPUID(rng.IntN(tr.NumGPUs()))
			_ = s.Apply(topology.Delta{Ops: []topology.Op{topology.Nominate(topology.Nomination{
				Job: 100000 + topology.JobID(rng.IntN(50)), Priority: 9, Ready: 1, Expiry: 100, GPUs: []topology.GPUID{g}})}})
		default:
			s = randomStep(t, rng, tr, s, &live, &next, step)
		}
		for _, m := range []int32{100, 250, 300, 500, 750, 999} {
			r := Request{Job: next, Priority: int32(rng.IntN(20)), Sets: []PodSet{{Pods: 1, GPUs: 1, Milli: m}}}
			if len(exclusive) > 0 && rng.IntN(3) == 0 { // a job placing more pods beside its exclusive ones
				r.Job = exclusive[rng.IntN(len(exclusive))]
			}
			if rng.IntN(3) == 0 {
				r.Eligible, r.Restriction = x.Eligible(), x
			}
			v.begin(s, &r)
			v.setCurrent(0)
			if !v.plainFrac() {
				continue // a nomination this request may take
			}
			for h := range topology.HostID(tr.NumHosts()) { // the last descent's host key (one_path.go)
				if v.rx == nil || !v.rx.closed(h) {
					require.Equal(t, v.hostCap(h), v.fracHostCap(h, int64(s.HostFree(h))),
						"step %d milli %d host %s", step, m, tr.HostName(h))
				}
			}
			for l := topology.Level(1); l < tr.HostLevel(); l++ {
				lo, hi := tr.LevelDomains(l)
				for d := lo; d < hi; d++ {
					cl := l + 1
					clo, chi := v.childRange(d, cl)
					want, wok := v.bestScan(cl, clo, chi, 1)
					var got int32
					var gok bool
					if cl == v.hl {
						got, gok = v.bestHostFrac(clo, chi, 1)
					} else {
						got, gok = v.bestDomainFrac(clo, chi, 1)
					}
					require.Equal(t, wok, gok, "step %d milli %d domain %s", step, m, tr.DomainPath(d))
					require.Equal(t, want, got, "step %d milli %d domain %s", step, m, tr.DomainPath(d))
					checks++
				}
			}
		}
	}
	t.Logf("%d choices compared", checks)
}
