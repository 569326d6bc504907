package placement

import "github.com/blinksched/blink/topology"

// Host kinds: the sizes of a tree's hosts, so that a pod larger than every
// host in GPUs, CPU or memory is refused at once, with the dimension it
// fails in, instead of after a scan of every host (a typo of 1,000 cores
// took 8–15 ms at 1M GPUs and was reported as "not enough hosts").

// hostKind is a host's size: its GPUs, CPU (milli-cores) and memory (MiB).
type hostKind struct {
	gpus     int
	cpu, mem int32
}

// maxKinds bounds a model's list of kinds: beyond it the list becomes one
// kind, the largest of each dimension (a bound, still never too small).
const maxKinds = 16

// covers reports whether a host of kind k is at least as large as o in
// every dimension.
func (k hostKind) covers(o hostKind) bool {
	return k.gpus >= o.gpus && k.cpu >= o.cpu && k.mem >= o.mem
}

// addKind adds kind k to a model's kinds, keeping only kinds no other one
// covers (a Pareto front of at most maxKinds).
func addKind(ks []hostKind, k hostKind) []hostKind {
	kept := ks[:0]
	for _, o := range ks {
		if o.covers(k) {
			return ks
		}
		if !k.covers(o) {
			kept = append(kept, o)
		}
	}
	kept = append(kept, k)
	if len(kept) <= maxKinds {
		return kept
	}
	all := hostKind{}
	for _, o := range kept {
		all = hostKind{max(all.gpus, o.gpus), max(all.cpu, o.cpu), max(all.mem, o.mem)}
	}
	return append(kept[:0], all)
}

// buildKinds lists each model's host kinds and largest host (-1: no host).
func (v *Solver) buildKinds(t *topology.Tree) {
	v.maxByModel = make([]int, t.NumModels())
	v.kinds = make([][]hostKind, t.NumModels())
	for i := range v.maxByModel {
		v.maxByModel[i] = -1
	}
	for h := range topology.HostID(t.NumHosts()) {
		m := t.HostModel(h)
		g := t.HostGPUCount(h)
		v.maxByModel[m] = max(v.maxByModel[m], g)
		v.kinds[m] = addKind(v.kinds[m], hostKind{gpus: g, cpu: t.HostCPU(h), mem: t.HostMemory(h)})
	}
	v.maxAny = -1
	for _, g := range v.maxByModel {
		v.maxAny = max(v.maxAny, g)
	}
}

// tooSmall says, in v.reason, why no acceptable host could hold a pod of
// size p (pod set si; -1 for a gang's sets together on one host) however
// free it were; false if one could. GPUs are checked first, then CPU among
// the hosts with GPUs enough, then memory among those with both: Have is
// the most the hosts that passed the earlier checks have.
func (v *Solver) tooSmall(si int, p hostKind) bool {
	cpu, mem := int32(-1), int32(-1)
	for m, ok := range v.modelOK {
		if !ok {
			continue
		}
		for _, k := range v.kinds[m] {
			if k.gpus < p.gpus {
				continue
			}
			cpu = max(cpu, k.cpu)
			if k.cpu < p.cpu {
				continue
			}
			mem = max(mem, k.mem)
			if k.mem >= p.mem {
				return false
			}
		}
	}
	switch {
	case cpu < 0:
		v.reason = Reason{Code: HostTooSmall, Set: si, Have: int64(v.maxGPUs), Need: int64(p.gpus)}
	case cpu < p.cpu:
		v.reason = Reason{Code: HostCPUTooSmall, Set: si, Have: int64(cpu), Need: int64(p.cpu)}
	default:
		v.reason = Reason{Code: HostMemoryTooSmall, Set: si, Have: int64(mem), Need: int64(p.mem)}
	}
	return true
}

// clamp32 is n, or topology.Unlimited if n is larger.
func clamp32(n int64) int32 { return int32(min(n, topology.Unlimited)) }

// spreadTops sets, for a request required on one host under Spread, the
// most room for the current (primary) set and the most free GPUs any host
// can have (from the largest host sizes of acceptable models and the
// histograms; with nominated GPUs admitted or jobs gone, the largest host's
// GPUs): the first host that has both is the one Spread prefers, and the
// host scan stops there.
func (v *Solver) spreadTops() {
	set := v.set
	top := int64(0)
	for m, ok := range v.modelOK {
		if !ok {
			continue
		}
		for _, k := range v.kinds[m] {
			c := int64(inf)
			switch {
			case set.Milli > 0:
				c = int64(k.gpus) * int64(topology.FullGPU/set.Milli)
			case set.GPUs > 0:
				c = int64(k.gpus / int(set.GPUs))
			}
			if set.CPUMilli > 0 {
				c = min(c, int64(k.cpu/set.CPUMilli))
			}
			if set.MemoryMiB > 0 {
				c = min(c, int64(k.mem/set.MemoryMiB))
			}
			top = max(top, c)
		}
	}
	v.spreadTop, v.spreadFree = top, int64(v.mostFree())
	if !v.extra.Empty() || len(v.rel) != 0 {
		v.spreadFree = int64(v.maxGPUs)
	}
}
