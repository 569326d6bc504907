package placement

import (
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestRestrictionSums follows a Restriction through random steps (jobs
// added and removed, whole GPUs and fractions, hosts failing and coming
// back, rejected Deltas, Clones, snapshot round trips, hosts closed and
// opened, the Restriction copied with CloneFor for the State as it is) and
// compares, after every step, its per-domain sums with a count over each
// domain's closed hosts from the State's per-host figures, and the
// restricted root index with a scan of the root's children.
func TestRestrictionSums(t *testing.T) {
	seed := testkit.Seed(t, 11)
	rng := rand.New(rand.NewPCG(seed, 2))
	tr, err := topology.BuildShape(topology.Shape{Levels: []string{"block", "rack"}, FanOut: []int{80, 2, 3}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := topology.NewState(tr)
	x := NewRestriction(tr)
	for h := range topology.HostID(tr.NumHosts()) {
		if rng.IntN(4) == 0 {
			require.NoError(t, x.Close(h))
		}
	}
	var v Solver
	next := topology.JobID(0)
	var live []topology.JobID
	for step := range testkit.Steps(t, 3000) {
		switch k := rng.IntN(9); {
		case k == 8: // a copy for the State as it is now, however far behind x is
			x = x.CloneFor(s)
		case k == 0:
			h := topology.HostID(rng.IntN(tr.NumHosts()))
			if x.Closed(h) {
				require.NoError(t, x.Open(h))
			} else {
				require.NoError(t, x.Close(h))
			}
		case k == 1:
			h := topology.HostID(rng.IntN(tr.NumHosts()))
			health := topology.Healthy
			if s.HostHealth(h) == topology.Healthy {
				health = topology.Failed
			}
			require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{topology.SetHostHealth(h, health)}}))
		default:
			s = randomStep(t, rng, tr, s, &live, &next, step)
		}
		if rng.IntN(3) > 0 { // now and then, several steps between syncs
			continue
		}
		x.Sync(s)
		checkSums(t, s, x, step)
		require.NoError(t, x.Check(s), "step %d", step)
		for _, g := range []int32{1, 2, 4} {
			r := Request{Sets: []PodSet{{Pods: 1, GPUs: g}}, Eligible: x.Eligible(), Restriction: x}
			v.begin(s, &r)
			v.setCurrent(0)
			require.True(t, v.exact, "a restricted plain request reads exact capacities")
			got, gok := v.wideBest(1)
			lo, hi := tr.Children(0)
			want, wok := v.bestDomainRestricted(int32(lo), int32(hi), 1)
			require.Equal(t, wok, gok, "step %d g=%d", step, g)
			require.Equal(t, want, got, "step %d g=%d", step, g)
		}
		for _, m := range []int32{250, 300, 750} {
			r := Request{Sets: []PodSet{{Pods: 1, GPUs: 1, Milli: m}}, Eligible: x.Eligible(), Restriction: x}
			v.begin(s, &r)
			v.setCurrent(0)
			got, gok := v.wideBest(1)
			lo, hi := tr.Children(0)
			want, wok := v.bestScan(1, int32(lo), int32(hi), 1)
			require.Equal(t, wok, gok, "step %d milli=%d", step, m)
			require.Equal(t, want, got, "step %d milli=%d", step, m)
		}
	}
}

// checkSums compares x's sums with a count over every domain's closed hosts.
func checkSums(t *testing.T, s *topology.State, x *Restriction, step int) {
	tr := s.Tree()
	for d := range topology.DomainID(tr.NumDomains()) {
		var free, shared int64
		var part [topology.PartialBuckets]int32
		hist := make([]int32, x.nm*x.nb)
		lo, hi := tr.Hosts(d)
		for h := lo; h < hi; h++ {
			if !x.Closed(h) {
				continue
			}
			free += int64(s.HostFree(h))
			shared += s.HostSharedMilli(h)
			for b, c := range s.HostPartialGPUs(h) {
				part[b] += c
			}
			hist[tr.HostModel(h)*x.nb+s.HostFree(h)]++
		}
		require.Equal(t, free, x.freeAll(d), "step %d domain %s: free", step, tr.DomainPath(d))
		require.Equal(t, shared, x.dshare[d], "step %d domain %s: shared", step, tr.DomainPath(d))
		require.Equal(t, part[:], x.partOf(d), "step %d domain %s: partly used", step, tr.DomainPath(d))
		require.Equal(t, hist, x.histRow(d), "step %d domain %s: histogram", step, tr.DomainPath(d))
	}
}

// TestRestrictionCheck: Check finds sums that differ from a recount.
func TestRestrictionCheck(t *testing.T) {
	tr, err := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{2, 3}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := topology.NewState(tr)
	x := NewRestriction(tr)
	require.NoError(t, x.Close(4))
	require.NoError(t, x.Check(s))
	x.dshare[1]++
	require.ErrorContains(t, x.Check(s), "differ from a recount")
}

// TestRestrictionManyChanges: past maxPend closings and openings between
// two syncs, the sums are counted afresh, and exact.
func TestRestrictionManyChanges(t *testing.T) {
	tr, err := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{4, 5}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := topology.NewState(tr)
	require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(1, topology.Job{}, topology.Pod{Host: 3, GPUs: 1})}}))
	x := NewRestriction(tr)
	require.NoError(t, x.Close(2))
	x.Sync(s)
	for i := range maxPend + 3 {
		h := topology.HostID(i % tr.NumHosts())
		if x.Closed(h) {
			require.NoError(t, x.Open(h))
		} else {
			require.NoError(t, x.Close(h))
		}
	}
	require.Nil(t, x.s, "the sums are dropped")
	x.Sync(s)
	checkSums(t, s, x, 0)
	require.NoError(t, x.Check(s))
}

