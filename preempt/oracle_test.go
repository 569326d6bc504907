package preempt_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/preempt"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// The oracle: every subset of the candidate victims (preemptible jobs of
// priority below the request's), in cost order — highest priority, then
// count, then milli-GPUs held — each decided by removing the subset from a
// clone of the State and calling placement.Solver.Place on it (placement is
// oracle-tested itself). The first subset that fits is the optimum. It uses
// no code of package preempt.

type oracle struct {
	s     *topology.State
	r     *placement.Request
	cands []topology.JobID
	place placement.Solver
	plan  placement.Plan
	calls int
}

func candidates(s *topology.State, prio int32) []topology.JobID {
	var out []topology.JobID
	for j := range s.JobIDBound() {
		if info, ok := s.JobInfo(j); ok && info.Preemptible && info.Priority < prio {
			out = append(out, j)
		}
	}
	return out
}

// fitsWithout reports whether the request fits once the jobs gone are removed.
func (o *oracle) fitsWithout(gone []topology.JobID) bool {
	o.calls++
	c := o.s.Clone()
	for _, j := range gone {
		if err := c.Apply(topology.Delta{Ops: []topology.Op{topology.RemoveJob(j)}}); err != nil {
			panic(err)
		}
	}
	ok, _, err := o.place.Place(c, o.r, &o.plan)
	if err != nil {
		panic(err)
	}
	return ok
}

func costOf(s *topology.State, v []topology.JobID) preempt.Cost {
	c := preempt.Cost{Priority: preempt.NoPriority, Victims: len(v)}
	for _, j := range v {
		info, _ := s.JobInfo(j)
		c.Priority = max(c.Priority, info.Priority)
		c.Milli += s.JobMilliGPU(j)
	}
	return c
}

// optimum returns the cheapest cost of a subset that makes the request fit,
// and false if none does (the full set decides: feasibility grows with the
// set for one pod set, which placement places exactly).
func (o *oracle) optimum() (preempt.Cost, bool) {
	n := len(o.cands)
	if !o.fitsWithout(o.cands) {
		return preempt.Cost{}, false
	}
	type sub struct {
		mask uint32
		cost preempt.Cost
	}
	subs := make([]sub, 0, 1<<n)
	for mask := uint32(0); mask < 1<<n; mask++ {
		subs = append(subs, sub{mask, costOf(o.s, o.subset(mask))})
	}
	slices.SortStableFunc(subs, func(a, b sub) int { return a.cost.Compare(b.cost) })
	for _, x := range subs {
		if o.fitsWithout(o.subset(x.mask)) {
			return x.cost, true
		}
	}
	panic("the full set fits but no subset does")
}

func (o *oracle) subset(mask uint32) []topology.JobID {
	var v []topology.JobID
	for i, j := range o.cands {
		if mask&(1<<i) != 0 {
			v = append(v, j)
		}
	}
	return v
}

// TestOracle compares Planner.Plan with the oracle on small random clusters
// with at most 14 candidate victims: same feasibility, the optimal cost, an
// irreducible victim set, a plan valid once the victims are gone (Check
// clean) and a nomination that applies.
func TestOracle(t *testing.T) {
	seed := testSeed(t)
	n := testSteps(t, 1500)
	var p preempt.Planner
	var res preempt.Result
	checked, fits, withVictims, exact := 0, 0, 0, 0
	var byCount [16]int
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		tree := genTree(rng, 10)
		s := topology.NewState(tree)
		nominees := genLoad(rng, s, 6+rng.IntN(14))
		r := genRequest(rng, tree, nominees, 1)
		if r.Validate(tree) != nil {
			continue
		}
		o := &oracle{s: s, r: r, cands: candidates(s, r.Priority)}
		if len(o.cands) > 14 {
			continue
		}
		before, _ := s.MarshalBinary()
		ok, why, err := p.Plan(s, r, 10, 1000, &res)
		require.NoError(t, err, "instance %d", i)
		after, _ := s.MarshalBinary()
		require.Equal(t, before, after, "Plan changed the State")
		require.Zero(t, preempt.Fallbacks(&p), "instance %d: model and placement disagreed", i)
		want, feasible := o.optimum()
		checked++
		require.Equal(t, feasible, ok, "instance %d (seed %d): feasible %v, planner %v (%s)", i, seed, feasible, ok, why.Format(tree))
		if !ok {
			require.NotEqual(t, preempt.Fits, why.Code)
			require.NotEmpty(t, why.Format(tree))
			continue
		}
		fits++
		if len(res.Victims) > 0 {
			withVictims++
		}
		byCount[min(len(res.Victims), 15)]++
		require.Equal(t, want, res.Cost, "instance %d (seed %d): victims %v", i, seed, res.Victims)
		require.Equal(t, costOf(s, res.Victims), res.Cost)
		if res.Exact {
			exact++
			require.Equal(t, res.Cost, res.Bound)
		}
		require.False(t, res.Cost.Less(res.Bound), "bound above the cost")
		checkResult(t, s, r, &res, i)
		requireIrreducible(t, o, res.Victims, fmt.Sprintf("instance %d", i))
	}
	t.Logf("seed %d: %d instances checked, %d fit (%d with victims, %d exact, %d by the top-down answer); optimum matched on all",
		seed, checked, fits, withVictims, exact, preempt.TopDowns(&p))
	t.Logf("answers by number of victims: %v", byCount)
}

