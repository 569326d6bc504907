package placement

import (
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestWideIndex compares the root indexes (wideBest, for one to wideNeedMax
// pods of whole GPUs and one fractional pod) with a plain scan of the
// root's children after every step of random Applies (whole GPUs and
// fractions), rejected Deltas, Clones and snapshot round trips; each index
// is asked at random steps, so that it catches up over the changes of
// several.
func TestWideIndex(t *testing.T) {
	seed := testkit.Seed(t, 7)
	rng := rand.New(rand.NewPCG(seed, 1))
	tr, err := topology.BuildShape(topology.Shape{Levels: []string{"block", "rack"}, FanOut: []int{80, 2, 3}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := topology.NewState(tr)
	var v Solver
	next := topology.JobID(0)
	live := []topology.JobID{}
	check := func() {
		for _, g := range []int32{1, 2, 4} {
			for need := int64(1); need <= wideNeedMax; need++ {
				if rng.IntN(3) == 0 { // left behind: the next ask catches up over several steps
					continue
				}
				r := Request{Sets: []PodSet{{Pods: int32(need), GPUs: g}}}
				v.begin(s, &r)
				v.setCurrent(0)
				got, gok := v.wideBest(need)
				if gok { // the capacity it hands to fill is capOf's
					require.Equal(t, v.capOf(1, got), v.capAt(1, got), "g=%d need=%d", g, need)
				}
				lo, hi := tr.Children(0)
				want, wok := v.bestDomainExact(int32(lo), int32(hi), need)
				require.Equal(t, wok, gok, "g=%d need=%d", g, need)
				require.Equal(t, want, got, "g=%d need=%d", g, need)
			}
		}
		for _, m := range []int32{100, 250, 300, 500, 750} {
			if rng.IntN(3) == 0 {
				continue
			}
			r := Request{Sets: []PodSet{{Pods: 1, GPUs: 1, Milli: m}}}
			v.begin(s, &r)
			v.setCurrent(0)
			got, gok := v.wideBest(1)
			if gok {
				require.Equal(t, v.capOf(1, got), v.capAt(1, got), "milli=%d", m)
			}
			lo, hi := tr.Children(0)
			want, wok := v.bestScan(1, int32(lo), int32(hi), 1)
			require.Equal(t, wok, gok, "milli=%d", m)
			require.Equal(t, want, got, "milli=%d", m)
		}
	}
	for step := range testkit.Steps(t, 3000) {
		s = randomStep(t, rng, tr, s, &live, &next, step)
		check()
	}
}

// randomStep changes s (or returns another State) by one random step: a job
// of 1–3 pods (whole GPUs or fractions) added, a job removed, a rejected
// Delta that changed hosts before failing, a Clone or a snapshot round trip.
func randomStep(t *testing.T, rng *rand.Rand, tr *topology.Tree, s *topology.State, live *[]topology.JobID, next *topology.JobID, step int) *topology.State {
	switch k := rng.IntN(10); {
	case k < 5: // add a job of 1–3 pods on random hosts
		var pods []topology.Pod
		for range 1 + rng.IntN(3) {
			h := topology.HostID(rng.IntN(tr.NumHosts()))
			m := s.HostFreeMask(h)
			lo, _ := tr.HostGPUs(h)
			if g := rng.IntN(tr.HostGPUCount(h)); rng.IntN(2) == 0 && !s.GPUFailed(lo+topology.GPUID(g)) {
				if milli := int32(50 * (1 + rng.IntN(19))); s.GPUMilli(lo+topology.GPUID(g)) >= int(milli) {
					pods = append(pods, topology.Pod{Host: h, GPUs: 1 << g, Milli: milli})
					continue
				}
			}
			if m != 0 {
				pods = append(pods, topology.Pod{Host: h, GPUs: m & -m})
			}
		}
		if len(pods) > 0 && s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(*next, topology.Job{}, pods...)}}) == nil {
			*live = append(*live, *next)
			*next++
		}
	case k < 8 && len(*live) > 0:
		i := rng.IntN(len(*live))
		require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{topology.RemoveJob((*live)[i])}}))
		*live = append((*live)[:i], (*live)[i+1:]...)
	case k == 8: // a rejected Delta that changed hosts before failing
		h := topology.HostID(rng.IntN(tr.NumHosts()))
		require.Error(t, s.Apply(topology.Delta{Ops: []topology.Op{
			topology.SetHostHealth(h, topology.Failed), topology.RemoveJob(topology.MaxJobID)}}))
	default:
		if step%2 == 0 {
			s = s.Clone()
		} else {
			b, err := s.MarshalBinary()
			require.NoError(t, err)
			require.NoError(t, s.UnmarshalBinary(b))
		}
	}
	return s
}

// TestWideIndexBehind: a root index not asked while more runs of touches
// went by than the decoded ring holds (another shape's index kept the
// decoding going) starts over instead of reading overwritten entries. The
// first blocks change (two-GPU capacity), then only the others, for more
// entries than the ring holds; the two-GPU index must see the first ones.
func TestWideIndexBehind(t *testing.T) {
	tr, err := topology.BuildShape(topology.Shape{Levels: []string{"block", "rack"}, FanOut: []int{80, 2, 3}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := topology.NewState(tr)
	var v Solver
	best := func(g int32) (int32, bool) {
		r := Request{Sets: []PodSet{{Pods: 1, GPUs: g}}}
		v.begin(s, &r)
		v.setCurrent(0)
		return v.wideBest(1)
	}
	scan := func(g int32) (int32, bool) {
		r := Request{Sets: []PodSet{{Pods: 1, GPUs: g}}}
		v.begin(s, &r)
		v.setCurrent(0)
		lo, hi := tr.Children(0)
		return v.bestDomainExact(int32(lo), int32(hi), 1)
	}
	next := topology.JobID(0)
	add := func(h topology.HostID) {
		require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(next, topology.Job{}, topology.Pod{Host: h, GPUs: 1})}}))
		next++
	}
	best(2) // the two-GPU index, built now
	b0, _ := tr.Children(0)
	for b := range topology.DomainID(20) { // one GPU taken on the first rack's hosts of blocks 0-19: they hold fewer two-GPU pods
		r0, _ := tr.Children(b0 + b)
		lo, _ := tr.Hosts(r0)
		for h := lo; h < lo+3; h++ {
			add(h)
			best(1)
		}
	}
	lo, _ := tr.Hosts(b0 + 40)
	var fifo []topology.JobID
	for i := range topology.TouchLogSize + 100 { // then runs in blocks 40-79 only, one per Apply
		if i%80 < 40 {
			fifo = append(fifo, next)
			add(lo + topology.HostID(6*(i%40)))
		} else {
			require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{topology.RemoveJob(fifo[0])}}))
			fifo = fifo[1:]
		}
		best(1)
	}
	want, wok := scan(2)
	got, gok := best(2)
	require.Equal(t, wok, gok)
	require.Equal(t, want, got)
}
