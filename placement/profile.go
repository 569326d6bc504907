package placement

import (
	"fmt"
	"math"

	"github.com/blinksched/blink/topology"
)

// A Profile describes a workload by its typical pod shapes (like the
// "typical pods" of the FGD paper). Given to a Solver (SetProfile), it
// changes how a one-pod request chooses its host: instead of BestFit's
// fewest free GPUs, the pod goes where it destroys the least expected usable
// capacity for the typical shapes.
//
// The rule. For a typical shape m, cap_h(m) is how many pods of m host h can
// still take (the minimum over GPUs — ⌊unused GPUs / GPUs⌋ for whole-GPU
// shapes, Σ ⌊free milli / milli⌋ over the GPUs for fractions — CPU and
// memory; 0 on a host of a model m does not accept). Each shape has an
// integer weight W(m), proportional to Weight × its GPU request in milli-GPU
// ÷ Any(m)^¼ × Any(m) ÷ Cap(m), where Cap(m) is the capacity of the whole
// tree, empty, for m and Any(m) the same were every model acceptable: scarce
// shapes weigh more, and a shape limited to some models weighs more by the
// share of the capacity they leave it, so that the hosts of a model many
// shapes accept are not spared at the expense of a scarce one a few shapes
// need. Shapes that ask for no GPU weigh nothing, and shapes that fit nowhere
// are dropped. The loss of placing a pod on host h
// is Σ_m W(m)·(cap_h(m) before − cap_h(m) after); the pod goes to the
// feasible host of least loss, ties to the least free CPU + 16 × free
// milli-GPU on the host (the FGD paper's BestFit score, CPU in milli-cores),
// then to the lowest host index. A fractional pod takes, inside that host, the
// GPU of least loss (ties: least free milli, then lowest index). On Alibaba's
// openb trace under the FGD protocol this allocates about two points more
// GPU than BestFit.
//
// The loss applies to requests of one pod in one pod set, with the default
// policy, no slices, not exclusive, and no nominated or released GPUs in
// play; it chooses the host wherever BestFit would choose among hosts (above
// the hosts, domains are still chosen by BestFit). Other requests are placed
// as without a profile. The weights depend only on the profile and the tree,
// so the same State, Request and Profile give the same Plan.
type Profile struct {
	Shapes []ProfileShape
}

// ProfileShape is one typical pod shape of a Profile.
type ProfileShape struct {
	// GPUs whole GPUs per pod (0…64), or GPUs = 1 with Milli 1…999 for a
	// fraction of one GPU; GPUs = 0: a CPU-only pod.
	GPUs, Milli         int32
	CPUMilli, MemoryMiB int32
	// Models are the acceptable GPU model ids (Tree.ModelByName); empty: any.
	Models []int
	// Weight is how common the shape is (e.g. its number of pods in the
	// workload): finite and positive.
	Weight float64
}

// profileExp is the exponent of Cap(m) in the weights: the fourth root keeps
// plentiful shapes from drowning scarce ones without letting a nearly
// unplaceable shape dominate (0: plain capacity, 0.5 and 1 allocated less on
// the openb trace).
const profileExp = 0.25

// profileScale is the largest integer weight: losses are exact integers, so
// ties are exact.
const profileScale = 1 << 20

// profile is a Profile compiled for one tree.
type profile struct {
	t      *topology.Tree
	groups []pgroup // distinct GPU shapes of the types
	types  []ptype
	nm     int       // models of the tree
	okM    []bool    // types × models: the type accepts the model
	byM    [][]int32 // per model: the types that accept it
}

// pgroup is a GPU shape: num whole GPUs (milli 0), or a fraction milli.
type pgroup struct{ num, milli int32 }

// ptype is a typical shape with a weight.
type ptype struct {
	g        int32 // index into groups
	cpu, mem int32
	w        int64
}

// SetProfile makes the Solver place one-pod requests on the hosts of tree t
// by the capacity-loss rule of p (see Profile); nil clears it. A malformed
// profile is an error wrapping ErrInvalid, and leaves the Solver as it was.
// The profile applies to States of tree t only. O(shapes · hosts).
func (v *Solver) SetProfile(t *topology.Tree, p *Profile) error {
	if p == nil {
		v.prof = nil
		return nil
	}
	if t == nil {
		return fmt.Errorf("%w: profile without a tree", ErrInvalid)
	}
	if err := p.validate(t); err != nil {
		return err
	}
	v.prof = compileProfile(t, p)
	v.pidx = profIndex{}
	return nil
}