// requireIrreducible fails unless the request fits nowhere without any one
// of victims (o.fitsWithout); what names the instance in the message.
func requireIrreducible(t *testing.T, o *oracle, victims []topology.JobID, what string) {
	t.Helper()
	for k := range victims {
		rest := slices.Delete(slices.Clone(victims), k, k+1)
		require.False(t, o.fitsWithout(rest), "%s: victim %d is not needed", what, victims[k])
	}
}

// checkResult checks an answer against the State: victims are sorted
// candidates, the plan applies once they are removed (Check clean), and the
// nomination applies to the State as it is (and, where the State has no
// nominations, holds exactly the plan's GPUs).
func checkResult(t *testing.T, s *topology.State, r *placement.Request, res *preempt.Result, i int) {
	t.Helper()
	require.True(t, slices.IsSorted(res.Victims))
	for _, j := range res.Victims {
		info, ok := s.JobInfo(j)
		require.True(t, ok && info.Preemptible && info.Priority < r.Priority, "instance %d: job %d is no candidate", i, j)
	}
	c := s.Clone()
	for _, j := range res.Victims {
		require.NoError(t, c.Apply(topology.Delta{Ops: []topology.Op{topology.RemoveJob(j)}}))
	}
	require.NoError(t, c.Apply(res.Plan.Delta()), "instance %d: the plan does not apply", i)
	require.NoError(t, c.Check())
	tree := s.Tree()
	lo, hi := tree.Hosts(res.Scope)
	for _, pod := range res.Plan.Pods {
		require.True(t, pod.Host >= lo && pod.Host < hi, "instance %d: a pod outside the scope %s", i, tree.DomainPath(res.Scope))
	}
	if pods := len(res.Plan.Pods); pods > 1 && r.Required > 0 && r.Required < tree.HostLevel() {
		require.Equal(t, r.Required, tree.DomainLevel(res.Scope), "instance %d: the scope is not of the required level", i)
	}
	if len(res.Victims) == 0 {
		require.Empty(t, res.Nomination.GPUs)
		return
	}
	// The nomination is every GPU of the plan, ascending and once, but those
	// nominated for another job of equal or higher priority; the other
	// nominations it overlaps are displaced.
	var want []topology.GPUID
	var displaced []topology.JobID
	for _, pod := range res.Plan.Pods {
		lo, _ := s.Tree().HostGPUs(pod.Host)
		for g := range 64 {
			if pod.GPUs&(1<<uint(g)) == 0 {
				continue
			}
			gpu := lo + topology.GPUID(g)
			if j, ok := s.GPUNominee(gpu); ok && j != r.Job {
				if n, _ := s.NominationOf(j); n.Priority >= r.Priority {
					continue
				}
				displaced = append(displaced, j)
			}
			want = append(want, gpu)
		}
	}
	slices.Sort(want)
	want = slices.Compact(want)
	slices.Sort(displaced)
	displaced = slices.Compact(displaced)
	require.Equal(t, len(want), len(res.Nomination.GPUs), "instance %d: the nomination", i)
	if len(want) > 0 {
		require.Equal(t, want, res.Nomination.GPUs, "instance %d: the nomination", i)
	}
	require.Equal(t, len(displaced), len(res.Displaced), "instance %d: the nominations displaced", i)
	if len(displaced) > 0 {
		require.Equal(t, displaced, res.Displaced, "instance %d: the nominations displaced", i)
	}
	c = s.Clone()
	d := res.Delta()
	require.NoError(t, c.Apply(d), "instance %d: the nomination does not apply", i)
	require.NoError(t, c.Check())
	for _, j := range res.Victims { // evict, then place: the nomination is the request's
		require.NoError(t, c.Apply(topology.Delta{Ops: []topology.Op{topology.RemoveJob(j)}}))
	}
	require.NoError(t, c.Apply(res.Plan.Delta()), "instance %d: the plan does not apply after the nomination", i)
	require.NoError(t, c.Check())
	_, held := c.NominationOf(r.Job)
	require.False(t, held, "placing the request releases its nomination")
}

