package topology

import (
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAppendAdmitted: a job may take the GPUs of its own nomination, of
// lower-priority ones and of those whose ready time it ends by; they come
// one entry per host, hosts ascending, two nominations on a host merged,
// after what dst held; and Admitted answers range counts over them.
func TestAppendAdmitted(t *testing.T) {
	tree, err := BuildShape(Shape{Levels: []string{"rack"}, FanOut: []int{2, 3}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := NewState(tree)
	none := Job{Priority: 5}
	require.Empty(t, s.AppendAdmitted(nil, 1, &none))
	nom := func(j JobID, prio int32, ready int64, gpus ...GPUID) Op {
		return Nominate(Nomination{Job: j, Priority: prio, Ready: ready, Expiry: 100, GPUs: gpus})
	}
	require.NoError(t, s.Apply(Delta{Ops: []Op{
		nom(10, 9, 10, 13, 14, 20),  // hosts 3 and 5, ready at 10
		nom(11, 1, 50, 1, 2, 4, 15), // hosts 0, 1 and 3
		nom(12, 5, 20, 22),          // host 5, ready at 20
	}}))
	require.NoError(t, s.Check())
	seed := []HostMask{{Host: 99, Mask: 1}}
	cases := []struct {
		name string
		id   JobID
		info Job
		want []HostMask
	}{
		{"priority 5: the priority-1 one", 1, Job{Priority: 5}, []HostMask{{0, 0b0110}, {1, 0b0001}, {3, 0b1000}}},
		{"its own too", 10, Job{Priority: 5}, []HostMask{{0, 0b0110}, {1, 0b0001}, {3, 0b1110}, {5, 0b0001}}},
		{"ends by 20", 1, Job{Priority: 2, HasEnd: true, End: 20}, []HostMask{{0, 0b0110}, {1, 0b0001}, {3, 0b1000}, {5, 0b0100}}},
		{"outranks all", 1, Job{Priority: 10}, []HostMask{{0, 0b0110}, {1, 0b0001}, {3, 0b1110}, {5, 0b0101}}},
		{"outranked by all", 1, Job{Priority: 1}, nil},
	}
	for _, c := range cases {
		got := s.AppendAdmitted(seed, c.id, &c.info)
		require.Equal(t, append([]HostMask{{Host: 99, Mask: 1}}, c.want...), got, c.name)
	}

	// Admitted answers range queries over the same lists: compare with sums
	// over AppendAdmitted's entries, for every host range.
	var a Admitted
	for _, c := range cases {
		a.Collect(s, c.id, &c.info)
		require.Equal(t, len(c.want) == 0, a.Empty(), c.name)
		n := HostID(tree.NumHosts())
		for lo := HostID(0); lo <= n; lo++ {
			for hi := lo; hi <= n; hi++ {
				var gpus, pods2 int64
				for _, e := range c.want {
					if e.Host >= lo && e.Host < hi {
						gpus += int64(bits.OnesCount64(e.Mask))
						pods2 += int64((bits.OnesCount64(e.Mask) + 1) / 2)
					}
				}
				require.Equal(t, gpus, a.GPUs(lo, hi), "%s: GPUs of hosts [%d, %d)", c.name, lo, hi)
				require.Equal(t, gpus, a.Pods(lo, hi, 1), "%s: pods of 1 GPU on hosts [%d, %d)", c.name, lo, hi)
				require.Equal(t, pods2, a.Pods(lo, hi, 2), "%s: pods of 2 GPUs on hosts [%d, %d)", c.name, lo, hi)
			}
			if lo < n {
				var want uint64
				for _, e := range c.want {
					if e.Host == lo {
						want = e.Mask
					}
				}
				require.Equal(t, want, a.Mask(lo), "%s: host %d", c.name, lo)
				require.Equal(t, s.HostNominatedMask(lo)&^want, s.NominatedAgainst(lo, &a), "%s: host %d", c.name, lo)
			}
		}
	}
	var empty Admitted
	require.True(t, empty.Empty())
	require.Zero(t, empty.GPUs(0, 6))
}

// TestAdmittedMaskWalks: Mask answers the same whatever order hosts are
// asked in — ascending (where it looks after the last host found first),
// descending, repeated, random (then by the index it builds when its
// searches are many) — on random admitted lists.
func TestAdmittedMaskWalks(t *testing.T) {
	rng := rand.New(rand.NewPCG(uint64(envInt(t, "BLINK_SEED", 71)), 3))
	indexed := int32(0)
	for range envInt(t, "BLINK_STEPS", 300) {
		n := 1 + rng.IntN([]int{200, 4000}[rng.IntN(2)]) // many: Mask indexes them (searched)
		every := []int{1, 3, 40}[rng.IntN(3)]            // 1 in 40: too sparse to index
		want := map[HostID]uint64{}
		var a Admitted
		for h := range HostID(n) {
			if rng.IntN(every) == 0 {
				m := 1 + rng.Uint64N(255)
				a.hosts = append(a.hosts, HostMask{Host: h, Mask: m})
				want[h] = m
			}
		}
		var order []HostID
		switch rng.IntN(4) {
		case 0:
			for h := range HostID(n) {
				order = append(order, h)
			}
		case 1:
			for h := HostID(n) - 1; h >= 0; h-- {
				order = append(order, h)
			}
		case 2:
			for h := range HostID(n) {
				order = append(order, h, h)
			}
		default:
			for range 2 * n {
				order = append(order, HostID(rng.IntN(n+2)))
			}
		}
		for _, h := range order {
			require.Equal(t, want[h], a.Mask(h), "host %d of %d", h, n)
		}
		indexed += b2i(len(a.at) > 0)
	}
	require.NotZero(t, indexed, "no list was indexed")
}

// TestMayAdmit: the nominations' bounds say whether a job is admitted to
// any (mayAdmit) exactly as AppendAdmitted's pass does, after random
// nominations made, cancelled, expired, rolled back with a Delta that fails
// whole, taken by their nominee's bind, and copied by Clone; Check recounts
// the bounds after every step. Job ids go past 64, so that nominees share
// a bit of the bounds' filter of jobs.
func TestMayAdmit(t *testing.T) {
	seed, steps := envInt(t, "BLINK_SEED", 83), envInt(t, "BLINK_STEPS", 3000)
	t.Logf("seed %d, %d steps (BLINK_SEED, BLINK_STEPS)", seed, steps)
	r := rand.New(rand.NewPCG(uint64(seed), 11))
	tree, err := BuildShape(Shape{Levels: []string{"rack"}, FanOut: []int{2, 8}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := NewState(tree)
	now := int64(0)
	for step := range steps {
		var ops []Op
		switch k := r.IntN(10); {
		case k < 5: // a nomination of a few free GPUs of one host
			h := HostID(r.IntN(tree.NumHosts()))
			lo, _ := tree.HostGPUs(h)
			var gpus []GPUID
			for m := s.HostFreeMask(h); m != 0; m &= m - 1 {
				if r.IntN(2) == 0 {
					gpus = append(gpus, lo+GPUID(bits.TrailingZeros64(m)))
				}
			}
			id := JobID(r.IntN(150))
			if _, held := s.NominationOf(id); held || len(gpus) == 0 {
				continue
			}
			ops = append(ops, Nominate(Nomination{Job: id, Priority: int32(r.IntN(10)), Ready: int64(r.IntN(50)),
				Expiry: now + int64(r.IntN(20)), GPUs: gpus}))
		case k < 7:
			ops = append(ops, CancelNomination(JobID(r.IntN(150))))
		case k < 8:
			now += int64(r.IntN(5))
			ops = append(ops, ExpireNominations(now))
		default: // a nominee bound to one of its GPUs: AddJob releases its nomination
			id := JobID(r.IntN(150))
			n, held := s.NominationOf(id)
			if !held || s.HasJob(id) {
				continue
			}
			h := tree.GPUHost(n.GPUs[0])
			lo, _ := tree.HostGPUs(h)
			ops = append(ops, AddJob(id, Job{Priority: n.Priority}, Pod{Host: h, GPUs: 1 << uint(n.GPUs[0]-lo)}))
		}
		fail := r.IntN(4) == 0
		if fail {
			ops = append(ops, RemoveJob(JobID(500))) // absent: the Delta fails whole
		}
		if err := s.Apply(Delta{Ops: ops}); fail {
			require.Error(t, err, "seed %d step %d", seed, step)
		}
		require.NoError(t, s.Check(), "seed %d step %d", seed, step)
		if r.IntN(50) == 0 {
			s = s.Clone()
			require.NoError(t, s.Check(), "seed %d step %d: clone", seed, step)
		}
		for range 8 {
			id := JobID(r.IntN(160))
			info := Job{Priority: int32(r.IntN(11)), HasEnd: r.IntN(2) == 0, End: int64(r.IntN(60))}
			want := len(s.AppendAdmitted(nil, id, &info)) > 0
			require.Equal(t, want, s.mayAdmit(id, &info), "seed %d step %d: job %d %+v", seed, step, id, info)
			var a Admitted
			a.Collect(s, id, &info)
			require.Equal(t, !want, a.Empty(), "seed %d step %d: job %d %+v", seed, step, id, info)
		}
	}
}
