package placement_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestOnePathSameAnswer: placeOne with the last descent's path (one_path.go)
// gives the answer of descending from the root every time, on random trees
// (narrow, wide at the root, and four levels deep) through long runs of
// one-pod requests of every size, whole and fractional, some with CPU, a
// model or exclusivity (which descend afresh), interleaved with what moves
// the keys both ways: fitting plans applied, jobs removed, gangs of whole
// hosts added (more touches than the path looks through), GPUs failed and
// recovered, hosts drained, nominations made and cancelled; a third of the
// requests restricted by a Restriction whose closed hosts change now and
// then (an engine's spares).
func TestOnePathSameAnswer(t *testing.T) {
	seed := testkit.Seed(t, 1)
	rng := rand.New(rand.NewPCG(seed, 0x70617468))
	n := testkit.Steps(t, 60)
	compared, fits, badKeys := 0, 0, 0
	for inst := range n {
		var tree *topology.Tree
		switch rng.IntN(3) {
		case 0:
			tree = genTree(rng, 40)
		case 1:
			tree = wideTree(rng)
		default:
			tree = deepTree(t, rng)
		}
		s := topology.NewState(tree)
		genLoad(rng, s)
		var fast, slow placement.Solver
		slow.SetNoOnePath(true)
		fast.CheckKeys()
		var pf, ps placement.Plan
		o := pathRun{t: t, rng: rng, s: s, rx: placement.NewRestriction(tree)}
		for h := range topology.HostID(tree.NumHosts()) {
			if rng.IntN(3) == 0 {
				require.NoError(t, o.rx.Close(h))
			}
		}
		for step := range 300 {
			if o.perturb() {
				continue
			}
			r := o.request(topology.JobID(1000 + step))
			where := fmt.Sprintf("instance %d step %d (seed %d): %+v", inst, step, seed, r.Sets[0])
			compared++
			if sameAnswer(t, s, r, nil, &fast, &slow, &pf, &ps, where) {
				fits++
				o.placed = append(o.placed, r.Job)
				o.last = r.Sets[0]
			}
		}
		badKeys += fast.BadKeys()
	}
	t.Logf("%d requests compared, %d fits", compared, fits)
	require.Positive(t, fits)
	require.Zero(t, badKeys, "keys the scans handed the path that pathKey counts otherwise")
}

// deepTree is a shape of blocks, SUs and racks with 2, 4 or 8 GPUs a host.
func deepTree(t *testing.T, rng *rand.Rand) *topology.Tree {
	tree, err := topology.BuildShape(topology.Shape{Levels: []string{"block", "su", "rack"},
		FanOut:      []int{1 + rng.IntN(4), 1 + rng.IntN(4), 1 + rng.IntN(4), 1 + rng.IntN(8)},
		GPUsPerHost: pick(rng, 2, 4, 8), CPUMilli: 64000, MemoryMiB: 1 << 20})
	require.NoError(t, err)
	return tree
}

// pathRun is one instance's state: the State and the jobs it placed.
type pathRun struct {
	t      *testing.T
	rng    *rand.Rand
	s      *topology.State
	placed []topology.JobID
	last   placement.PodSet // the last one-pod request placed
	again  bool             // its pod was just removed: ask for the same shape next
	gang   topology.JobID
	nom    bool
	rx     *placement.Restriction // closes random hosts to a third of the requests
}

// request draws a one-pod request: mostly whole GPUs or a fraction, at
// times with CPU, a model or exclusivity.
func (o *pathRun) request(id topology.JobID) *placement.Request {
	rng, tree := o.rng, o.s.Tree()
	set := placement.PodSet{Pods: 1, GPUs: int32(1 + rng.IntN(max(tree.MaxHostGPUs(), 1)))}
	if rng.IntN(4) == 0 {
		set.GPUs, set.Milli = 1, pick[int32](rng, 250, 500, 750, int32(1+rng.IntN(999)))
	}
	if o.again && o.last.Pods == 1 { // the path's keys grew back: its shape asks again
		set = o.last
	}
	o.again = false
	r := &placement.Request{Job: id, Priority: 5, Sets: []placement.PodSet{set}}
	if rng.IntN(3) == 0 {
		r.Restriction, r.Eligible = o.rx, o.rx.Eligible()
	}
	switch rng.IntN(20) {
	case 0:
		r.Sets[0].CPUMilli = 1000
	case 1:
		r.Models = []int{0}
	case 2:
		r.Exclusive = true
	}
	return r
}

// perturb changes the State other than by a one-pod plan, now and then.
func (o *pathRun) perturb() bool {
	rng, s, tree := o.rng, o.s, o.s.Tree()
	var d topology.Delta
	switch x := rng.IntN(20); {
	case x < 3 && len(o.placed) > 0:
		i := rng.IntN(len(o.placed))
		if rng.IntN(2) == 0 { // the last: on the path, whose keys grow back
			i = len(o.placed) - 1
			o.again = true
		}
		d.Ops = append(d.Ops, topology.RemoveJob(o.placed[i]))
		o.placed = append(o.placed[:i], o.placed[i+1:]...)
	case x == 3:
		d.Ops = append(d.Ops, o.wholeGang())
	case x == 4 && tree.NumGPUs() > 0:
		g := topology.GPUID(rng.IntN(tree.NumGPUs()))
		d.Ops = append(d.Ops, topology.SetGPUHealth(g, pick(rng, topology.Failed, topology.Healthy)))
	case x == 5:
		h := topology.HostID(rng.IntN(tree.NumHosts()))
		d.Ops = append(d.Ops, topology.SetHostHealth(h, pick(rng, topology.Draining, topology.Healthy)))
	case x == 6 && !o.nom && tree.NumGPUs() > 0:
		g := topology.GPUID(rng.IntN(tree.NumGPUs()))
		if !s.FreeMask().Test(uint(g)) {
			return false
		}
		d.Ops = append(d.Ops, topology.Nominate(topology.Nomination{Job: 900, Priority: 50, Expiry: 1 << 40, GPUs: []topology.GPUID{g}}))
		o.nom = true
	case x == 7 && o.nom:
		d.Ops = append(d.Ops, topology.CancelNomination(900))
		o.nom = false
	case x == 8 || x == 9:
		h := topology.HostID(rng.IntN(tree.NumHosts()))
		if o.rx.Closed(h) {
			require.NoError(o.t, o.rx.Open(h))
		} else {
			require.NoError(o.t, o.rx.Close(h))
		}
		return true
	default:
		return false
	}
	if s.Apply(d) == nil {
		require.NoError(o.t, s.Check())
	}
	return true
}

// wholeGang adds a gang on every idle host from a random one on (up to 80).
func (o *pathRun) wholeGang() topology.Op {
	s, tree := o.s, o.s.Tree()
	var pods []topology.Pod
	for h := topology.HostID(o.rng.IntN(tree.NumHosts())); int(h) < tree.NumHosts() && len(pods) < 80; h++ {
		if n := tree.HostGPUCount(h); n > 0 && s.HostIdle(h) {
			pods = append(pods, topology.Pod{Host: h, GPUs: 1<<n - 1})
		}
	}
	o.gang++
	id := 2000 + o.gang
	o.placed = append(o.placed, id)
	return topology.AddJob(id, topology.Job{Priority: 5, Required: topology.NoLevel, Preferred: topology.NoLevel}, pods...)
}
