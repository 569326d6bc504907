package preempt_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// genSlotRequest returns a gang the slot bound applies to: one pod set of
// whole GPUs, 2–8 pods, inside one domain of level 1; sometimes with CPU,
// exclusivity or eligible hosts (which the bound must survive).
func genSlotRequest(rng *rand.Rand, t *topology.Tree, nominees []topology.JobID, gangs bool) *placement.Request {
	r := genRequest(rng, t, nominees, 1)
	r.Required = 1
	r.Preferred = topology.NoLevel
	r.Sets[0] = placement.PodSet{Pods: int32(2 + rng.IntN(3)), GPUs: pick[int32](rng, 1, 2, 4, 4, 4, 8)}
	if rng.IntN(5) == 0 {
		r.Sets[0].CPUMilli = 8000
	}
	if rng.IntN(4) != 0 {
		r.Priority = int32(9 + rng.IntN(3)) // above most jobs: more candidates
	}
	if !gangs {
		return r
	}
	switch rng.IntN(6) { // a gang of two sets, the first one primary: the bounds count its pods
	case 0:
		r.Sets = append(r.Sets, placement.PodSet{Pods: 1, CPUMilli: pick[int32](rng, 4000, 60000), MemoryMiB: 8192}) // a launcher
	case 1:
		r.Sets = append(r.Sets, placement.PodSet{Pods: 1, GPUs: 1, Milli: 500})
	case 2:
		r.Sets = append(r.Sets, placement.PodSet{Pods: 1, GPUs: 1})
	}
	return r
}

// genSlotTree is genTree with hosts of one size (mostly), so that a pod of
// the request may need a host emptied and the slot bound counts several
// victims.
func genSlotTree(rng *rand.Rand, maxHosts int) *topology.Tree {
	levels := []string{"rack"}
	if rng.IntN(2) == 0 {
		levels = []string{"block", "rack"}
	}
	blocks, racks := 1+rng.IntN(3), 1+rng.IntN(3)
	gpus := pick(rng, 4, 4, 8)
	hosts := make([]topology.HostSpec, 2+rng.IntN(maxHosts-1))
	for i := range hosts {
		b, r := rng.IntN(blocks), rng.IntN(racks)
		path := []string{fmt.Sprintf("r%d", b*racks+r)}
		if len(levels) == 2 {
			path = []string{fmt.Sprintf("b%d", b), fmt.Sprintf("b%dr%d", b, r)}
		}
		hosts[i] = topology.HostSpec{Name: fmt.Sprintf("h%d", i), Path: path, GPUs: gpus,
			Model: "A", CPUMilli: 64000, MemoryMiB: 262144}
		if rng.IntN(8) == 0 {
			hosts[i].GPUs = 2
		}
	}
	t, err := topology.BuildHosts(levels, hosts)
	if err != nil {
		panic(err)
	}
	return t
}

// genSlotLoad fills most GPUs of s with small jobs (one or two pods of one
// or two GPUs, or a fraction), few of them free, so that the request needs
// hosts emptied by several victims; priorities 0–9, most preemptible, some
// exclusive. Half the instances take genLoad's load instead.
func genSlotLoad(rng *rand.Rand, s *topology.State) []topology.JobID {
	if rng.IntN(2) == 0 {
		return genLoad(rng, s, 16+rng.IntN(30))
	}
	t := s.Tree()
	id := topology.JobID(0)
	for h := range topology.HostID(t.NumHosts()) {
		for try := 0; try < 8 && s.HostUnusedMask(h) != 0 && rng.IntN(8) != 0; try++ {
			info := topology.Job{Priority: int32(rng.IntN(10)), Preemptible: rng.IntN(6) != 0, Movable: true,
				Exclusive: rng.IntN(20) == 0, Required: topology.NoLevel, Preferred: topology.NoLevel}
			unused := s.HostUnusedMask(h)
			p := topology.Pod{Host: h, GPUs: 1 << randomBit(rng, unused)}
			if m := unused &^ p.GPUs; m != 0 && rng.IntN(2) == 0 {
				p.GPUs |= 1 << randomBit(rng, m)
			} else if rng.IntN(6) == 0 {
				p.GPUs, p.Milli = p.GPUs&-p.GPUs, int32(100*(1+rng.IntN(9)))
			}
			pods := []topology.Pod{p}
			if h2 := topology.HostID(rng.IntN(t.NumHosts())); h2 != h && rng.IntN(5) == 0 && s.HostUnusedMask(h2) != 0 {
				pods = append(pods, topology.Pod{Host: h2, GPUs: 1 << randomBit(rng, s.HostUnusedMask(h2))})
			}
			if s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(id, info, pods...)}}) == nil {
				id++
			}
		}
	}
	return nil
}

