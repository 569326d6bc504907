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
	// RequiredLevel: the best domain of Level fits only Have of Need pods of
	// pod set Set (where capacities are bounds — eligibility given as a
	// bitset, CPU, memory — Have may be a bound too).
	RequiredLevel
	// SliceLevel: domains of Level hold only Have of Need pods in whole slices.
	SliceLevel
	// GangSets: every pod set fits alone, but not all together (at a
	// required level: each set has a domain whose capacity for it, a bound
	// where capacities are bounds, holds it).
	GangSets
	// GangHostTooSmall: a gang of several pods required on one host
	// needs at least Need GPUs there (its whole GPUs, and its fractions as
	// they pack at best), more than the largest acceptable host has (Have).
	GangHostTooSmall
	// GangHost: a gang of several pod sets required on one host needs at
	// least Need free GPUs there (its whole GPUs, and what its fractions
	// need besides GPUs of 999 milli free), and no host of those it may use
	// has them together with the rest (Have: the most free GPUs a host of
	// an acceptable model has).
	GangHost
	// HostCPUTooSmall: a pod (Set -1: the pod sets together, required on one
	// host) needs more milli-CPU (Need) than any acceptable host with GPUs
	// enough has (Have).
	HostCPUTooSmall
	// HostMemoryTooSmall: a pod (Set -1: the pod sets together, required on
	// one host) needs more memory in MiB (Need) than any acceptable host with
	// GPUs and CPU enough has (Have).
	HostMemoryTooSmall
)

var reasonNames = [...]string{"fits", "no acceptable GPU model", "host too small",
	"not enough free GPUs", "not enough hosts", "required level", "slices", "pod sets together",
	"gang host too small", "gang host", "host CPU too small", "host memory too small"}

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
		name, of := t.LevelName(r.Level), ""
		if r.Set > 0 {
			of = fmt.Sprintf(" of pod set %d", r.Set)
		}
		return fmt.Sprintf("required %s: the largest %s fits %d of %d pods%s", name, name, r.Have, r.Need, of)
	case SliceLevel:
		name := t.LevelName(r.Level)
		return fmt.Sprintf("pod set %d: slices of %s fit %d of %d pods", r.Set, name, r.Have, r.Need)
	case GangSets:
		return "every pod set fits alone, but not all of them together"
	case GangHost:
		return fmt.Sprintf("no host holds the pod sets together: they need %d free GPUs on one host or more, the most a host has is %d", r.Need, r.Have)
	case HostCPUTooSmall, HostMemoryTooSmall:
		what, unit, with := "CPU", "milli-cores", "GPUs"
		if r.Code == HostMemoryTooSmall {
			what, unit, with = "memory", "MiB", "GPUs and CPU"
		}
		who := fmt.Sprintf("pod set %d: a pod needs", r.Set)
		if r.Set < 0 {
			who = "the pod sets together need, on one host,"
		}
		return fmt.Sprintf("%s %d %s of %s, the most an acceptable host with %s enough has is %d", who, r.Need, unit, what, with, r.Have)
	case GangHostTooSmall:
		return fmt.Sprintf("the gang's pods together need a host of %d GPUs or more, the largest acceptable host has %d", r.Need, r.Have)
	}
	return r.Code.String()
}

// Permanent reports whether the reason holds however free the cluster were:
// the request asks for more than any acceptable host has (or no host has an
// acceptable model), so it can never fit this tree.
func (c ReasonCode) Permanent() bool {
	switch c {
	case NoModel, HostTooSmall, GangHostTooSmall, HostCPUTooSmall, HostMemoryTooSmall:
		return true
	}
	return false
}

// Err returns the reason as an error wrapping ErrNoFit (nil when it fits).
func (r Reason) Err(t *topology.Tree) error {
	if r.Code == Fits {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrNoFit, r.Format(t))
}
