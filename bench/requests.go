package bench

import (
	"fmt"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// PlaceRequests names the placement requests of the benchmark grid, per shape.
var PlaceRequests = map[string][]string{
	"nvl72": {"host4", "rack72", "su576", "block9216", "gpus200k", "slice16of18", "frac500", "impossible", "fracsets", "fracpack", "fracfit", "racksets", "cpu1000", "fracpair", "spreadpair", "fracrack", "fracmix", "wholefrac"},
	"hgx":   {"host8", "su256", "pod4096", "gpus200k", "frac500", "impossible", "cpu1000", "fracpair"},
}

// PlaceRequest returns the named request of the grid on tree t:
//
//	host4, host8   one pod of a whole host (4 or 8 GPUs)
//	rack72         18 pods × 4 GPUs, required rack (a whole NVL72 domain)
//	su576, su256   a whole scalable unit's pods, required SU
//	block9216      2,304 pods × 4 GPUs, required block
//	pod4096        512 pods × 8 GPUs, required pod
//	gpus200k       200,000 GPUs of whole-host pods, preferred block (pod)
//	slice16of18    64 pods × 4 GPUs in slices of 16 pods per rack (4 racks)
//	frac500        one pod of half a GPU
//	impossible     one more whole-host pod than the cluster has hosts
//	fracpair       a launcher of half a GPU and 3 workers of half a GPU,
//	               required host: GPU-sharing pods that fit many hosts
//	fracrack       40 pods of half a GPU, required rack
//	pair           2 pods of one GPU anywhere (no level required)
//	fracany        4 pods of half a GPU and 8 of a quarter, anywhere
//	su128          32 whole-host pods (128 GPUs on NVL72) required in an SU
//	mpisu          su128 with a launcher of 4 cores and 8 GiB and no GPU
//	mpiblock       a launcher of 4 cores and 8 GiB and no GPU with 17
//	               whole-host workers, required in a block
//	exclpair       2 pods of 2 GPUs, exclusive (no other job on their
//	               hosts), anywhere
//	exclsu         2 pods of one GPU, exclusive, required in an SU
//	cpugang        a launcher of 4 cores and no GPU with 150 whole-host
//	               workers, anywhere: two pod sets, so placement (not the
//	               preemption model) decides which victim sets fit
//	fracmix        4 pods of half a GPU and 8 of a quarter, required rack
//	wholefrac      a pod of 2 GPUs and 2 of half a GPU, required host
//	spreadpair     fracpair under the Spread policy (the emptiest host)
//	cpu1000        one GPU and 1,000 cores, more than any host has (a typo
//	               a production scheduler sees): refused before any search
//	fracsets       2 pods of 400 milli and 2 of 300 per GPU of a host,
//	               required host: more milli than a host has
//	fracpack       3 pods of 600 milli and 3 of 500, required host: the
//	               milli of a 4-GPU host, but no packing (600s cannot share)
//	               (both refused before any search: no host holds them)
//	fracfit        a pod of 600 milli and one of 400 per GPU of a host,
//	               required host: only a host with every GPU free holds it
//	racksets       17 whole-host pods and 2 more, required rack: each set
//	               fits a free rack alone, together they need 19 hosts
func PlaceRequest(t *topology.Tree, name string) (placement.Request, error) {
	lvl := func(n string) topology.Level { l, _ := t.LevelByName(n); return l }
	host := int32(t.MaxHostGPUs())
	one := func(pods int32, required, preferred string) placement.Request {
		return placement.Request{Sets: []placement.PodSet{{Pods: pods, GPUs: host}},
			Required: lvl(required), Preferred: lvl(preferred)}
	}
	switch name {
	case "host4", "host8":
		return one(1, "", ""), nil
	case "rack72":
		return one(18, "rack", ""), nil
	case "su576":
		return one(144, "su", ""), nil
	case "su256":
		return one(32, "su", ""), nil
	case "block9216":
		return one(2304, "block", ""), nil
	case "pod4096":
		return one(512, "pod", ""), nil
	case "gpus200k":
		pref := "block"
		if _, ok := t.LevelByName("pod"); ok {
			pref = "pod"
		}
		return one(200000/host, "", pref), nil
	case "slice16of18":
		r := one(64, "", "")
		r.Sets[0].SliceSize, r.Sets[0].SliceLevel = 16, lvl("rack")
		return r, nil
	case "frac500":
		return placement.Request{Sets: []placement.PodSet{{Pods: 1, GPUs: 1, Milli: 500}}}, nil
	case "impossible":
		return one(int32(t.NumHosts()+1), "", ""), nil
	case "fracpair":
		return placement.Request{Required: t.HostLevel(), Preferred: topology.NoLevel, Sets: []placement.PodSet{
			{Pods: 1, GPUs: 1, Milli: 500}, {Pods: 3, GPUs: 1, Milli: 500}}}, nil
	case "fracrack":
		return placement.Request{Required: lvl("rack"), Preferred: topology.NoLevel,
			Sets: []placement.PodSet{{Pods: 40, GPUs: 1, Milli: 500}}}, nil
	case "pair":
		return placement.Request{Required: topology.NoLevel, Preferred: topology.NoLevel,
			Sets: []placement.PodSet{{Pods: 2, GPUs: 1}}}, nil
	case "fracany":
		return placement.Request{Required: topology.NoLevel, Preferred: topology.NoLevel, Sets: []placement.PodSet{
			{Pods: 4, GPUs: 1, Milli: 500}, {Pods: 8, GPUs: 1, Milli: 250}}}, nil
	case "su128":
		return one(32, "su", ""), nil
	case "mpisu":
		r := one(32, "su", "")
		r.Sets = append([]placement.PodSet{{Pods: 1, CPUMilli: 4000, MemoryMiB: 8192}}, r.Sets...)
		return r, nil
	case "mpiblock":
		r := one(17, "block", "")
		r.Sets = append([]placement.PodSet{{Pods: 1, CPUMilli: 4000, MemoryMiB: 8192}}, r.Sets...)
		return r, nil
	case "exclpair":
		return placement.Request{Required: topology.NoLevel, Preferred: topology.NoLevel, Exclusive: true,
			Sets: []placement.PodSet{{Pods: 2, GPUs: 2}}}, nil
	case "exclsu":
		r, _ := PlaceRequest(t, "exclpair")
		r.Required, r.Sets[0].GPUs = lvl("su"), 1
		return r, nil
	case "cpugang":
		return placement.Request{Required: topology.NoLevel, Preferred: topology.NoLevel, Sets: []placement.PodSet{
			{Pods: 1, CPUMilli: 4000}, {Pods: 150, GPUs: host}}}, nil
	case "fracmix":
		return placement.Request{Required: lvl("rack"), Preferred: topology.NoLevel, Sets: []placement.PodSet{
			{Pods: 4, GPUs: 1, Milli: 500}, {Pods: 8, GPUs: 1, Milli: 250}}}, nil
	case "wholefrac":
		return placement.Request{Required: t.HostLevel(), Preferred: topology.NoLevel, Sets: []placement.PodSet{
			{Pods: 1, GPUs: 2}, {Pods: 2, GPUs: 1, Milli: 500}}}, nil
	case "spreadpair":
		r, _ := PlaceRequest(t, "fracpair")
		r.Policy = placement.Spread
		return r, nil
	case "cpu1000":
		return placement.Request{Sets: []placement.PodSet{{Pods: 1, GPUs: 1, CPUMilli: 1000000}}}, nil
	case "fracsets":
		return placement.Request{Required: t.HostLevel(), Preferred: topology.NoLevel, Sets: []placement.PodSet{
			{Pods: 2 * host, GPUs: 1, Milli: 400}, {Pods: 2 * host, GPUs: 1, Milli: 300}}}, nil
	case "fracpack":
		return placement.Request{Required: t.HostLevel(), Preferred: topology.NoLevel, Sets: []placement.PodSet{
			{Pods: 3, GPUs: 1, Milli: 600}, {Pods: 3, GPUs: 1, Milli: 500}}}, nil
	case "racksets":
		r := one(17, "rack", "")
		r.Sets = append(r.Sets, placement.PodSet{Pods: 2, GPUs: host})
		return r, nil
	case "fracfit":
		return placement.Request{Required: t.HostLevel(), Preferred: topology.NoLevel, Sets: []placement.PodSet{
			{Pods: host, GPUs: 1, Milli: 600}, {Pods: host, GPUs: 1, Milli: 400}}}, nil
	}
	return placement.Request{}, fmt.Errorf("bench: unknown request %q", name)
}
