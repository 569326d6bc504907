package bench

import (
	"fmt"
	"testing"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// BenchmarkPlaceRestricted times placement.Solver.Place at 1M GPUs (NVL72,
// load 50) with the last host of every rack closed — an engine's spare per
// rack — given as an eligible-host bitset alone (eligible=bitset: capacities
// become bounds that count the closed hosts, hosts are checked one by one)
// or as a placement.Restriction of the same hosts (eligible=restriction:
// exact capacities from the aggregates less the closed hosts' sums). The
// gangs fit the 17 open hosts of a rack and the 136 of an SU; the first
// call is checked.
func BenchmarkPlaceRestricted(b *testing.B) {
	for _, req := range []string{"host4", "rack68", "su544", "frac500"} {
		for _, mode := range []string{"bitset", "restriction"} {
			b.Run(fmt.Sprintf("gpus=1M/shape=nvl72/load=50/req=%s/eligible=%s", req, mode), func(b *testing.B) {
				benchRestricted(b, req, mode == "restriction")
			})
		}
	}
}

func benchRestricted(b *testing.B, name string, restricted bool) {
	s, _, err := Loaded("nvl72", "1M", 0.5, DefaultSeed)
	if err != nil {
		b.Fatal(err)
	}
	t := s.Tree()
	req, err := restrictedRequest(t, name)
	if err != nil {
		b.Fatal(err)
	}
	req.Job = s.JobIDBound()
	x := placement.NewRestriction(t)
	rack, _ := t.LevelByName("rack")
	lo, hi := t.LevelDomains(rack)
	for d := lo; d < hi; d++ {
		_, last := t.Hosts(d)
		if err := x.Close(last - 1); err != nil {
			b.Fatal(err)
		}
	}
	req.Eligible = x.Eligible()
	if restricted {
		req.Restriction = x
	}
	var v placement.Solver
	var plan placement.Plan
	ok, why, err := v.Place(s, &req, &plan)
	if err != nil || !ok {
		b.Fatalf("no fit: %v %s", err, why.Format(t))
	}
	for _, p := range plan.Pods {
		if x.Closed(p.Host) {
			b.Fatalf("pod on closed host %s", t.HostName(p.Host))
		}
	}
	if err := s.Clone().Apply(plan.Delta()); err != nil {
		b.Fatalf("plan does not apply: %v", err)
	}
	pods := len(plan.Pods)
	b.ReportAllocs()
	for b.Loop() {
		ok, _, _ = v.Place(s, &req, &plan)
	}
	if !ok {
		b.Fatal("no fit")
	}
	b.ReportMetric(float64(pods), "pods/op")
	ReportRatio(b, "1M")
}

// restrictedRequest is PlaceRequest, with rack68 (17 whole hosts, required
// rack) and su544 (136 whole hosts, required SU) for clusters with a host
// per rack closed.
func restrictedRequest(t *topology.Tree, name string) (placement.Request, error) {
	gang := func(pods int32, level string) (placement.Request, error) {
		l, _ := t.LevelByName(level)
		return placement.Request{Required: l, Sets: []placement.PodSet{{Pods: pods, GPUs: int32(t.MaxHostGPUs())}}}, nil
	}
	switch name {
	case "rack68":
		return gang(17, "rack")
	case "su544":
		return gang(136, "su")
	}
	return PlaceRequest(t, name)
}
