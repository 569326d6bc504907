package preempt

import "github.com/blinksched/blink/topology"

// The top-down answer for a gang that may go anywhere. A request of one pod
// set of whole GPUs and nothing else (tdAllowed) with no required level has
// the whole cluster as its one scope, and on a full cluster of a million
// GPUs a model of it reads every candidate's pods. Its optimum can often be
// named, and proven, from aggregates and the pods of the victims alone:
//
//   - priority: no victim set below lb.Priority fits (bound.go), so a set of
//     candidates of priority at most q, the least priority of a candidate
//     at or above lb.Priority, that fits has the least priority;
//   - count: a victim set frees at least the whole GPUs missing (the set's
//     GPUs less the cluster's free ones), and a victim frees at most its
//     size (State.JobSizes); State.PreemptibleCover gives k, the fewest
//     candidates of q's priority bucket or below whose sizes reach that
//     (the State groups priorities by powers of two), so a set of k that
//     fits has the fewest victims — and is irreducible (a smaller one would
//     fit too);
//   - milli: lb.Milli, from aggregates.
//
// The construction takes the candidates of priority ≤ q that the cover
// counts (size at least its minSize), largest first (then least milli,
// then by id), and evicts them one by one into V, keeping per host it
// touches the capacity for the request with V gone (what the model computes
// for that host), until the request fits. If that takes more than k — the
// largest do not tile hosts: half-host jobs whose other half stays — it
// takes back out, last evicted first, every candidate the request does not
// need, which leaves V irreducible. If V then has k victims and the milli
// bound, it is offered as proven optimal, once more checked irreducible
// victim by victim; otherwise the model's search decides (an answer that
// fits is offered to it as the one to beat). O(jobs/64 + preemptible jobs
// of priority ≤ q + the pods of those evicted): on a full cluster where
// large jobs tile hosts, a fraction of the model's cost.

// tdJob is a candidate of the construction.
type tdJob struct {
	id    topology.JobID
	prio  int32
	size  int32
	milli int64
}

// topDown tries the construction above and returns true if it offered an
// answer proven optimal (p.irreducible is then set: verify has nothing to
// do).
func (p *Planner) topDown() bool {
	if p.noTopDown || p.unfolded || p.mode != rootMode || !p.modelExact || !p.tdAllowed() {
		return false
	}
	lb, ok := p.lb(0)
	if !ok || lb.Priority == NoPriority || lb.Priority >= p.r.Priority {
		return false
	}
	s, set := p.s, &p.sets[0]
	k, minSize := s.PreemptibleCover(lb.Priority, set.pods*set.gpus-int64(s.Free(0)))
	if k < 0 {
		return false
	}
	k = max(k, 1)
	q, ok := p.tdCollect(lb.Priority, minSize)
	if !ok {
		return false
	}
	lack := set.pods - int64(s.PodCapacity(0, int(set.gpus)))
	if lack <= 0 {
		return false // it fits as the cluster is: not a question for victims
	}
	n, gain, fits := p.tdEvict(k, lack)
	if !fits {
		return false
	}
	pruned := n > k
	if pruned { // more than the bound: the first ones may not be needed
		gain = p.tdPrune(n, gain, lack)
	}
	v, cost := p.tdVictims()
	bound := Cost{Priority: q, Victims: k, Milli: lb.Milli}
	proven := !bound.Less(cost) // k victims, the fewest that can fit: none can go
	if !p.offerSet(v, cost) {
		return false
	}
	// V is irreducible either way: k victims, the fewest that can fit, or
	// pruned last evicted first. Unproven, it is the answer to beat, and
	// the search that follows reuses podBuf: its pods are copied out. When
	// some of its pods were not read (tdWholeHosts), the final placement
	// reads them all.
	p.irreducible, p.bestTopDown = true, true
	if p.tdUnread == 0 {
		p.bestPods, p.bestPodsOK = p.tdVictimPods(len(v), !proven), true
	}
	if proven {
		p.topDowns++
		p.topDownsPruned += b2i(pruned)
	}
	return proven
}

// tdVictimPods returns the pods of V (of n victims), read by tdEvict: all
// of podBuf when V is every candidate it fetched, unless copy, else V's
// ones copied out.
func (p *Planner) tdVictimPods(n int, copy bool) []topology.Pod {
	if n == p.tdFetched && !copy {
		return p.podBuf
	}
	pods := p.vPods[:0]
	for c, in := range p.tdIn {
		if in {
			lo, hi := p.tdPods(int32(c))
			pods = append(pods, p.podBuf[lo:hi]...)
		}
	}
	p.vPods = pods
	return pods
}

// tdVictims lists V in id order (tdJobs' order), with its cost.
func (p *Planner) tdVictims() ([]topology.JobID, Cost) {
	v, cost := p.gone[:0], Cost{Priority: NoPriority}
	for c := range p.tdJobs {
		if p.tdIn[c] {
			jb := &p.tdJobs[c]
			v = append(v, jb.id)
			cost.Priority = max(cost.Priority, jb.prio)
			cost.Milli += jb.milli
		}
	}
	p.gone = v
	cost.Victims = len(v)
	return v, cost
}

// tdAllowed reports whether the request is one the construction answers:
// one pod set of whole GPUs and nothing else, any host, any model, not
// exclusive, and no nominated GPU it may take. GPUs nominated for others
// then simply take nothing (tdNom masks them), as the State's free counts
// already say.
func (p *Planner) tdAllowed() bool {
	r := p.r
	if len(p.sets) != 1 || r.Exclusive || p.eligible != nil || !p.anyModel || !p.extras.Empty() {
		return false
	}
	set := &p.sets[0]
	p.tdNom = p.s.NumNominations() > 0
	return set.gpus > 0 && set.milli == 0 && set.cpu == 0 && set.mem == 0
}
