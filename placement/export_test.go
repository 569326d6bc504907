package placement

// SetNoOnePod turns placeOne (one.go) off, for tests that compare its
// answers with the general path's.
func (v *Solver) SetNoOnePod(off bool) { v.noOne = off }

// SetNoGangBound turns the gang bounds (gang_host.go) and Spread's stop at a
// host none can beat (spreadTops) off, for tests that compare answers with
// and without them.
func (v *Solver) SetNoGangBound(off bool) { v.noGang = off }

// SetLegacy turns the shortcuts off (Solver.legacy): the general paths
// alone, for tests that compare answers with and without them.
func (v *Solver) SetLegacy(on bool) { v.legacy = on }

// SetNoOnePath makes placeOne descend from the root every time, without the
// last descent's path (one_path.go).
func (v *Solver) SetNoOnePath(off bool) { v.noPath = off }

// CheckKeys makes the last descent's path compare every key a scan handed
// it with pathKey's count (one_path.go); BadKeys is how many differed.
func (v *Solver) CheckKeys() { v.checkKeys = true }

// BadKeys: see CheckKeys.
func (v *Solver) BadKeys() int { return v.badKeys }
