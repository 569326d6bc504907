package preempt

import (
	"fmt"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// ReasonCode says why no victim set makes a request fit.
type ReasonCode uint8

const (
	// Fits: no failure.
	Fits ReasonCode = iota
	// Unplaceable: the request fails for a reason no eviction changes (no
	// acceptable GPU model, a pod larger than any host); Place says which.
	Unplaceable
	// NoCapacity: even with every job gone, the scope closest to fitting
	// (Domain, or Host for a one-host request) cannot hold the request: it
	// has Have healthy GPUs of the Need the request asks for, or, if Have ≥
	// Need, its hosts do not suit the pods (models, CPU, memory, eligible
	// hosts, slices).
	NoCapacity
	// Blocked: the scope closest to fitting would fit only after also
	// evicting Count jobs that are not victims by the rules; Job is the one
	// of highest priority among them (Priority, Preemptible: false means it
	// is not preemptible, true that its priority is not below the request's).
	Blocked
	// Nominated: the scope closest to fitting would fit only with GPUs
	// nominated for Job, of priority Priority (equal to or above the
	// request's).
	Nominated
	// Insufficient: in the scope closest to fitting, too large to try job by
	// job, the free GPUs and those of preemptible jobs below the request's
	// priority are at most Have of the Need GPUs the request asks for.
	Insufficient
)

var reasonNames = [...]string{"fits", "unplaceable", "no capacity", "blocked", "nominated", "insufficient"}

func (c ReasonCode) String() string {
	if int(c) < len(reasonNames) {
		return reasonNames[c]
	}
	return "reason(?)"
}

// Reason explains a no-fit with numbers, not text: a small value built
// without allocating. Format renders it.
type Reason struct {
	Code   ReasonCode
	Domain topology.DomainID // the scope closest to fitting (the host's parent for one-host requests)
	Host   topology.HostID   // the host, for one-host requests; else -1
	Job    topology.JobID    // Blocked, Nominated
	// Priority and Preemptible of Job.
	Priority    int32
	Preemptible bool
	Count       int   // Blocked: jobs that would also have to go
	Request     int32 // the request's priority
	Have, Need  int64 // NoCapacity, Insufficient: GPUs
	// Place is placement's reason, for Unplaceable.
	Place placement.Reason
}

// Format renders the reason for people, naming domains by t's paths and jobs
// by their ids.
func (r Reason) Format(t *topology.Tree) string {
	return r.FormatNames(t, nil)
}

// FormatNames is Format with jobs named by name(id) (nil: "job <id>").
func (r Reason) FormatNames(t *topology.Tree, name func(topology.JobID) string) string {
	job := func(id topology.JobID) string {
		if name != nil {
			return "job " + name(id)
		}
		return fmt.Sprintf("job %d", id)
	}
	where := r.where(t)
	switch r.Code {
	case Fits:
		return ""
	case Unplaceable:
		return r.Place.Format(t)
	case NoCapacity:
		if r.Have < r.Need {
			return fmt.Sprintf("even with every job evicted, the best candidate (%s) has %d healthy GPUs of the %d the request needs", where, r.Have, r.Need)
		}
		return fmt.Sprintf("even with every job evicted, the best candidate (%s) cannot hold the request's pods (models, CPU, memory, eligible hosts or slices)", where)
	case Insufficient:
		return fmt.Sprintf("%s has at most %d GPUs free or held by preemptible jobs of priority below %d; the request needs %d", where, r.Have, r.Request, r.Need)
	case Blocked:
		why := "which is not preemptible"
		if r.Preemptible {
			why = fmt.Sprintf("whose priority is not below the request's %d", r.Request)
		}
		if r.Count == 1 {
			return fmt.Sprintf("%s would fit only after evicting %s (priority %d), %s", where, job(r.Job), r.Priority, why)
		}
		return fmt.Sprintf("%s would fit only after evicting %d more jobs, among them %s (priority %d), %s",
			where, r.Count, job(r.Job), r.Priority, why)
	case Nominated:
		return fmt.Sprintf("%s would fit only with GPUs nominated for %s (priority %d, not below the request's %d)",
			where, job(r.Job), r.Priority, r.Request)
	}
	return r.Code.String()
}

// where names the scope: "host h3", "rack r7" (level and path), or "the cluster".
func (r Reason) where(t *topology.Tree) string {
	if r.Host >= 0 {
		return "host " + t.HostName(r.Host)
	}
	if r.Domain <= 0 {
		return "the cluster"
	}
	return t.LevelName(t.DomainLevel(r.Domain)) + " " + t.DomainPath(r.Domain)
}

// Err returns the reason as an error wrapping ErrNoVictims (nil when it fits).
func (r Reason) Err(t *topology.Tree) error {
	if r.Code == Fits {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrNoVictims, r.Format(t))
}
