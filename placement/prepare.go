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
	v.ovIdx = make([]int32, t.NumHosts())
	v.ovStamp = make([]uint32, t.NumHosts())
	v.relIdx = make([]int32, t.NumHosts())
	v.epoch = 0
	v.anyModel = false // modelOK belongs to the old tree: setModels must rebuild it
	v.buildKinds(t)
	v.uniGPUs = t.UniformHostGPUs()
}
