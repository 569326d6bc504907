package openb

import (
	"slices"

	"github.com/blinksched/blink/placement"
)

// Profile is the workload profile Blink's policy gives the Solver
// (placement.Solver.SetProfile) in blink fgd and blink replay: every
// distinct pod shape of the list (GPUs, milli, CPU, memory, models),
// weighted by its number of pods, in order of first appearance. It is the
// information FGD takes from the same list (its "typical pods"). Shapes no
// node accepts (NoModel) are left out.
func Profile(shapes []Shape) *placement.Profile {
	p := &placement.Profile{}
	for i := range shapes {
		s := &shapes[i]
		if s.NoModel {
			continue
		}
		k := slices.IndexFunc(p.Shapes, func(x placement.ProfileShape) bool {
			return x.GPUs == s.GPUs && x.Milli == s.Milli && x.CPUMilli == s.CPUMilli &&
				x.MemoryMiB == s.MemoryMiB && slices.Equal(x.Models, s.Models)
		})
		if k < 0 {
			k = len(p.Shapes)
			p.Shapes = append(p.Shapes, placement.ProfileShape{GPUs: s.GPUs, Milli: s.Milli,
				CPUMilli: s.CPUMilli, MemoryMiB: s.MemoryMiB, Models: s.Models})
		}
		p.Shapes[k].Weight++
	}
	return p
}
