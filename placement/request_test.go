package placement_test

import (
	"errors"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reqTree: levels block, rack (the host level is 3); model A hosts have 8
// GPUs, model B hosts 4, with 4000 milli-CPU each.
//
//	b0/r0: a0 a1 (A)   b0/r1: a2 a3 (A)   b1/r2: b0 b1 (B)
func reqTree(t *testing.T) *topology.Tree {
	t.Helper()
	var hosts []topology.HostSpec
	for i, p := range [][]string{{"b0", "r0"}, {"b0", "r0"}, {"b0", "r1"}, {"b0", "r1"}} {
		hosts = append(hosts, topology.HostSpec{Name: "a" + string(rune('0'+i)), Path: p, GPUs: 8, Model: "A", CPUMilli: 4000, MemoryMiB: 65536})
	}
	for i := range 2 {
		hosts = append(hosts, topology.HostSpec{Name: "b" + string(rune('0'+i)), Path: []string{"b1", "r2"}, GPUs: 4, Model: "B", CPUMilli: 4000, MemoryMiB: 65536})
	}
	tree, err := topology.BuildHosts([]string{"block", "rack"}, hosts)
	require.NoError(t, err)
	return tree
}

func TestMalformedRequests(t *testing.T) {
	tree := reqTree(t)
	s := topology.NewState(tree)
	block, rack, host := topology.Level(1), topology.Level(2), tree.HostLevel()
	tests := []struct {
		name string
		edit func(r *placement.Request)
		want string // in the message
	}{
		{"no pod sets", func(r *placement.Request) { r.Sets = nil }, "no pod sets"},
		{"zero pods", func(r *placement.Request) { r.Sets[0].Pods = 0 }, "0 pods"},
		{"negative pods", func(r *placement.Request) { r.Sets[0].Pods = -3 }, "-3 pods"},
		{"zero pods in a later set", func(r *placement.Request) { r.Sets = append(r.Sets, placement.PodSet{}) }, "pod set 1"},
		{"more pods than a job may have", func(r *placement.Request) {
			r.Sets = []placement.PodSet{{Pods: topology.MaxJobPods / 2, GPUs: 1}, {Pods: topology.MaxJobPods/2 + 1}}
		}, "16777217 pods in all, at most 16777216"},
		{"negative GPUs", func(r *placement.Request) { r.Sets[0].GPUs = -1 }, "-1 GPUs per pod"},
		{"more GPUs than a host can have", func(r *placement.Request) { r.Sets[0].GPUs = 65 }, "65 GPUs per pod"},
		{"negative milli", func(r *placement.Request) { r.Sets[0].Milli = -5 }, "milli -5"},
		{"negative CPU", func(r *placement.Request) { r.Sets[0].CPUMilli = -1 }, "negative CPU"},
		{"negative memory", func(r *placement.Request) { r.Sets[0].MemoryMiB = -1 }, "memory"},
		{"negative slice size", func(r *placement.Request) { r.Sets[0].SliceSize = -2 }, "slice size -2"},
		{"negative job id", func(r *placement.Request) { r.Job = -1 }, "job id -1"},
		{"job id too large", func(r *placement.Request) { r.Job = topology.MaxJobID + 1 }, "job id"},
		{"unknown required level", func(r *placement.Request) { r.Required = 9 }, "required level 9"},
		{"required level below none", func(r *placement.Request) { r.Required = -2 }, "required level -2"},
		{"unknown preferred level", func(r *placement.Request) { r.Preferred = 4 }, "preferred level 4"},
		{"unknown slice level", func(r *placement.Request) { r.Sets[0].SliceSize, r.Sets[0].SliceLevel = 2, 7 }, "slice level 1…3, got 7"},
		{"preferred equal to required", func(r *placement.Request) { r.Required, r.Preferred = rack, rack }, "preferred level rack is not below required level rack"},
		{"preferred above required", func(r *placement.Request) { r.Required, r.Preferred = rack, block }, "not below required"},
		{"preferred with required host", func(r *placement.Request) { r.Required, r.Preferred = host, rack }, "not below required"},
		{"slice size without slice level", func(r *placement.Request) { r.Sets[0].SliceSize = 2 }, "slice size 2 needs a slice level"},
		{"slice level without slice size", func(r *placement.Request) { r.Sets[0].SliceLevel = rack }, "slice level rack without a slice size"},
		{"unknown slice level without slice size", func(r *placement.Request) { r.Sets[0].SliceLevel = 9 }, "slice level 9 without a slice size"},
		{"slice size not dividing the pods", func(r *placement.Request) { r.Sets[0].SliceSize, r.Sets[0].SliceLevel = 3, rack }, "slice size 3 does not divide 4 pods"},
		{"slice level above the required level", func(r *placement.Request) {
			r.Required = rack
			r.Sets[0].SliceSize, r.Sets[0].SliceLevel = 2, block
		}, "slice level block is above the required level rack"},
		{"fraction of a whole GPU", func(r *placement.Request) { r.Sets[0].GPUs, r.Sets[0].Milli = 1, 1000 }, "milli 1000"},
		{"fraction above a whole GPU", func(r *placement.Request) { r.Sets[0].GPUs, r.Sets[0].Milli = 1, 1500 }, "milli 1500"},
		{"fraction with 2 GPUs", func(r *placement.Request) { r.Sets[0].GPUs, r.Sets[0].Milli = 2, 500 }, "needs gpus = 1, got 2"},
		{"fraction with no GPU", func(r *placement.Request) { r.Sets[0].GPUs, r.Sets[0].Milli = 0, 500 }, "needs gpus = 1, got 0"},
		{"bad model id", func(r *placement.Request) { r.Models = []int{0, 2} }, "model id 2"},
		{"negative model id", func(r *placement.Request) { r.Models = []int{-1} }, "model id -1"},
		{"short eligible bitset", func(r *placement.Request) { r.Eligible = []uint64{} }, "eligible-host bitset has 0 words, tree needs 1"},
		{"unknown policy", func(r *placement.Request) { r.Policy = 9 }, "unknown policy 9"},
	}
	var v placement.Solver
	var plan placement.Plan
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := placement.Request{Job: 1, Sets: []placement.PodSet{{Pods: 4, GPUs: 2}}}
			tc.edit(&r)
			ok, why, err := v.Place(s, &r, &plan)
			require.Error(t, err)
			assert.False(t, ok)
			assert.Equal(t, placement.Reason{}, why)
			assert.ErrorIs(t, err, placement.ErrInvalid)
			assert.False(t, errors.Is(err, placement.ErrNoFit))
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, err, r.Validate(tree), "Place reports what Validate does")
		})
	}
}