// TestSlotKeys checks the slot bound domain by domain against the oracle
// restricted to the domain (eligible hosts: the domain's): the bound of
// every leaf is no dearer than the cheapest victim set that fits the
// request there, and a leaf the bound calls infeasible has none; with the
// summary's top cut to 1–3 candidates in three instances of four. These are
// the cases where pruning by the bound would skip the optimal domain.
func TestSlotKeys(t *testing.T) {
	var p preempt.Planner
	requireLeafKeys(t, 3<<40, func(i int, s *topology.State, r *placement.Request) ([]topology.DomainID, []preempt.Cost, []bool) {
		preempt.SetSlotTop(&p, i%4) // a summary of 1–3 candidates: most lie beyond it
		return preempt.SlotKeys(&p, s, r)
	})
}

// slotInstance draws instance i of the slot and credit bounds' tests (salt
// tells the tests apart): a gang the bounds apply to on a busy cluster, or
// nil if the draw is not a valid request.
func slotInstance(seed uint64, i int, salt uint64) (*topology.State, *placement.Request) {
	return slotInstanceOf(seed, i, salt, true)
}

// slotInstanceOf is slotInstance, its request of one pod set unless gangs.
func slotInstanceOf(seed uint64, i int, salt uint64, gangs bool) (*topology.State, *placement.Request) {
	rng := rand.New(rand.NewPCG(seed, uint64(i)+salt))
	tree := genSlotTree(rng, 16)
	s := topology.NewState(tree)
	nominees := genSlotLoad(rng, s)
	r := genSlotRequest(rng, tree, nominees, gangs)
	if r.Validate(tree) != nil {
		return s, nil
	}
	return s, r
}

// requireLeafKeys checks the leaf bounds keys returns for every instance
// that needs victims against the oracle restricted to each leaf domain.
func requireLeafKeys(t *testing.T, salt uint64, keys func(int, *topology.State, *placement.Request) ([]topology.DomainID, []preempt.Cost, []bool)) {
	seed := testSeed(t)
	n := testSteps(t, 2000)
	domains, raised, equal, infeasible := 0, 0, 0, 0
	for i := range n {
		s, r := slotInstance(seed, i, salt)
		if r == nil {
			continue
		}
		var probe placement.Solver
		var plan placement.Plan
		if fits, _, _ := probe.Place(s, r, &plan); fits {
			continue // no victims: the search never starts
		}
		leaves, ks, oks := keys(i, s, r)
		for k, d := range leaves {
			rd := restrictTo(r, s.Tree(), d)
			o := &oracle{s: s, r: rd, cands: inDomain(s, d, candidates(s, r.Priority))}
			if len(o.cands) > 12 {
				continue
			}
			domains++
			want, feasible := o.optimum()
			if !oks[k] {
				infeasible++
				require.False(t, feasible, "instance %d (seed %d), domain %d: the bound says infeasible, the oracle %v", i, seed, d, want)
				continue
			}
			if feasible {
				require.False(t, want.Less(ks[k]), "instance %d (seed %d), domain %d: bound %v above the optimum %v", i, seed, d, ks[k], want)
				if ks[k].Victims > 1 {
					raised++
				}
				if ks[k] == want {
					equal++
				}
			}
		}
	}
	t.Logf("seed %d: %d domains checked, %d bounds of several victims, %d equal to the optimum, %d infeasible",
		seed, domains, raised, equal, infeasible)
}

