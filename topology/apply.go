package topology

import "fmt"

// Apply applies the Delta's operations in order, atomically: if a guard or any
// operation's precondition fails, Apply returns an error wrapping ErrInvalid or
// ErrStale that names the operation and what is wrong, and the State is left
// exactly as it was (MarshalBinary is byte-identical).
//
// Cost: O(levels) per host touched, plus the pods of the jobs touched. A
// single operation that can be validated before its first write (a job
// added whose pods are on distinct hosts, a job removed, a health change, a
// nomination) runs without the undo journal; Apply then allocates nothing
// once the State's tables have grown to their working size.
func (s *State) Apply(d Delta) error {
	if len(d.Guards) == 0 && len(d.Ops) == 1 && d.Ops[0].Kind == OpAddJob && len(d.Ops[0].Pods) == 1 {
		return s.addOne(&d.Ops[0]) // the commonest Delta (addone.go); Apply is small enough to inline
	}
	return s.applyDelta(&d)
}

// applyDelta is Apply.
func (s *State) applyDelta(d *Delta) error {
	for i, g := range d.Guards {
		if g.Host < 0 || int(g.Host) >= s.t.NumHosts() {
			return fmt.Errorf("%w: guard %d: host %d out of range", ErrInvalid, i, g.Host)
		}
		if s.hostGen[g.Host] != g.Gen {
			return fmt.Errorf("%w: guard %d: host %s changed (generation %d, plan saw %d)",
				ErrStale, i, s.t.HostName(g.Host), s.hostGen[g.Host], g.Gen)
		}
	}
	if len(d.Ops) == 1 && d.Ops[0].Kind == OpAddJob && len(d.Ops[0].Pods) == 1 {
		return s.addOne(&d.Ops[0]) // with guards
	}
	nJobs := len(s.jobs) // the job id bound is observable (JobIDBound, snapshots)
	pods, err := s.reserve(d)
	if err != nil {
		return err
	}
	s.jr.on = s.needsJournal(d) && !(len(d.Ops) == 1 && s.gangApart(d))
	s.deferring = s.jr.on || s.manyHosts(d)
	if s.jr.on {
		s.jr.reset(pods)
	}
	for i := range d.Ops {
		if err := s.apply(&d.Ops[i]); err != nil {
			if s.jr.on {
				s.jr.on = false
				s.jr.rollback(s)
			}
			s.dropPending()         // a journal-free op fails before its first write: none pending
			s.jobs = s.jobs[:nJobs] // records reserve appended are untouched again
			return fmt.Errorf("op %d (%s): %w", i, d.Ops[i].Kind, err)
		}
	}
	s.jr.on = false
	if s.deferring { // else no commit waits
		s.flushPending()
	}
	return nil
}

// Deferred commits. While a journaled Delta runs (or a journal-free one that
// adds or removes a job on several hosts, manyHosts), a host's commit (its
// generation bump and the difference of its summary to the aggregates) waits
// until every operation succeeded, and happens once per host however many
// operations touched it: a repair that evicts a spare's filler and puts a
// gang's pod there moves the aggregates not at all. The operations read
// primary data only, so nothing they check sees the wait. A rejected Delta
// rolls back the primary data and drops the pending commits: the derived
// data was never touched. flushPending (flush.go) commits the rest.

// dropPending forgets the deferred commits of a rolled-back Delta.
func (s *State) dropPending() {
	s.deferring = false
	for _, h := range s.pending {
		s.hostFlags[h] &^= flagPending
	}
	s.pending, s.spans = s.pending[:0], s.spans[:0]
}

func (s *State) apply(op *Op) error {
	switch op.Kind {
	case OpAddJob:
		return s.addJob(op.Job, &op.Info, op.Pods)
	case OpRemoveJob:
		return s.removeJob(op.Job)
	case OpMoveJob:
		return s.moveJob(op.Job, op.Pods)
	case OpNominate:
		return s.nominate(&op.Nomination)
	case OpCancelNomination:
		return s.cancelNomination(op.Job)
	case OpExpireNominations:
		s.expireNominations(op.Now)
		return nil
	case OpSetGPUHealth:
		return s.setGPUHealth(op.GPU, op.Health)
	case OpSetHostHealth:
		return s.setHostHealthChecked(op.Host, op.Health)
	case OpSetDomainHealth:
		return s.setDomainHealth(op.Domain, op.Health)
	case OpReplacePods:
		return s.replacePods(op.Job, op.Ranks, op.Pods)
	}
	return fmt.Errorf("%w: unknown operation kind %d", ErrInvalid, op.Kind)
}

