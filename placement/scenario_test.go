package placement_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// Scenarios: small clusters written as pictures, one line per host —
//
//	path/name gpus [cpu]
//
// e.g. "r0/a 8 2000" is host a in rack r0 with 8 GPUs and 2000 milli-CPU
// (default 64000). Each scenario places one request and checks the plan
// against the oracle's validator, Apply and Check, and where the pods go.

// buildScenario builds the tree and an empty State from a picture.
func buildScenario(t *testing.T, levels []string, picture string) *topology.State {
	t.Helper()
	var hosts []topology.HostSpec
	for _, line := range strings.Split(strings.TrimSpace(picture), "\n") {
		f := strings.Fields(line)
		path := strings.Split(f[0], "/")
		h := topology.HostSpec{Name: path[len(path)-1], Path: path[:len(path)-1], CPUMilli: 64000, MemoryMiB: 262144}
		_, err := fmt.Sscan(f[1], &h.GPUs)
		require.NoError(t, err)
		if len(f) > 2 {
			_, err = fmt.Sscan(f[2], &h.CPUMilli)
			require.NoError(t, err)
		}
		hosts = append(hosts, h)
	}
	tree, err := topology.BuildHosts(levels, hosts)
	require.NoError(t, err)
	return topology.NewState(tree)
}

// placeChecked places r on s, requires a valid plan that applies cleanly (to
// a clone) and returns the host names of the pods in rank order.
func placeChecked(t *testing.T, s *topology.State, r *placement.Request) []string {
	t.Helper()
	var v placement.Solver
	var plan placement.Plan
	ok, why, err := v.Place(s, r, &plan)
	require.NoError(t, err)
	require.Truef(t, ok, "no fit: %s\n%s", why.Format(s.Tree()), describe(s, r))
	require.Empty(t, newOracle(s, r).validate(&plan), describe(s, r))
	c := s.Clone()
	require.NoError(t, c.Apply(plan.Delta()))
	require.NoError(t, c.Check())
	names := make([]string, len(plan.Pods))
	for i, p := range plan.Pods {
		names[i] = s.Tree().HostName(p.Host)
	}
	return names
}

