package defrag

import "github.com/blinksched/blink/topology"

// Prepare sizes the Planner's per-host scratch for tree t now rather than in
// the first MakeRoom or Compact on a State of t, which would allocate it
// (see placement.Solver.Prepare). Calling it again for the same tree does
// nothing.
func (p *Planner) Prepare(t *topology.Tree) {
	p.v.Prepare(t)
	if p.eligTree == t {
		return
	}
	words := (t.NumHosts() + 63) / 64
	p.elig = make([]uint64, words)
	for i := range p.elig {
		p.elig[i] = ^uint64(0)
	}
	p.reqElig = make([]uint64, words)
	p.eligTree = t
}
