package preempt

// Fallbacks counts the searches that had to be repeated because the model
// and placement disagreed (a bug: tests check it stays 0).
func Fallbacks(p *Planner) int { return p.fallbacks }

// SetFolding turns on or off (on by default) the folding of dead hosts into
// a model's rest and, with it, the skipping of quiet racks and job-first
// builds: with it off every host is modelled, the simple form tests compare
// against.
func SetFolding(p *Planner, on bool) { p.unfolded = !on }

func ProbeModel(t interface{ Logf(string, ...any) }, p *Planner) {
	m := &p.m
	t.Logf("model hosts %d pods %d cands %d candPods %d below %d", len(m.hosts), len(m.pods), len(m.cands), len(p.candPods), p.below)
}