// manyHosts: a journal-free job added or removed with pods on several hosts
// defers its commits too, so that they reach the aggregates per run of
// hosts (flush.go).
func (s *State) manyHosts(d *Delta) bool {
	if len(d.Ops) != 1 {
		return false
	}
	switch op := &d.Ops[0]; op.Kind {
	case OpAddJob:
		return len(op.Pods) > 1
	case OpRemoveJob:
		return s.present(op.Job) && s.jobs[op.Job].n > 1
	}
	return false
}

// gangApart: the Delta adds one job whose pods are on distinct hosts
// (podsApart): it is checked before its first write, and runs without the
// journal that needsJournal asks for every job of several pods. A job that
// holds a nomination is checked with it in place (its own GPUs are its to
// take), then releases it: no step after the first write can fail. Not
// inlined, so that Apply's common path stays small.
//
//go:noinline
func (s *State) gangApart(d *Delta) bool {
	if len(d.Ops) != 1 {
		return false
	}
	op := &d.Ops[0]
	return op.Kind == OpAddJob && len(op.Pods) > 1 && s.podsApart(op.Pods)
}

// needsJournal: an operation that may fail after its first write, or any
// operation followed by another, needs the undo journal.
func (s *State) needsJournal(d *Delta) bool {
	if len(d.Ops) != 1 {
		return len(d.Ops) > 1
	}
	op := &d.Ops[0]
	switch op.Kind {
	case OpAddJob:
		return len(op.Pods) > 1
	case OpMoveJob, OpReplacePods:
		return true
	}
	return false
}

// reserve validates job ids and grows the job, pod and nomination tables to
// what the Delta may need, before the first journaled write (journal entries
// point into these slices). Growth of the pod and nomination tables changes
// no observable state; the job table's length is the job id bound, so Apply
// trims the records reserve added when the Delta fails. Only AddJob and
// Nominate may create job records, only AddJob and MoveJob take pod slots
// (ReplacePods re-places pods in their own), only Nominate takes a
// nomination record: a Delta of other operations grows nothing. It returns
// the pods the Delta places.
func (s *State) reserve(d *Delta) (int, error) {
	maxJob, pods, noms := JobID(-1), 0, 0
	for i := range d.Ops {
		op := &d.Ops[i]
		id := op.Job
		switch op.Kind {
		case OpAddJob:
			maxJob = max(maxJob, id)
			pods += len(op.Pods)
		case OpNominate:
			id = op.Nomination.Job
			maxJob = max(maxJob, id)
			noms++
		case OpMoveJob:
			pods += len(op.Pods)
		case OpRemoveJob, OpReplacePods, OpCancelNomination:
		default:
			continue
		}
		if id < 0 || id > MaxJobID {
			return 0, fmt.Errorf("op %d (%s): %w: job id %d out of range 0…%d",
				i, op.Kind, ErrInvalid, id, MaxJobID)
		}
	}
	s.growFor(maxJob, pods)
	if noms > 0 {
		for dead := s.deadNoms(); dead < noms; dead++ {
			s.noms = append(s.noms, nomRec{})
		}
	}
	return pods, nil
}

// growFor grows the job table (and its view) to reach job id maxJob, and
// the pod table to hold pods more pods.
func (s *State) growFor(maxJob JobID, pods int) {
	if n := int(maxJob) + 1 - len(s.jobs); n > 0 {
		s.appendJobRecs(n)
	}
	if len(s.jobPrio) < len(s.jobs) {
		s.growJobView()
	}
	if pods > 0 {
		if free := len(s.pods) - int(s.nPods); free < pods {
			s.growPods(pods - free)
		}
	}
}

// growPods appends n free pod slots, linked so the lowest is taken first.
func (s *State) growPods(n int) {
	n = max(n, len(s.pods)/2, 16)
	base := int32(len(s.pods))
	for i := range n {
		s.pods = append(s.pods, podRec{job: -1, jnext: base + int32(i) + 1})
	}
	s.pods[len(s.pods)-1].jnext = s.podFree
	s.podFree = base
}

func (s *State) deadNoms() int {
	n := 0
	for i := range s.noms {
		if !s.noms[i].live {
			n++
		}
	}
	return n
}
