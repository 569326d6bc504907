package placement_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// TestPlaceWithout checks placing as if jobs were gone against the oracle on
// the State with those jobs removed: same feasibility (single pod sets: the
// solver is exact there), plans valid there, and the scope honoured; and
// PlaceWithoutPods, given the jobs' pods, gives the same plans.
func TestPlaceWithout(t *testing.T) {
	seed := testSeed(t)
	n := testSteps(t, 2000)
	var v placement.Solver
	var plan placement.Plan
	checked, fits := 0, 0
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)+1<<32))
		tree := genTree(rng, 8)
		s := topology.NewState(tree)
		nominees := genLoad(rng, s)
		r := genRequest(rng, tree, nominees, reqLimits{maxPods: 10, maxGPUs: 8, maxSets: 1, policies: true})
		var live, gone []topology.JobID
		for j := range s.JobIDBound() {
			if s.HasJob(j) {
				live = append(live, j)
				if rng.IntN(2) == 0 {
					gone = append(gone, j)
				}
			}
		}
		after := s.Clone()
		for _, j := range gone {
			require.NoError(t, after.Apply(topology.Delta{Ops: []topology.Op{topology.RemoveJob(j)}}))
		}
		scope := topology.DomainID(0)
		if rng.IntN(3) == 0 {
			scope = topology.DomainID(rng.IntN(tree.NumDomains()))
		}
		before, _ := s.MarshalBinary()
		ok, _, err := v.PlaceWithout(s, r, scope, gone, &plan)
		require.NoError(t, err)
		now, _ := s.MarshalBinary()
		require.Equal(t, before, now, "PlaceWithout changed the State")
		var given placement.Plan // the same given the jobs' pods
		okG, _, err := v.PlaceWithoutPods(s, r, scope, gone, s.AppendJobsPods(nil, gone, make([]int32, len(gone))), &given)
		require.NoError(t, err, "instance %d (seed %d)", i, seed)
		require.Equal(t, ok, okG, "instance %d (seed %d), given the pods", i, seed)
		if ok {
			require.Equal(t, plan.Pods, given.Pods, "instance %d (seed %d), given the pods", i, seed)
		}
		o := newOracle(after, r)
		want := feasibleInScope(o, tree, r, scope)
		checked++
		require.Equal(t, want, ok, "instance %d (seed %d): gone %v scope %s\n%s", i, seed, gone, tree.DomainPath(scope), describe(after, r))
		if !ok {
			continue
		}
		fits++
		require.Empty(t, o.validate(&plan), "instance %d", i)
		lo, hi := tree.Hosts(scope)
		for _, p := range plan.Pods {
			require.True(t, p.Host >= lo && p.Host < hi, "pod outside scope %s", tree.DomainPath(scope))
		}
		require.NoError(t, after.Apply(plan.Delta()), "instance %d", i)
		require.NoError(t, after.Check())
		_ = slices.Contains(live, 0)
	}
	t.Logf("seed %d: %d instances, %d fit", seed, checked, fits)
}

func feasibleInScope(o *oracle, tree *topology.Tree, r *placement.Request, scope topology.DomainID) bool {
	sl := tree.DomainLevel(scope)
	if r.Required <= sl {
		return o.feasibleIn(tree.Hosts(scope))
	}
	if r.Required == tree.HostLevel() {
		lo, hi := tree.Hosts(scope)
		for h := lo; h < hi; h++ {
			if o.feasibleIn(h, h+1) {
				return true
			}
		}
		return false
	}
	lo, hi := tree.Descendants(scope, r.Required)
	for d := lo; d < hi; d++ {
		if o.feasibleIn(tree.Hosts(d)) {
			return true
		}
	}
	return false
}

