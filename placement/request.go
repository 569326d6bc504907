package placement

import (
	"fmt"

	"github.com/blinksched/blink/topology"
)

// PodSet is a group of identical pods of a gang.
type PodSet struct {
	Pods int32
	// GPUs whole GPUs per pod on one host (0…64), or GPUs = 1 with Milli
	// 1…999 for a fraction of one GPU. GPUs = 0 and Milli = 0: a CPU-only pod.
	GPUs, Milli         int32
	CPUMilli, MemoryMiB int32
	// SliceSize: pods [i·S, (i+1)·S) of this set share one domain of
	// SliceLevel. 0: no slices.
	SliceSize  int32
	SliceLevel topology.Level
}

// Policy chooses among the domains and hosts that fit.
type Policy uint8

const (
	// BestFit: the domain with the smallest capacity for the pod shape (ties:
	// fewer free GPUs, then lowest index), level by level. The default.
	BestFit Policy = iota
	// FirstFit: the lowest-index domain that fits, level by level.
	FirstFit
	// Spread: the domain with the largest capacity (ties: most free GPUs,
	// then lowest index).
	Spread
)

func (p Policy) String() string {
	switch p {
	case BestFit:
		return "bestfit"
	case FirstFit:
		return "firstfit"
	case Spread:
		return "spread"
	}
	return "policy(?)"
}

// Request is a gang: every pod of every set is placed, or none.
type Request struct {
	// Job is the id the gang will have; it may take GPUs nominated for it.
	Job         topology.JobID
	Priority    int32
	Preemptible bool
	// HasEnd and End: expected end (abstract time); a gang ending by a
	// nomination's ready time may backfill its GPUs.
	HasEnd bool
	End    int64
	Sets   []PodSet
	// Required: every pod inside one domain of this level (0 or NoLevel:
	// none; the host level is allowed).
	Required topology.Level
	// Preferred: as few domains of this level as possible, inside the smallest
	// enclosing domain that fits (0 or NoLevel: none). Deeper than Required.
	Preferred topology.Level
	// Exclusive: the chosen hosts hold no other job, and stay closed to
	// others while the gang runs.
	Exclusive bool
	// Models are the acceptable GPU model ids (Tree.ModelByName); empty: any.
	Models []int
	// Eligible, if not nil, are the words of a host bitset (bit h: host h may
	// be used), e.g. from taints, selectors and affinity.
	Eligible []uint64
	// Restriction, if not nil, describes the hosts Eligible leaves out with
	// per-domain sums, so that capacities are read exactly from aggregates
	// (see Restriction); Eligible must then be Restriction.Eligible() itself.
	Restriction *Restriction
	Policy      Policy
}

// setJobInfo sets *info to the topology.Job the gang will be recorded as
// (its sets left out), field by field: a composite literal goes through
// the stack.
func (r *Request) setJobInfo(info *topology.Job) {
	info.Priority, info.Preemptible, info.Movable, info.Exclusive = r.Priority, r.Preemptible, true, r.Exclusive
	info.HasEnd, info.End, info.Required, info.Preferred, info.Sets = r.HasEnd, r.End, r.Required, r.Preferred, nil
}

// Validate checks the request against the tree: malformed requests are
// errors (wrapping ErrInvalid), not no-fits.
func (r *Request) Validate(t *topology.Tree) error {
	if r.plain(t) {
		return nil
	}
	return r.validate(t)
}

// plain reports whether r is a request every check of validate accepts, of
// the commonest kind: no models, no eligible hosts or restriction, no
// slices. It decides with a few tests what validate decides with many, one
// after the other, and with no call per pod set; anything else (including
// every malformed request) goes to validate, which says what is wrong.
// TestValidatePlain compares the two on random requests.
func (r *Request) plain(t *topology.Tree) bool {
	hl := t.HostLevel()
	if len(r.Sets) == 0 || uint32(r.Job) > uint32(topology.MaxJobID) ||
		uint8(r.Required+1) > uint8(hl+1) || uint8(r.Preferred+1) > uint8(hl+1) || // NoLevel…hl
		r.Preferred > 0 && r.Required > 0 && r.Preferred <= r.Required || r.Policy > Spread ||
		len(r.Models) != 0 || r.Eligible != nil || r.Restriction != nil {
		return false
	}
	pods := int64(0)
	for i := range r.Sets {
		p := &r.Sets[i]
		if p.Pods <= 0 || uint32(p.GPUs) > topology.MaxHostGPUs || uint32(p.Milli) >= topology.FullGPU ||
			p.Milli > 0 && p.GPUs != 1 || p.CPUMilli|p.MemoryMiB < 0 || p.SliceSize != 0 || p.SliceLevel != 0 {
			return false
		}
		pods += int64(p.Pods)
	}
	return pods <= topology.MaxJobPods
}

