package placement_test

import (
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// allocState is 2 SUs × 8 racks × 18 hosts × 4 GPUs (1,152 GPUs, CPU and
// memory finite), with the first 5 hosts of every rack taken, a fractional
// pod on the next one, and a nomination.
func allocState(t *testing.T) *topology.State {
	t.Helper()
	tree, err := topology.BuildShape(topology.Shape{Levels: []string{"su", "rack"}, FanOut: []int{2, 8, 18},
		GPUsPerHost: 4, Model: "GB200", CPUMilli: 144000, MemoryMiB: 884736})
	require.NoError(t, err)
	s := topology.NewState(tree)
	var pods []topology.Pod
	for h := range topology.HostID(tree.NumHosts()) {
		switch h % 18 {
		case 0, 1, 2, 3, 4:
			pods = append(pods, topology.Pod{Host: h, GPUs: 0xF, CPUMilli: 1000})
		case 5:
			pods = append(pods, topology.Pod{Host: h, GPUs: 1, Milli: 300})
		}
	}
	require.NoError(t, s.Apply(topology.Delta{Ops: []topology.Op{
		topology.AddJob(1, topology.Job{Priority: 5, Preemptible: true}, pods...),
		topology.Nominate(topology.Nomination{Job: 7, Priority: 50, Ready: 10, Expiry: 100, GPUs: []topology.GPUID{100, 101}}),
	}}))
	return s
}

// TestPlaceAllocs: a warmed-up Solver and Plan place one-host gangs and
// reject gangs without allocating.
func TestPlaceAllocs(t *testing.T) {
	s := allocState(t)
	tree := s.Tree()
	rack, _ := tree.LevelByName("rack")
	all := []uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	spares := placement.NewRestriction(tree) // the last host of every rack
	for h := topology.HostID(17); int(h) < tree.NumHosts(); h += 18 {
		require.NoError(t, spares.Close(h))
	}
	tests := []struct {
		name string
		req  placement.Request
		fits bool
	}{
		{"one host", placement.Request{Required: tree.HostLevel(), Sets: []placement.PodSet{{Pods: 1, GPUs: 4}}}, true},
		{"one pod", placement.Request{Sets: []placement.PodSet{{Pods: 1, GPUs: 2}}}, true},
		{"one host, CPU, memory, eligible, models", placement.Request{Required: tree.HostLevel(), Eligible: all, Models: []int{0},
			Sets: []placement.PodSet{{Pods: 2, GPUs: 2, CPUMilli: 4000, MemoryMiB: 1024}}}, true},
		{"one fractional pod", placement.Request{Sets: []placement.PodSet{{Pods: 1, GPUs: 1, Milli: 500}}}, true},
		{"one host, nominee", placement.Request{Job: 7, Required: tree.HostLevel(), Sets: []placement.PodSet{{Pods: 1, GPUs: 4}}}, true},
		{"rack gang", placement.Request{Required: rack, Sets: []placement.PodSet{{Pods: 12, GPUs: 4}}}, true},
		{"rack gang, restricted", placement.Request{Required: rack, Sets: []placement.PodSet{{Pods: 11, GPUs: 4}},
			Eligible: spares.Eligible(), Restriction: spares}, true},
		{"one pod, restricted", placement.Request{Sets: []placement.PodSet{{Pods: 1, GPUs: 2}},
			Eligible: spares.Eligible(), Restriction: spares}, true},
		{"reject: required rack, restricted", placement.Request{Required: rack, Sets: []placement.PodSet{{Pods: 12, GPUs: 4}},
			Eligible: spares.Eligible(), Restriction: spares}, false},
		// CPU lets a host take one pod: rack bounds overstate, the rest passes on
		{"shortfall passes on", placement.Request{Preferred: rack, Sets: []placement.PodSet{{Pods: 20, GPUs: 1, CPUMilli: 100000}}}, true},
		{"reject: too many GPUs", placement.Request{Sets: []placement.PodSet{{Pods: 1000, GPUs: 4}}}, false},
		{"reject: host too small", placement.Request{Sets: []placement.PodSet{{Pods: 1, GPUs: 8}}}, false},
		{"reject: required rack", placement.Request{Required: rack, Sets: []placement.PodSet{{Pods: 13, GPUs: 4}}}, false},
		{"reject: CPU", placement.Request{Sets: []placement.PodSet{{Pods: 600, CPUMilli: 144000}}}, false},
		{"reject: slices", placement.Request{Sets: []placement.PodSet{{Pods: 28, GPUs: 4, SliceSize: 14, SliceLevel: rack}}}, false},
		{"reject: pod sets together", placement.Request{Required: tree.HostLevel(), Sets: []placement.PodSet{
			{Pods: 1, GPUs: 4, CPUMilli: 100000}, {Pods: 1, GPUs: 0, CPUMilli: 100000}}}, false},
		{"fractions together on a free host", placement.Request{Required: tree.HostLevel(), Sets: []placement.PodSet{
			{Pods: 4, GPUs: 1, Milli: 600}, {Pods: 4, GPUs: 1, Milli: 400}}}, true},
		{"fractions together on a used host", placement.Request{Required: tree.HostLevel(), Sets: []placement.PodSet{
			{Pods: 2, GPUs: 1, Milli: 600}, {Pods: 3, GPUs: 1, Milli: 300}}}, true},
		{"reject: fractions together, no host", placement.Request{Required: tree.HostLevel(), Sets: []placement.PodSet{
			{Pods: 3, GPUs: 1, Milli: 600}, {Pods: 3, GPUs: 1, Milli: 500}}}, false},
	}
	var v placement.Solver
	var plan placement.Plan
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Job = max(tc.req.Job, 2)
			ok, why, err := v.Place(s, &tc.req, &plan) // warm up
			require.NoError(t, err)
			require.Equal(t, tc.fits, ok, "%s", why.Format(tree))
			allocs := testing.AllocsPerRun(100, func() {
				if ok2, _, _ := v.Place(s, &tc.req, &plan); ok2 != ok {
					panic("answer changed")
				}
			})
			require.Zero(t, allocs)
		})
	}
}
