package placement

import (
	"fmt"

	"github.com/blinksched/blink/topology"
)

// ReasonCode says which constraint a request failed.
type ReasonCode uint8

const (
	// Fits: no failure.
	Fits ReasonCode = iota
	// NoModel: no host has an acceptable GPU model.
	NoModel
	// HostTooSmall: a pod needs more GPUs than any acceptable host has (Have:
	// the largest host).
	HostTooSmall
	// NotEnoughGPUs: the cluster's free GPUs of acceptable models (Have) are
	// fewer than the gang needs (Need).
	NotEnoughGPUs
	// NotEnoughHosts: hosts can take only Have of the Need pods of pod set Set
	// (GPU shape, CPU, memory, eligibility, exclusivity, health).
	NotEnoughHosts
	// RequiredLevel: the best domain of Level fits only Have of Need pods
	// (where capacities are bounds — eligibility given as a bitset, CPU,
	// memory — Have may be a bound too).
	RequiredLevel
	// SliceLevel: domains of Level hold only Have of Need pods in whole slices.
	SliceLevel
	// GangSets: every pod set fits alone, but not all together.
	GangSets
	// GangHostTooSmall: a gang of several pod sets required on one host
	// needs at least Need GPUs there (its whole GPUs, and its fractions as
	// they pack at best), more than the largest acceptable host has (Have).
	GangHostTooSmall
	// GangHost: a gang of several pod sets required on one host needs at
	// least Need free GPUs there (its whole GPUs, and what its fractions
	// need besides GPUs of 999 milli free), and no host of those it may use
	// has them together with the rest (Have: the most free GPUs a host of
	// an acceptable model has).
	GangHost
)

var reasonNames = [...]string{"fits", "no acceptable GPU model", "host too small",
	"not enough free GPUs", "not enough hosts", "required level", "slices", "pod sets together",
	"gang host too small", "gang host"}

func (c ReasonCode) String() string {
	if int(c) < len(reasonNames) {
		return reasonNames[c]
	}
	return "reason(?)"
}

// Reason explains a no-fit with numbers, not text: it is a small value the
// caller owns, built without allocating. String and Err format it.
type Reason struct {
	Code  ReasonCode
	Level topology.Level // RequiredLevel, SliceLevel
	Set   int            // the pod set concerned
	Have  int64
	Need  int64
}

// Format renders the reason for people, naming levels by t's names.
func (r Reason) Format(t *topology.Tree) string {
	switch r.Code {
	case Fits:
		return ""
	case NoModel:
		return "no host has an acceptable GPU model"
	case HostTooSmall:
		return fmt.Sprintf("pod set %d: a pod needs %d GPUs, the largest acceptable host has %d", r.Set, r.Need, r.Have)
	case NotEnoughGPUs:
		return fmt.Sprintf("the cluster has %d free GPUs of acceptable models, the gang needs %d", r.Have, r.Need)
	case NotEnoughHosts:
		return fmt.Sprintf("pod set %d: hosts can take %d of %d pods", r.Set, r.Have, r.Need)
	case RequiredLevel:
		name := t.LevelName(r.Level)
		return fmt.Sprintf("required %s: the largest %s fits %d of %d pods", name, name, r.Have, r.Need)
	case SliceLevel:
		name := t.LevelName(r.Level)
		return fmt.Sprintf("pod set %d: slices of %s fit %d of %d pods", r.Set, name, r.Have, r.Need)
	case GangSets:
		return "every pod set fits alone, but not all of them together"
	case GangHost:
		return fmt.Sprintf("no host holds the pod sets together: they need %d free GPUs on one host or more, the most a host has is %d", r.Need, r.Have)
	case GangHostTooSmall:
		return fmt.Sprintf("the pod sets together need a host of %d GPUs or more, the largest acceptable host has %d", r.Need, r.Have)
	}
	return r.Code.String()
}

// Err returns the reason as an error wrapping ErrNoFit (nil when it fits).
func (r Reason) Err(t *topology.Tree) error {
	if r.Code == Fits {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrNoFit, r.Format(t))
}