// validate is Validate's every check, one at a time, with its error.
func (r *Request) validate(t *topology.Tree) error {
	hl := t.HostLevel()
	switch {
	case len(r.Sets) == 0:
		return fmt.Errorf("%w: request has no pod sets", ErrInvalid)
	case r.Job < 0 || r.Job > topology.MaxJobID:
		return fmt.Errorf("%w: job id %d out of range 0…%d", ErrInvalid, r.Job, topology.MaxJobID)
	case r.Required < topology.NoLevel || r.Required > hl:
		return fmt.Errorf("%w: required level %d, tree has levels 0…%d", ErrInvalid, r.Required, hl)
	case r.Preferred < topology.NoLevel || r.Preferred > hl:
		return fmt.Errorf("%w: preferred level %d, tree has levels 0…%d", ErrInvalid, r.Preferred, hl)
	case r.Preferred > 0 && r.Required > 0 && r.Preferred <= r.Required:
		return fmt.Errorf("%w: preferred level %s is not below required level %s",
			ErrInvalid, t.LevelName(r.Preferred), t.LevelName(r.Required))
	case r.Policy > Spread:
		return fmt.Errorf("%w: unknown policy %d", ErrInvalid, r.Policy)
	case r.Eligible != nil && len(r.Eligible) < (t.NumHosts()+63)/64:
		return fmt.Errorf("%w: eligible-host bitset has %d words, tree needs %d", ErrInvalid, len(r.Eligible), (t.NumHosts()+63)/64)
	case r.Restriction != nil && r.Restriction.t != t:
		return fmt.Errorf("%w: the restriction is over another tree", ErrInvalid)
	case r.Restriction != nil && (len(r.Eligible) != len(r.Restriction.open) || len(r.Eligible) > 0 && &r.Eligible[0] != &r.Restriction.open[0]):
		return fmt.Errorf("%w: a restricted request's eligible-host bitset must be its Restriction.Eligible()", ErrInvalid)
	}
	for _, m := range r.Models {
		if m < 0 || m >= t.NumModels() {
			return fmt.Errorf("%w: model id %d out of range", ErrInvalid, m)
		}
	}
	pods := int64(0)
	for i := range r.Sets {
		if err := r.Sets[i].validate(t, r.Required); err != nil {
			return fmt.Errorf("pod set %d: %w", i, err)
		}
		pods += int64(r.Sets[i].Pods)
	}
	if pods > topology.MaxJobPods {
		return fmt.Errorf("%w: %d pods in all, at most %d", ErrInvalid, pods, topology.MaxJobPods)
	}
	return nil
}

func (p *PodSet) validate(t *topology.Tree, required topology.Level) error {
	switch {
	case p.Pods <= 0:
		return fmt.Errorf("%w: %d pods, want ≥ 1", ErrInvalid, p.Pods)
	case p.GPUs < 0 || p.GPUs > topology.MaxHostGPUs:
		return fmt.Errorf("%w: %d GPUs per pod, want 0…%d", ErrInvalid, p.GPUs, topology.MaxHostGPUs)
	case p.Milli < 0 || p.Milli >= topology.FullGPU:
		return fmt.Errorf("%w: milli %d, want 0 (whole GPUs) or 1…999", ErrInvalid, p.Milli)
	case p.Milli > 0 && p.GPUs != 1:
		return fmt.Errorf("%w: a fractional pod (milli %d) needs gpus = 1, got %d", ErrInvalid, p.Milli, p.GPUs)
	case p.CPUMilli < 0 || p.MemoryMiB < 0:
		return fmt.Errorf("%w: negative CPU or memory", ErrInvalid)
	case p.SliceSize < 0:
		return fmt.Errorf("%w: slice size %d", ErrInvalid, p.SliceSize)
	case p.SliceSize > 0 && (p.SliceLevel <= 0 || p.SliceLevel > t.HostLevel()):
		return fmt.Errorf("%w: slice size %d needs a slice level 1…%d, got %d", ErrInvalid, p.SliceSize, t.HostLevel(), p.SliceLevel)
	case p.SliceSize == 0 && p.SliceLevel > 0:
		return fmt.Errorf("%w: slice level %s without a slice size", ErrInvalid, t.LevelName(p.SliceLevel))
	case p.SliceSize > 0 && p.Pods%p.SliceSize != 0:
		return fmt.Errorf("%w: slice size %d does not divide %d pods", ErrInvalid, p.SliceSize, p.Pods)
	case p.SliceSize > 0 && required > 0 && p.SliceLevel < required:
		return fmt.Errorf("%w: slice level %s is above the required level %s",
			ErrInvalid, t.LevelName(p.SliceLevel), t.LevelName(required))
	}
	return nil
}
