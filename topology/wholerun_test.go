package topology

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWholeRunOracle compares the runs of whole idle hosts (wholerun.go:
// checkSpans, placeSpan, flushSpans) with the general path on random gangs
// over random, partly used trees: each gang is applied alone (journal-free:
// runs where its pods lie on consecutive idle hosts) and, on another clone,
// followed by a no-op (journaled: every pod through checkPod, putAt and
// commit). Both must accept or reject it alike, with the same error; both
// States must pass Check and marshal to the same bytes (a rejected gang
// leaving the State as it was); an accepted gang must touch the same hosts.
// The gangs are runs of hosts at random places and lengths, most of their
// pods taking whole hosts, some not (part of a host, CPU, a fraction), on
// ascending hosts or shuffled. BLINK_SEED=n replays one seed.
func TestWholeRunOracle(t *testing.T) {
	seed := uint64(envInt(t, "BLINK_SEED", 2026))
	cases := 500
	if testing.Short() {
		cases = 100
	}
	t.Logf("seed %d (BLINK_SEED=n replays)", seed)
	r := rand.New(rand.NewPCG(seed, 0x3c6ef372fe94f82b))
	var spanPods, gangs, accepted int
	for c := range cases {
		tree, desc, err := oracleTree(r)
		require.NoError(t, err, "case %d: %s", c, desc)
		if tree.NumHosts() == 0 {
			continue
		}
		s := NewState(tree)
		wholeRunLoad(r, s)
		require.NoError(t, s.Check())
		for g := range 1 + r.IntN(6) {
			id := JobID(1000 + g)
			info := Job{Priority: oraclePick(r, oraclePrios...), Required: NoLevel, Preferred: NoLevel,
				Exclusive: r.IntN(5) == 0, Preemptible: r.IntN(3) == 0}
			pods := wholeRunGang(r, s)
			where := fmt.Sprintf("seed %d, case %d (%s), gang %d: %d pods on %v", seed, c, desc, g, len(pods), podHosts(pods))
			fast, slow := s.Clone(), s.Clone()
			errF := fast.Apply(Delta{Ops: []Op{AddJob(id, info, pods...)}})
			errS := slow.Apply(Delta{Ops: []Op{AddJob(id, info, pods...), ExpireNominations(math.MinInt64)}})
			gangs++
			require.NoError(t, fast.Check(), where)
			require.NoError(t, slow.Check(), where)
			if errS != nil {
				require.Error(t, errF, where)
				require.Equal(t, errors.Is(errS, ErrStale), errors.Is(errF, ErrStale), "%s: %v vs %v", where, errF, errS)
				require.Equal(t, wholeRunBytes(t, s), wholeRunBytes(t, fast), where)
				continue
			}
			require.NoError(t, errF, where)
			require.Equal(t, wholeRunBytes(t, slow), wholeRunBytes(t, fast), where)
			require.Equal(t, touchedHosts(t, slow), touchedHosts(t, fast), where)
			probe := s.Clone() // the spans the fast path took
			_, err := probe.checkSpans(id, &info, pods)
			require.NoError(t, err, where)
			for _, sp := range probe.spans {
				spanPods += int(sp.hi - sp.lo)
			}
			accepted++
			s = fast
		}
	}
	t.Logf("%d gangs, %d accepted, %d pods placed in runs", gangs, accepted, spanPods)
	require.Greater(t, spanPods, 2000, "the runs were hardly exercised")
}

// wholeRunLoad puts random work on s: pods of part of a host or all of it,
// fractions, CPU; failed GPUs, draining hosts, nominations. Some hosts stay
// idle, in runs.
func wholeRunLoad(r *rand.Rand, s *State) {
	t := s.t
	H := t.NumHosts()
	busy := r.IntN(3) // how much work: none, some, much
	for i := range busy * H / 2 {
		h := HostID(r.IntN(H))
		n := t.HostGPUCount(h)
		p := Pod{Host: h, GPUs: hostMask(n)}
		switch x := r.IntN(6); {
		case n > 1 && x < 3:
			p.GPUs = uint64(1) << uint(r.IntN(n))
		case n > 0 && x == 3:
			p.GPUs, p.Milli = uint64(1)<<uint(r.IntN(n)), int32(1+r.IntN(FullGPU-1))
		case x == 4:
			p.CPUMilli = int32(r.IntN(2000))
		}
		_ = s.Apply(Delta{Ops: []Op{AddJob(JobID(i), Job{Priority: 1, Required: NoLevel, Preferred: NoLevel}, p)}})
	}
	for range r.IntN(4) {
		if g := t.NumGPUs(); g > 0 {
			_ = s.Apply(Delta{Ops: []Op{SetGPUHealth(GPUID(r.IntN(g)), Failed)}})
		}
	}
	for range r.IntN(3) {
		_ = s.Apply(Delta{Ops: []Op{SetHostHealth(HostID(r.IntN(H)), Draining)}})
	}
	for i := range r.IntN(3) {
		if g := t.NumGPUs(); g > 0 {
			n := Nomination{Job: JobID(900 + i), Priority: oraclePick(r, oraclePrios...), Expiry: 100,
				GPUs: []GPUID{GPUID(r.IntN(g))}}
			_ = s.Apply(Delta{Ops: []Op{Nominate(n)}})
		}
	}
}

// wholeRunGang draws a gang's pods: a few runs of consecutive hosts, most
// pods taking their whole host, on distinct hosts (now and then one host
// twice), ascending or not.
func wholeRunGang(r *rand.Rand, s *State) []Pod {
	t := s.t
	H := t.NumHosts()
	var pods []Pod
	seen := map[HostID]bool{}
	odd := 40 * (1 + r.IntN(2)*1000) // one pod in 40 is not whole, or none
	idle := r.IntN(3) != 0           // runs of idle hosts only
	for range 1 + r.IntN(5) {
		lo := HostID(r.IntN(H))
		if idle || r.IntN(3) == 0 { // from the first idle host on
			for lo < HostID(H)-1 && !s.HostIdle(lo) {
				lo++
			}
		}
		for h := lo; h < min(HostID(H), lo+HostID(1+r.IntN(40))); h++ {
			if idle && !s.HostIdle(h) {
				break
			}
			if seen[h] && r.IntN(20) != 0 {
				continue
			}
			seen[h] = true
			n := t.HostGPUCount(h)
			p := Pod{Host: h, GPUs: hostMask(n)}
			switch x := r.IntN(odd); {
			case x == 0 && n > 1:
				p.GPUs = 1
			case x == 1 && n > 0:
				p.GPUs, p.Milli = 1, 500
			case x == 2:
				p.CPUMilli = 1
			case x == 3:
				p.GPUs = hostMask(n + 1) // out of range
			case x == 4:
				p.MemoryMiB = 1
			case x == 5 && h > 0: // the previous host's whole mask: part of this one, or too much
				p.GPUs = hostMask(t.HostGPUCount(h - 1))
			}
			pods = append(pods, p)
		}
	}
	switch r.IntN(4) {
	case 0:
		r.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
	case 1:
		slices.SortFunc(pods, func(a, b Pod) int { return int(a.Host - b.Host) })
	}
	return pods
}

func podHosts(pods []Pod) []HostID {
	hs := make([]HostID, len(pods))
	for i := range pods {
		hs[i] = pods[i].Host
	}
	return hs
}

func wholeRunBytes(t *testing.T, s *State) []byte {
	b, err := s.MarshalBinary()
	require.NoError(t, err)
	return b
}

// touchedHosts returns the hosts of s's touch log (a Clone's: from 0),
// sorted, without repeats.
func touchedHosts(t *testing.T, s *State) []HostID {
	a, b, ok := s.TouchedSpans(0)
	require.True(t, ok)
	hs := slices.Concat(a, b)
	slices.Sort(hs)
	return slices.Compact(hs)
}