// TestPlaceWithoutPodsErrors: pods that cannot be the jobs gone's — too
// few or too many, a host outside the tree, GPUs the host does not have, a
// fraction of two GPUs or of a whole GPU — are rejected with an error
// naming what is wrong, and the State is not changed.
func TestPlaceWithoutPodsErrors(t *testing.T) {
	tree, err := topology.BuildShape(topology.NVL72(1))
	require.NoError(t, err)
	s := topology.NewState(tree)
	require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{
		topology.AddJob(1, topology.Job{Priority: 1, Preemptible: true}, topology.Pod{Host: 0, GPUs: 0xF}, topology.Pod{Host: 1, GPUs: 0x3}),
	}}))
	r := &placement.Request{Job: 9, Priority: 5, Sets: []placement.PodSet{{Pods: 1, GPUs: 4}}}
	gone := []topology.JobID{1}
	pods := s.AppendJobsPods(nil, gone, make([]int32, 1))
	var v placement.Solver
	var plan placement.Plan
	ok, _, err := v.PlaceWithoutPods(s, r, 0, gone, pods, &plan)
	require.NoError(t, err)
	require.True(t, ok)
	before, _ := s.MarshalBinary()
	for _, c := range []struct {
		pods []topology.Pod
		want string
	}{
		{pods[:1], "1 pods given for jobs gone that have 2"},
		{append(slices.Clone(pods), pods[0]), "3 pods given for jobs gone that have 2"},
		{[]topology.Pod{pods[0], {Host: -1, GPUs: 1}}, "pod 1 of the jobs gone: host -1 out of range"},
		{[]topology.Pod{pods[0], {Host: topology.HostID(tree.NumHosts()), GPUs: 1}}, "out of range"},
		{[]topology.Pod{pods[0], {Host: 1, GPUs: 0x10}}, "pod 1 of the jobs gone: GPUs 0x10, milli 0 on host 1 of 4 GPUs"},
		{[]topology.Pod{pods[0], {Host: 1, Milli: 300}}, "GPUs 0x0, milli 300"},
		{[]topology.Pod{pods[0], {Host: 1, GPUs: 0x3, Milli: 500}}, "GPUs 0x3, milli 500"},
		{[]topology.Pod{pods[0], {Host: 1, GPUs: 0x1, Milli: 1000}}, "milli 1000"},
	} {
		_, _, err := v.PlaceWithoutPods(s, r, 0, gone, c.pods, &plan)
		require.ErrorIs(t, err, placement.ErrInvalid)
		require.ErrorContains(t, err, c.want)
	}
	now, _ := s.MarshalBinary()
	require.Equal(t, before, now)
	// Enough pods for the one pass over them (dense): a bad one found there.
	var eight []topology.Pod
	for h := range topology.HostID(8) {
		eight = append(eight, topology.Pod{Host: 10 + h, GPUs: 0xF})
	}
	require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(2, topology.Job{Priority: 1, Preemptible: true}, eight...)}}))
	gone = []topology.JobID{1, 2}
	pods = s.AppendJobsPods(nil, gone, make([]int32, 2))
	ok, _, err = v.PlaceWithoutPods(s, r, 0, gone, pods, &plan)
	require.NoError(t, err)
	require.True(t, ok)
	before, _ = s.MarshalBinary()
	for _, c := range []struct {
		at   int
		pod  topology.Pod
		want string
	}{
		{7, topology.Pod{Host: -3, GPUs: 0xF}, "pod 7 of the jobs gone: host -3 out of range"},
		{9, topology.Pod{Host: 12, GPUs: 0x1F}, "pod 9 of the jobs gone: GPUs 0x1f, milli 0 on host 12 of 4 GPUs"},
		{0, topology.Pod{Host: 12, GPUs: 0x3, Milli: 10}, "pod 0 of the jobs gone: GPUs 0x3, milli 10"},
	} {
		bad := slices.Clone(pods)
		bad[c.at] = c.pod
		_, _, err := v.PlaceWithoutPods(s, r, 0, gone, bad, &plan)
		require.ErrorIs(t, err, placement.ErrInvalid)
		require.ErrorContains(t, err, c.want)
	}
	now, _ = s.MarshalBinary()
	require.Equal(t, before, now)
}
