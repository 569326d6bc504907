package placement

// SetNoOnePod turns placeOne (one.go) off, for tests that compare its
// answers with the general path's.
func (v *Solver) SetNoOnePod(off bool) { v.noOne = off }