// restrictTo is r with its eligible hosts limited to domain d's.
func restrictTo(r *placement.Request, t *topology.Tree, d topology.DomainID) *placement.Request {
	rd := *r
	rd.Restriction = nil
	rd.Eligible = make([]uint64, (t.NumHosts()+63)/64)
	lo, hi := t.Hosts(d)
	for h := lo; h < hi; h++ {
		if r.Eligible == nil || r.Eligible[h/64]&(1<<(uint(h)%64)) != 0 {
			rd.Eligible[h/64] |= 1 << (uint(h) % 64)
		}
	}
	return &rd
}

// inDomain keeps the jobs of cands with a pod in d (the others cannot help
// there).
func inDomain(s *topology.State, d topology.DomainID, cands []topology.JobID) []topology.JobID {
	t := s.Tree()
	lo, hi := t.Hosts(d)
	var out []topology.JobID
	for _, j := range cands {
		for _, q := range s.AppendJobPods(nil, j) {
			if q.Host >= lo && q.Host < hi {
				out = append(out, j)
				break
			}
		}
	}
	return out
}

// TestSlotOracle compares Planner.Plan, with the slot bound made at the
// first leaf and without it, with the oracle on gangs the bound applies to:
// the same feasibility, answers valid and irreducible, the optimum when
// proven, and the same cost both ways when both are proven.
func TestSlotOracle(t *testing.T) {
	var with, without preempt.Planner
	preempt.SetSlotBound(&with, 1)
	preempt.SetSlotBound(&without, -1)
	requireBoundOracle(t, 5<<40, &with, &without, func(i int) { preempt.SetSlotTop(&with, i%4) })
}

// requireBoundOracle runs with and without on the bounds' instances and
// checks them against the oracle and each other (see TestSlotOracle);
// before readies with for instance i.
func requireBoundOracle(t *testing.T, salt uint64, with, without *preempt.Planner, before func(i int)) {
	seed := testSeed(t)
	n := testSteps(t, 2000)
	var a, b preempt.Result
	checked, fits, exact := 0, 0, 0
	for i := range n {
		s, r := slotInstance(seed, i, salt)
		if r == nil {
			continue
		}
		o := &oracle{s: s, r: r, cands: candidates(s, r.Priority)}
		if len(o.cands) > 12 {
			continue
		}
		before(i)
		okA, _, errA := with.Plan(s, r, 10, 1000, &a)
		okB, _, errB := without.Plan(s, r, 10, 1000, &b)
		require.NoError(t, errA, "instance %d", i)
		require.NoError(t, errB, "instance %d", i)
		checked++
		want, feasible := o.optimum()
		require.Equal(t, feasible, okA, "instance %d (seed %d): feasibility", i, seed)
		require.Equal(t, okB, okA, "instance %d (seed %d): feasibility both ways", i, seed)
		if !okA {
			continue
		}
		fits++
		checkResult(t, s, r, &a, i)
		require.False(t, a.Cost.Less(want), "instance %d (seed %d): cheaper than the optimum", i, seed)
		require.False(t, want.Less(a.Bound), "instance %d (seed %d): bound %v above the optimum %v", i, seed, a.Bound, want)
		if a.Exact {
			exact++
			require.Equal(t, want, a.Cost, "instance %d (seed %d): exact but not optimal", i, seed)
		}
		if a.Exact && b.Exact {
			require.Equal(t, b.Cost, a.Cost, "instance %d (seed %d)", i, seed)
		}
		requireIrreducible(t, o, a.Victims, fmt.Sprintf("instance %d", i))
	}
	t.Logf("seed %d: %d gangs checked, %d fit, %d proven optimal", seed, checked, fits, exact)
}
