package placement

import "github.com/blinksched/blink/topology"

// Prepare sizes the Solver's per-host scratch for tree t (12 bytes a host)
// now rather than in the first Place on a State of t, which would allocate
// it: call it where the first decision must not pay for it, such as an
// engine cloned for what-if planning. Calling it again for the same tree
// does nothing; for another tree it starts over.
func (v *Solver) Prepare(t *topology.Tree) {
	if v.t == t {
		return
	}
	v.t = t
	v.ovIdx = make([]int32, t.NumHosts())
	v.ovStamp = make([]uint32, t.NumHosts())
	v.relIdx = make([]int32, t.NumHosts())
	v.epoch = 0
	v.anyModel = false // modelOK belongs to the old tree: setModels must rebuild it
}