// TestRestrictionErrors: hosts out of range and mismatched bitsets are
// rejected, changing nothing.
func TestRestrictionErrors(t *testing.T) {
	tr, err := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{2, 3}, GPUsPerHost: 4})
	require.NoError(t, err)
	x := NewRestriction(tr)
	require.ErrorIs(t, x.Close(-1), ErrInvalid)
	require.ErrorIs(t, x.Open(topology.HostID(tr.NumHosts())), ErrInvalid)
	require.NoError(t, x.Close(2))
	require.True(t, x.Closed(2))
	require.False(t, x.Closed(99))
	s := topology.NewState(tr)
	var v Solver
	var plan Plan
	copied := append([]uint64(nil), x.Eligible()...)
	_, _, err = v.Place(s, &Request{Sets: []PodSet{{Pods: 1, GPUs: 1}}, Eligible: copied, Restriction: x}, &plan)
	require.ErrorIs(t, err, ErrInvalid)
	other, err := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{2, 3}, GPUsPerHost: 4})
	require.NoError(t, err)
	y := NewRestriction(other)
	require.NoError(t, y.Close(0))
	y.Sync(s) // a State over another tree: nothing counted, nothing copied
	require.Nil(t, y.s)
	require.Nil(t, y.CloneFor(s).s)
	_, _, err = v.Place(s, &Request{Sets: []PodSet{{Pods: 1, GPUs: 1}}, Eligible: y.Eligible(), Restriction: y}, &plan)
	require.ErrorIs(t, err, ErrInvalid)
	ok, _, err := v.Place(s, &Request{Sets: []PodSet{{Pods: 6, GPUs: 4}}, Eligible: x.Eligible(), Restriction: x}, &plan)
	require.NoError(t, err)
	require.False(t, ok, "host 2 is closed: 5 hosts of 4 GPUs are open")
}

// TestRestrictedReason: a one-set gang that no domain fits once hosts are
// left out says which level failed and what the best domain holds — with a
// Restriction exactly, with a bitset alone a bound (it used to blame the
// pod sets together, with only one).
func TestRestrictedReason(t *testing.T) {
	tr, err := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{3, 4}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := topology.NewState(tr)
	x := NewRestriction(tr)
	for h := topology.HostID(3); int(h) < tr.NumHosts(); h += 4 {
		require.NoError(t, x.Close(h))
	}
	rack, _ := tr.LevelByName("rack")
	var v Solver
	var plan Plan
	for _, restricted := range []bool{false, true} {
		r := Request{Required: rack, Sets: []PodSet{{Pods: 4, GPUs: 4}}, Eligible: x.Eligible()}
		if restricted {
			r.Restriction = x
		}
		ok, why, err := v.Place(s, &r, &plan)
		require.NoError(t, err)
		require.False(t, ok)
		require.Equal(t, RequiredLevel, why.Code, "restricted %v: %s", restricted, why.Format(tr))
		require.Equal(t, int64(3), why.Have, "restricted %v: %s", restricted, why.Format(tr))
	}
}