func (p *Profile) validate(t *topology.Tree) error {
	if len(p.Shapes) == 0 {
		return fmt.Errorf("%w: profile has no shapes", ErrInvalid)
	}
	for i := range p.Shapes {
		s := &p.Shapes[i]
		set := PodSet{Pods: 1, GPUs: s.GPUs, Milli: s.Milli, CPUMilli: s.CPUMilli, MemoryMiB: s.MemoryMiB}
		err := set.validate(t, 0)
		switch {
		case err != nil:
		case math.IsNaN(s.Weight) || math.IsInf(s.Weight, 0) || s.Weight <= 0:
			err = fmt.Errorf("%w: weight %v, want finite and > 0", ErrInvalid, s.Weight)
		}
		for _, m := range s.Models {
			if err == nil && (m < 0 || m >= t.NumModels()) {
				err = fmt.Errorf("%w: model id %d out of range", ErrInvalid, m)
			}
		}
		if err != nil {
			return fmt.Errorf("profile shape %d: %w", i, err)
		}
	}
	return nil
}

// compileProfile turns p into integer-weighted types over t's GPU shapes.
func compileProfile(t *topology.Tree, p *Profile) *profile {
	c := &profile{t: t, nm: t.NumModels()}
	raw := make([]float64, 0, len(p.Shapes))
	maxW := 0.0
	for i := range p.Shapes {
		s := &p.Shapes[i]
		if s.GPUs == 0 {
			continue // asks for no GPU: no GPU capacity to keep for it
		}
		gr := pgroup{num: s.GPUs, milli: s.Milli}
		g := -1
		for k, x := range c.groups {
			if x == gr {
				g = k
			}
		}
		if g < 0 {
			g = len(c.groups)
			c.groups = append(c.groups, gr)
		}
		ok := make([]bool, c.nm)
		for m := range ok {
			ok[m] = len(s.Models) == 0
		}
		for _, m := range s.Models {
			ok[m] = true
		}
		ty := ptype{g: int32(g), cpu: s.CPUMilli, mem: s.MemoryMiB}
		w := shapeWeight(t, s, c.groups[g], &ty, ok)
		if w == 0 {
			continue // fits nowhere
		}
		c.types = append(c.types, ty)
		c.okM = append(c.okM, ok...)
		raw = append(raw, w)
		maxW = max(maxW, w)
	}
	for i := range c.types {
		c.types[i].w = max(int64(math.Round(raw[i]/maxW*profileScale)), 1)
	}
	c.byM = make([][]int32, c.nm)
	for m := range c.nm {
		for i := range c.types {
			if c.okM[i*c.nm+m] {
				c.byM[m] = append(c.byM[m], int32(i))
			}
		}
	}
	return c
}

// shapeWeight is the real weight of shape s (GPU shape g, type ty, models
// ok) before scaling: Weight × milli-GPU ÷ Any^¼ × Any ÷ Cap; 0 if it fits
// nowhere.
func shapeWeight(t *topology.Tree, s *ProfileShape, g pgroup, ty *ptype, ok []bool) float64 {
	total := emptyCapacity(t, g, ty, ok)
	if total == 0 {
		return 0
	}
	all := total
	if len(s.Models) > 0 {
		all = emptyCapacity(t, g, ty, nil)
	}
	demand := float64(s.Milli)
	if s.Milli == 0 {
		demand = float64(s.GPUs) * topology.FullGPU
	}
	return s.Weight * demand / math.Pow(float64(all), profileExp) * float64(all) / float64(total)
}

// emptyCapacity is Cap(m): pods of type ty the empty tree holds on hosts of
// the models ok accepts (nil: every model, Any(m)).
func emptyCapacity(t *topology.Tree, g pgroup, ty *ptype, ok []bool) int64 {
	total := int64(0)
	for h := range topology.HostID(t.NumHosts()) {
		if ok != nil && !ok[t.HostModel(h)] {
			continue
		}
		n := int64(t.HostGPUCount(h))
		if g.milli == 0 {
			n /= int64(g.num)
		} else {
			n *= int64(topology.FullGPU / g.milli)
		}
		total += resCap(n, int64(t.HostCPU(h)), int64(t.HostMemory(h)), ty)
	}
	return total
}

// resCap limits GPU capacity n by CPU and memory for type ty.
func resCap(n, cpu, mem int64, ty *ptype) int64 {
	if ty.cpu > 0 {
		n = min(n, max(cpu, 0)/int64(ty.cpu))
	}
	if ty.mem > 0 {
		n = min(n, max(mem, 0)/int64(ty.mem))
	}
	return n
}
