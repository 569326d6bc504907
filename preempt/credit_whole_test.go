package preempt_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestCreditSoleRuns compares the credit bound reading runs of sole-pod
// hosts at once (credit_whole.go) with its reading of every host's pods,
// on clusters mostly of whole-host gangs (genSoleLoad) with faults,
// nominations and hosts of several sizes: the same pods without victims
// and the same candidates credited, in the same order, in every leaf
// domain, and the same bounds. It counts the domains where runs were read,
// to be sure the fast path ran.
func TestCreditSoleRuns(t *testing.T) {
	seed := testSeed(t)
	n := testSteps(t, 2000)
	var fast, slow preempt.Planner
	preempt.SetSoleRuns(&slow, false)
	domains := 0
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)+11<<40))
		tree := genSoleTree(rng)
		s := topology.NewState(tree)
		nominees := genSoleLoad(rng, s)
		r := genSlotRequest(rng, tree, nominees, true)
		if rng.IntN(4) == 0 {
			r.Sets[0].GPUs = pick[int32](rng, 2, 3, 4, 8)
		}
		if r.Validate(tree) != nil {
			continue
		}
		want := preempt.CreditScans(&slow, s, r)
		got := preempt.CreditScans(&fast, s, r)
		require.Equal(t, want, got, "instance %d (seed %d), request %+v", i, seed, r)
		domains += len(got)
		_, wantKeys, wantOK := preempt.CreditKeys(&slow, s, r)
		_, gotKeys, gotOK := preempt.CreditKeys(&fast, s, r)
		require.Equal(t, wantKeys, gotKeys, "instance %d (seed %d)", i, seed)
		require.Equal(t, wantOK, gotOK, "instance %d (seed %d)", i, seed)
	}
	runs := preempt.SoleRuns(&fast)
	t.Logf("seed %d: %d domains compared, %d runs of sole-pod hosts read", seed, domains, runs)
	require.Positive(t, runs)
	require.Zero(t, preempt.SoleRuns(&slow))
}

// genSoleTree is a tree of one or two levels above the hosts, most hosts
// of 4 GPUs, some of 8 or 2, so that a whole-host pod of one size may
// not fill a host of another.
func genSoleTree(rng *rand.Rand) *topology.Tree {
	levels := []string{"rack"}
	if rng.IntN(2) == 0 {
		levels = []string{"block", "rack"}
	}
	racks := 1 + rng.IntN(4)
	hosts := make([]topology.HostSpec, 2+rng.IntN(40))
	for i := range hosts {
		r := i * racks / len(hosts) // adjacent hosts share racks, as gangs' runs do
		path := []string{fmt.Sprintf("r%d", r)}
		if len(levels) == 2 {
			path = []string{fmt.Sprintf("b%d", r/2), fmt.Sprintf("r%d", r)}
		}
		hosts[i] = topology.HostSpec{Name: fmt.Sprintf("h%d", i), Path: path, GPUs: pick(rng, 4, 4, 4, 4, 8, 2),
			Model: "A", CPUMilli: 64000, MemoryMiB: 262144}
	}
	t, err := topology.BuildHosts(levels, hosts)
	if err != nil {
		panic(err)
	}
	return t
}

// genSoleLoad fills s mostly with gangs holding runs of whole hosts (one
// pod on every GPU, now and then on all but one), interrupted by hosts of
// small jobs, free hosts and gangs' pods elsewhere; priorities 0–9, most
// preemptible, some exclusive; then nominations and faults.
func genSoleLoad(rng *rand.Rand, s *topology.State) []topology.JobID {
	t := s.Tree()
	H := topology.HostID(t.NumHosts())
	id := topology.JobID(0)
	for h := topology.HostID(0); h < H; {
		info := topology.Job{Priority: int32(rng.IntN(10)), Preemptible: rng.IntN(6) != 0, Movable: true,
			Exclusive: rng.IntN(12) == 0, Required: topology.NoLevel, Preferred: topology.NoLevel}
		var pods []topology.Pod
		switch k := rng.IntN(8); {
		case k < 5: // a gang's run of whole hosts, or of its first width GPUs on each
			width := pick(rng, 0, 0, 0, 4, 2)
			for run := 1 + rng.IntN(6); run > 0 && h < H; run-- {
				all := uint64(1)<<uint(t.HostGPUCount(h)) - 1
				if width > 0 {
					all &= uint64(1)<<uint(width) - 1
				}
				if rng.IntN(10) == 0 {
					all &= all >> 1 // all but the last GPU
				}
				if all != 0 && s.HostUnusedMask(h) == uint64(1)<<uint(t.HostGPUCount(h))-1 {
					pods = append(pods, topology.Pod{Host: h, GPUs: all})
				}
				h++
			}
			if rng.IntN(4) == 0 { // a pod elsewhere too
				h2 := topology.HostID(rng.IntN(int(H)))
				if m := s.HostUnusedMask(h2); m != 0 && !hasHost(pods, h2) {
					pods = append(pods, topology.Pod{Host: h2, GPUs: m & -m})
				}
			}
		case k < 7: // small jobs on one host
			if m := s.HostUnusedMask(h); m != 0 {
				pods = append(pods, topology.Pod{Host: h, GPUs: m & -m})
				if rng.IntN(3) == 0 {
					pods[0].GPUs, pods[0].Milli = m&-m, int32(100*(1+rng.IntN(9)))
				}
			}
			if rng.IntN(2) == 0 {
				h++
			}
		default: // a free host
			h++
		}
		if len(pods) > 0 && s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(id, info, pods...)}}) == nil {
			id++
		}
	}
	for h := range H { // hosts of 8 GPUs with 4 failed (maybe under a pod): as many healthy as a host of 4
		if lo, hi := t.HostGPUs(h); hi-lo == 8 && rng.IntN(3) == 0 {
			from := lo + pick[topology.GPUID](rng, 0, 4)
			for g := from; g < from+4; g++ {
				_ = s.Apply(topology.Delta{Ops: []topology.Op{topology.SetGPUHealth(g, topology.Failed)}})
			}
		}
	}
	nominees := genNominations(rng, s, false)
	genFaults(rng, s, 12)
	return nominees
}

// hasHost reports whether a pod of pods is on host h.
func hasHost(pods []topology.Pod, h topology.HostID) bool {
	for _, p := range pods {
		if p.Host == h {
			return true
		}
	}
	return false
}