func TestScenarios(t *testing.T) {
	tests := []struct {
		name    string
		levels  []string
		picture string
		req     func(tr *topology.Tree) *placement.Request
		want    []string // pod hosts in rank order; nil: any valid plan
	}{{
		// Rack r0's bound (8 free GPUs) overstates it: CPU lets host a take
		// 2 pods. Nothing else at the preferred level holds 4, so the rest
		// spills up to the root.
		name:   "preferred spill past overstated racks",
		levels: []string{"rack"},
		picture: `
r0/a 8 2000
r1/b 2
r2/c 2`,
		req: func(tr *topology.Tree) *placement.Request {
			rack, _ := tr.LevelByName("rack")
			return &placement.Request{Job: 1, Preferred: rack,
				Sets: []placement.PodSet{{Pods: 4, GPUs: 1, CPUMilli: 1000}}}
		},
	}, {
		// Both racks bound 5 pods; CPU lets rack r0 take only 1. Rack r0
		// (first of the largest) falls short; the rest goes to r1, which
		// already took its share but has room.
		name:   "shortfall revisits a rack with room",
		levels: []string{"rack"},
		picture: `
r0/a 5 1000
r1/b 5`,
		req: func(*topology.Tree) *placement.Request {
			return &placement.Request{Job: 1, Sets: []placement.PodSet{{Pods: 6, GPUs: 1, CPUMilli: 1000}}}
		},
	}, {
		// Slices of 2 in a rack, preferred host: the hosts with the most room
		// (a, then b) would split slice 1 over racks r0 and r1.
		name:   "preferred host keeps slices whole",
		levels: []string{"rack"},
		picture: `
r0/a 3
r1/b 1
r2/c 2`,
		req: func(tr *topology.Tree) *placement.Request {
			rack, _ := tr.LevelByName("rack")
			return &placement.Request{Job: 1, Preferred: tr.HostLevel(),
				Sets: []placement.PodSet{{Pods: 4, GPUs: 1, SliceSize: 2, SliceLevel: rack}}}
		},
		want: []string{"a", "a", "c", "c"},
	}, {
		// An 18-host NVL72 rack with 2 hosts busy takes 16 pods in slices of
		// 16: the best-fit rack is the one with exactly 16 free hosts.
		name:   "slice of 16 in an 18-host rack",
		levels: []string{"rack"},
		picture: func() string {
			var b strings.Builder
			for r := range 2 {
				for h := range 18 {
					gpus := 4
					if r == 1 && h < 2 {
						gpus = 0 // no room: stands for busy hosts
					}
					fmt.Fprintf(&b, "r%d/r%dh%d %d\n", r, r, h, gpus)
				}
			}
			return b.String()
		}(),
		req: func(tr *topology.Tree) *placement.Request {
			rack, _ := tr.LevelByName("rack")
			return &placement.Request{Job: 1, Required: rack,
				Sets: []placement.PodSet{{Pods: 16, GPUs: 4, SliceSize: 16, SliceLevel: rack}}}
		},
		want: func() []string {
			var w []string
			for h := 2; h < 18; h++ {
				w = append(w, fmt.Sprintf("r1h%d", h))
			}
			return w
		}(),
	}, {
		// Word edges: a 64-GPU pod fills a 64-GPU host's whole mask; best
		// fit puts the 63-GPU pod on the 63-GPU host.
		name:   "64-GPU hosts",
		levels: []string{"rack"},
		picture: `
r0/a 64
r0/b 63`,
		req: func(*topology.Tree) *placement.Request {
			return &placement.Request{Job: 1, Sets: []placement.PodSet{{Pods: 1, GPUs: 63}, {Pods: 1, GPUs: 64}}}
		},
		want: []string{"b", "a"},
	}, {
		// The eligible bitset's second word: only host 69 of 70 may be used.
		name:   "eligible host 69",
		levels: []string{"rack"},
		picture: func() string {
			var b strings.Builder
			for h := range 70 {
				fmt.Fprintf(&b, "r%d/h%d 1\n", h/10, h)
			}
			return b.String()
		}(),
		req: func(*topology.Tree) *placement.Request {
			return &placement.Request{Job: 1, Eligible: []uint64{0, 1 << 5}, Sets: []placement.PodSet{{Pods: 1, GPUs: 1}}}
		},
		want: []string{"h69"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := buildScenario(t, tc.levels, tc.picture)
			got := placeChecked(t, s, tc.req(s.Tree()))
			if tc.want != nil {
				require.Equal(t, tc.want, got)
			}
		})
	}
}

// TestGreedyPodSets pins the rule "pod sets are placed in order, each seeing
// what the previous ones took" on the smallest gang it cannot place although
// a placement exists (pod set 0 on y, pod set 1 on x): best fit puts the
// CPU-only pod of set 0 on x, the host where it fits least, and x's CPU is
// then gone for set 1's GPU pod.
//
//	r0/x: 8 GPUs, 4000 milli-CPU     r0/y: no GPU, 64000 milli-CPU
func TestGreedyPodSets(t *testing.T) {
	// Set 0 (CPU-only) placed first by best fit would take the CPU set 1 (a
	// GPU pod) needs on x, the only GPU host. The solver places the scarcest
	// set first, so both orders fit; ranks keep the input order.
	s := buildScenario(t, []string{"rack"}, "r0/x 8 4000\nr0/y 0 64000")
	r := &placement.Request{Job: 1, Sets: []placement.PodSet{
		{Pods: 1, CPUMilli: 4000},
		{Pods: 1, GPUs: 1, CPUMilli: 4000},
	}}
	require.True(t, newOracle(s, r).feasible())
	require.Equal(t, []string{"y", "x"}, placeChecked(t, s, r))

	r.Sets[0], r.Sets[1] = r.Sets[1], r.Sets[0]
	require.Equal(t, []string{"x", "y"}, placeChecked(t, s, r))
}