// TestOracleGangs is TestOracle for gangs of two pod sets, which placement
// places by heuristics (exhaustively only when small): the answer must be
// valid, irreducible and, where the oracle's premise holds (feasibility
// grows with the victim set), optimal.
func TestOracleGangs(t *testing.T) {
	seed := testSeed(t)
	n := testSteps(t, 400)
	var p preempt.Planner
	var res preempt.Result
	checked, fits, optimal, missed := 0, 0, 0, 0
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)+1<<40))
		tree := genTree(rng, 8)
		s := topology.NewState(tree)
		nominees := genLoad(rng, s, 6+rng.IntN(10))
		r := genRequest(rng, tree, nominees, 2)
		if r.Validate(tree) != nil {
			continue
		}
		o := &oracle{s: s, r: r, cands: candidates(s, r.Priority)}
		if len(o.cands) > 12 {
			continue
		}
		ok, _, err := p.Plan(s, r, 10, 1000, &res)
		require.NoError(t, err, "instance %d", i)
		checked++
		if !ok {
			if _, feasible := o.optimum(); feasible {
				missed++
			}
			continue
		}
		fits++
		require.Equal(t, costOf(s, res.Victims), res.Cost)
		checkResult(t, s, r, &res, i)
		requireIrreducible(t, o, res.Victims, fmt.Sprintf("instance %d", i))
		if want, feasible := o.optimum(); feasible && want == res.Cost {
			optimal++
		}
	}
	t.Logf("seed %d: %d gangs checked, %d fit, %d at the oracle's optimum, %d missed", seed, checked, fits, optimal, missed)
}

// TestOracleBounded runs the oracle instances with small budgets, so that
// the greedy descent and early stops answer: every answer stays valid and
// irreducible, no cheaper than the optimum, its Bound no dearer than the
// optimum, and Exact only when it is the optimum.
func TestOracleBounded(t *testing.T) {
	seed := testSeed(t)
	n := testSteps(t, 1500)
	configs := []preempt.Config{{ExactVictims: 1}, {ExactVictims: 2, MaxScopes: 1, MaxTests: 1}, {MaxSubsets: 3}}
	for ci, cfg := range configs {
		p := preempt.Planner{Config: cfg}
		var res preempt.Result
		fits, inexact := 0, 0
		for i := range n {
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			tree := genTree(rng, 10)
			s := topology.NewState(tree)
			nominees := genLoad(rng, s, 6+rng.IntN(14))
			r := genRequest(rng, tree, nominees, 1)
			if r.Validate(tree) != nil {
				continue
			}
			o := &oracle{s: s, r: r, cands: candidates(s, r.Priority)}
			if len(o.cands) > 14 {
				continue
			}
			ok, _, err := p.Plan(s, r, 10, 1000, &res)
			require.NoError(t, err)
			want, feasible := o.optimum()
			require.Equal(t, feasible, ok, "config %d, instance %d", ci, i)
			if !ok {
				continue
			}
			fits++
			require.False(t, res.Cost.Less(want), "config %d, instance %d: cheaper than the optimum", ci, i)
			require.False(t, want.Less(res.Bound), "config %d, instance %d: bound %v above the optimum %v", ci, i, res.Bound, want)
			if res.Exact {
				require.Equal(t, want, res.Cost, "config %d, instance %d: exact but not optimal", ci, i)
			} else {
				inexact++
			}
			checkResult(t, s, r, &res, i)
			requireIrreducible(t, o, res.Victims, fmt.Sprintf("config %d, instance %d", ci, i))
		}
		t.Logf("config %+v: %d fit, %d not proven optimal", cfg, fits, inexact)
	}
}
