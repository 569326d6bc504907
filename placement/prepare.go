package placement

import "github.com/blinksched/blink/topology"

// Prepare sizes the Solver's per-host scratch for tree t (12 bytes a host),
// finds its largest host and host sizes per model and whether its hosts all have as many
// GPUs (scans of the hosts) now, rather than in the first Place on a State
// of t: call it where the first decision must not pay for it, such as an
// engine cloned for what-if planning. Calling it again for the same tree
// does nothing; for another tree it starts over.
func (v *Solver) Prepare(t *topology.Tree) {
	if v.t == t {
		return
	}
	v.t = t
	v.perKFor, v.perBFor = 0, 0 // perK's length is the tree's largest host
	v.perKRows = perKRows(t.MaxHostGPUs())
	v.ovIdx = make([]int32, t.NumHosts())
	v.ovStamp = make([]uint32, t.NumHosts())
	v.relIdx = make([]int32, t.NumHosts())
	v.epoch = 0
	v.anyModel = false // modelOK belongs to the old tree: setModels must rebuild it
	v.buildKinds(t)
	v.uniGPUs = t.UniformHostGPUs()
}

// perKRows returns ⌊k/g⌋ for hosts of up to n GPUs: row g (0 < g ≤ n) holds
// it for k = 0…n at [g·(n+1), (g+1)·(n+1)); row 0 is unused. setCurrent
// copies a row to perK when the pod size changes, as it often does between
// one-pod jobs, instead of dividing again.
func perKRows(n int) []int64 {
	rows := make([]int64, (n+1)*(n+1))
	for g := 1; g <= n; g++ {
		for k := 0; k <= n; k++ {
			rows[g*(n+1)+k] = int64(k / g)
		}
	}
	return rows
}
