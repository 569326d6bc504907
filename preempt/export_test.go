package preempt

// Fallbacks counts the searches that had to be repeated because the model
// and placement disagreed (a bug: tests check it stays 0).
func Fallbacks(p *Planner) int { return p.fallbacks }