// TestNoFit: well-formed requests the cluster cannot serve are answers, not
// errors, with the Reason that names the constraint.
func TestNoFit(t *testing.T) {
	tree := reqTree(t)
	rack := topology.Level(2)
	modelA, _ := tree.ModelByName("A")
	modelB, _ := tree.ModelByName("B")
	busyB := func(s *topology.State) { // every GPU of model B in use
		for _, name := range []string{"b0", "b1"} {
			h, _ := tree.HostByName(name)
			id := topology.JobID(50 + h)
			require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{topology.AddJob(id, topology.Job{}, topology.Pod{Host: h, GPUs: 0xF})}}))
		}
	}
	tests := []struct {
		name   string
		load   func(*topology.State)
		req    placement.Request
		want   placement.Reason
		format string
	}{{
		name:   "only a model whose hosts are all busy",
		load:   busyB,
		req:    placement.Request{Models: []int{modelB}, Sets: []placement.PodSet{{Pods: 1, GPUs: 1}}},
		want:   placement.Reason{Code: placement.NotEnoughGPUs, Have: 0, Need: 1},
		format: "the cluster has 0 free GPUs of acceptable models, the gang needs 1",
	}, {
		name:   "more GPUs than any host",
		req:    placement.Request{Sets: []placement.PodSet{{Pods: 1, GPUs: 9}}},
		want:   placement.Reason{Code: placement.HostTooSmall, Have: 8, Need: 9},
		format: "pod set 0: a pod needs 9 GPUs, the largest acceptable host has 8",
	}, {
		name:   "more GPUs than any host of the acceptable model",
		req:    placement.Request{Models: []int{modelB}, Sets: []placement.PodSet{{Pods: 1, GPUs: 1}, {Pods: 1, GPUs: 8}}},
		want:   placement.Reason{Code: placement.HostTooSmall, Set: 1, Have: 4, Need: 8},
		format: "pod set 1: a pod needs 8 GPUs, the largest acceptable host has 4",
	}, {
		name:   "a gang of the most pods a job may have",
		req:    placement.Request{Sets: []placement.PodSet{{Pods: topology.MaxJobPods, GPUs: 8}}},
		want:   placement.Reason{Code: placement.NotEnoughGPUs, Have: 40, Need: 8 << 24},
		format: "the cluster has 40 free GPUs of acceptable models, the gang needs 134217728",
	}, {
		name:   "pods of a shape the hosts cannot hold",
		req:    placement.Request{Models: []int{modelA}, Sets: []placement.PodSet{{Pods: 5, GPUs: 5}}},
		want:   placement.Reason{Code: placement.NotEnoughHosts, Have: 4, Need: 5},
		format: "pod set 0: hosts can take 4 of 5 pods",
	}, {
		// 4 A hosts hold 32 such pods by GPUs (the bound passes), 1 each by CPU
		name:   "CPU",
		req:    placement.Request{Sets: []placement.PodSet{{Pods: 7, GPUs: 1, CPUMilli: 3000}}, Models: []int{modelA}},
		want:   placement.Reason{Code: placement.NotEnoughHosts, Have: 4, Need: 7},
		format: "pod set 0: hosts can take 4 of 7 pods",
	}, {
		name:   "required rack",
		req:    placement.Request{Required: rack, Sets: []placement.PodSet{{Pods: 3, GPUs: 8}}},
		want:   placement.Reason{Code: placement.RequiredLevel, Level: rack, Have: 2, Need: 3},
		format: "required rack: the largest rack fits 2 of 3 pods",
	}, {
		name:   "required rack, a pod set that no rack holds alone",
		req:    placement.Request{Required: rack, Sets: []placement.PodSet{{Pods: 2, GPUs: 8}, {Pods: 3, GPUs: 5}}},
		want:   placement.Reason{Code: placement.RequiredLevel, Level: rack, Set: 1, Have: 2, Need: 3},
		format: "required rack: the largest rack fits 2 of 3 pods of pod set 1",
	}, {
		name:   "more CPU than any host",
		req:    placement.Request{Sets: []placement.PodSet{{Pods: 1, GPUs: 1, CPUMilli: 5000}}},
		want:   placement.Reason{Code: placement.HostCPUTooSmall, Have: 4000, Need: 5000},
		format: "pod set 0: a pod needs 5000 milli-cores of CPU, the most an acceptable host with GPUs enough has is 4000",
	}, {
		name:   "more memory than any host of the acceptable model",
		req:    placement.Request{Models: []int{modelB}, Sets: []placement.PodSet{{Pods: 1, GPUs: 4, MemoryMiB: 70000}}},
		want:   placement.Reason{Code: placement.HostMemoryTooSmall, Have: 65536, Need: 70000},
		format: "pod set 0: a pod needs 70000 MiB of memory, the most an acceptable host with GPUs and CPU enough has is 65536",
	}, {
		name: "slices",
		// each A rack holds 4 such pods: 8 in all, but no slice of 6
		req:    placement.Request{Sets: []placement.PodSet{{Pods: 6, GPUs: 4, SliceSize: 6, SliceLevel: rack}}, Models: []int{modelA}},
		want:   placement.Reason{Code: placement.SliceLevel, Level: rack, Have: 0, Need: 6},
		format: "pod set 0: slices of rack fit 0 of 6 pods",
	}, {
		// set 1 fails first, beside set 0, but fits alone; set 2 does not
		name: "a pod set that does not fit alone, after one that does",
		load: busyB,
		req: placement.Request{Sets: []placement.PodSet{{Pods: 4, GPUs: 5}, {Pods: 1, GPUs: 4},
			{Pods: 7, CPUMilli: 4000}}},
		want:   placement.Reason{Code: placement.NotEnoughHosts, Set: 2, Have: 6, Need: 7},
		format: "pod set 2: hosts can take 6 of 7 pods",
	}, {
		name:   "pod sets together",
		req:    placement.Request{Models: []int{modelB}, Sets: []placement.PodSet{{Pods: 2, GPUs: 1, CPUMilli: 4000}, {Pods: 1, GPUs: 1, CPUMilli: 1}}},
		want:   placement.Reason{Code: placement.GangSets},
		format: "every pod set fits alone, but not all of them together",
	}}
	var v placement.Solver
	var plan placement.Plan
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := topology.NewState(tree)
			if tc.load != nil {
				tc.load(s)
			}
			tc.req.Job = 1
			ok, why, err := v.Place(s, &tc.req, &plan)
			require.NoError(t, err)
			require.False(t, ok)
			assert.Equal(t, tc.want, why)
			assert.Equal(t, tc.format, why.Format(tree))
			require.ErrorIs(t, why.Err(tree), placement.ErrNoFit)
			assert.Contains(t, why.Err(tree).Error(), tc.format)
			assert.NotErrorIs(t, why.Err(tree), placement.ErrInvalid)
		})
	}
	assert.NoError(t, placement.Reason{}.Err(tree), "a fit is no error")
}
