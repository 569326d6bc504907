package preempt

import "github.com/blinksched/blink/topology"

// Prepare sizes the Planner's per-host scratch for tree t now rather than in
// the first Plan on a State of t, which would allocate it (see
// placement.Solver.Prepare). Calling it again for the same tree does
// nothing.
func (p *Planner) Prepare(t *topology.Tree) {
	p.solver.Prepare(t)
	if p.t != t {
		p.t = t
		p.helg = make([]uint64, (t.NumHosts()+63)/64)
		p.hbit = -1
	}
}
