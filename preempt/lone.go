package preempt

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// The lone-victim answer for a gang that may go anywhere (rootMode). Its one
// scope is the whole cluster, and a model of it reads every candidate's
// pods; on a full cluster of a million GPUs each test of a victim set then
// places the gang with hundreds of thousands of jobs gone. But a small gang
// — a few pods anywhere, the commonest request — most often fits once one
// job goes, and the best such job can be found without a model:
//
//   - priority: no victim set of priority below lb.Priority fits (bound.go),
//     so none below q, the least priority of a candidate at or above it;
//   - count: the request does not fit as the cluster is, so one victim is
//     the fewest;
//   - milli: a lone victim frees at least lb.Milli milli-GPUs, so it holds
//     that much and touches lb.Milli/1000 GPUs or more (its size).
//
// So the candidates of priority q with that milli and size, tried one by
// one in order of milli (then id) with placement (the request with that one
// job gone), give at the first that fits the cheapest answer there is:
// every answer costs at least (q, 1 victim), and none of one victim of q
// holds less milli. The candidates are read in one pass and put in order of
// the solo histogram's buckets (solo.go), least milli first, and a bucket is
// sorted only when its turn comes; at most MaxTests placements. If none
// fits (or the budget runs out), the model's search decides as before.

// A gang required in a domain (domainMode) has as many scopes as domains
// of the required level, and on a full cluster they often share one bound
// (each lacks the same GPUs), which the single-victim and credit bounds
// raise domain by domain, reading each one's pods. The same answer holds
// there: the cluster's bound (the root's) is below every domain's — a
// victim set that makes the gang fit in a domain makes it fit in the
// cluster — and placement, asked with the root as the scope, tries every
// domain of the level. It is tried once per search, when the single-victim
// summary is due (summaryDue: the leaves have cost about as much already);
// an answer ends the search. One found before it
// does not matter: an answer of one victim of priority q is among its
// candidates, so what it finds is at least as cheap, and any other answer
// costs more.

// loneRoot tries the answer above for a gang that may go anywhere and
// returns true if it found one (it is then proven optimal and
// irreducible).
func (p *Planner) loneRoot() bool {
	if p.mode != rootMode {
		return false
	}
	proven, _ := p.loneAnswer()
	return proven
}

// loneLeaf tries the answer for a gang required in a domain once it is due
// (see above), and returns true if the
// optimum is known: the search is then over. (Requests of one host do
// without: their leaves cost little, and an exclusive one, the only kind
// its search does not prove quickly, would have the answer read most small
// jobs to skip them.)
func (p *Planner) loneLeaf() bool {
	if p.mode != domainMode || p.loneTried {
		return false
	}
	if !p.loneNow && !p.summaryDue() {
		return false
	}
	p.loneTried = true
	proven, took := p.loneAnswer()
	if !proven {
		return false
	}
	if took { // the scope is where placement put it
		p.bestDom = p.t.HostDomain(p.scratch.Pods[0].Host, p.leafLevel)
	}
	p.heap, p.bound = p.heap[:0], p.best // proven: nothing left, and nothing searched before, is cheaper
	return true
}

// loneAnswer tries the answer above and reports whether the optimum is now
// known (proven), and whether it took its answer as the best (took; false
// when the best found before costs as much, and is then the optimum).
func (p *Planner) loneAnswer() (proven, took bool) {
	if p.noLone || !p.extras.Empty() {
		return false, false
	}
	lb, ok := p.lb(0)
	if !ok || lb.Priority == NoPriority || lb.Victims != 1 || lb.Priority >= p.r.Priority {
		return false, false
	}
	q, ok := p.s.LeastPreemptiblePriority(lb.Priority)
	if !ok || q >= p.r.Priority {
		return false, false
	}
	size := (lb.Milli + topology.FullGPU - 1) / topology.FullGPU
	cands := p.loneCands(q, lb.Milli, size)
	skips := loneSkips * p.cfg.MaxTests // candidates skipped without a test, at most
	for tests, i := 0, 0; i < len(cands) && tests < p.cfg.MaxTests && skips > 0; {
		j := i + 1 // cands[i:j]: one bucket, sorted only when its turn comes
		for j < len(cands) && soloBucket(cands[j].milli) == soloBucket(cands[i].milli) {
			j++
		}
		sortLone(cands[i:j])
		for _, c := range cands[i:j] {
			if tests == p.cfg.MaxTests {
				break
			}
			if cost := (Cost{Priority: q, Victims: 1, Milli: c.milli}); p.found && !cost.Less(p.best) {
				return true, false // every cheaper candidate failed: the best found before is the optimum
			}
			if p.r.Exclusive && !p.opensHost(c.id) {
				if skips--; skips == 0 {
					break
				}
				continue // it opens no host: no room for an exclusive gang
			}
			tests++
			if p.loneFits(c.id) {
				v := append(p.gone[:0], c.id)
				p.gone = v
				p.offerSet(v, Cost{Priority: q, Victims: 1, Milli: c.milli}) // cheaper than any best: checked above
				p.irreducible = true
				p.lones++
				return true, true
			}
		}
		i = j
	}
	return false, false
}

// loneCand is a candidate of the lone-victim answer.
type loneCand struct {
	id    topology.JobID
	milli int64
}

// loneCands lists the live preemptible jobs of priority q of at least milli
// milli-GPUs and size, in one pass, ordered by the solo histogram's bucket
// of their milli (a counting sort; in id order within a bucket).
func (p *Planner) loneCands(q int32, milli, size int64) []loneCand {
	p.loneW = p.s.PreemptibleSizeWords(p.loneW, size, q)
	sizes := p.s.JobSizes()
	cands := p.lone[:0]
	var count [soloBuckets + 1]int32
	for w, word := range p.loneW {
		for ; word != 0; word &= word - 1 {
			j := w<<6 + bits.TrailingZeros64(word)
			if j >= len(p.prios) || p.prios[j] != q {
				continue
			}
			if m := int64(p.millis[j]); m >= milli && int64(sizes[j]) >= size {
				cands = append(cands, loneCand{id: topology.JobID(j), milli: m})
				count[soloBucket(m)+1]++
			}
		}
	}
	p.lone = cands
	if len(cands) < 2 {
		return cands
	}
	for b := 1; b <= soloBuckets; b++ {
		count[b] += count[b-1]
	}
	out := resize(p.lone2, len(cands))
	for _, c := range cands {
		b := soloBucket(c.milli)
		out[count[b]] = c
		count[b]++
	}
	p.lone2 = out
	return out
}

// sortLone orders candidates by milli, then id.
func sortLone(cands []loneCand) {
	slices.SortFunc(cands, func(a, c loneCand) int {
		if a.milli != c.milli {
			return cmp3(a.milli, c.milli)
		}
		return cmp3(int64(a.id), int64(c.id))
	})
}

// loneSkips is how many candidates the answer may skip without a test
// (opensHost, a fraction of a test's cost) per test it may make.
const loneSkips = 256

// opensHost reports whether evicting job j opens a host to an exclusive
// gang: leaves one of its hosts with no pod, healthy and without nominated
// GPUs (the answer runs only when the request may take no nominated GPU, so
// placement keeps an exclusive gang off a host with any: hostOK). An
// exclusive gang that does not fit needs a host more open to it, so a lone
// victim that opens none cannot answer it: on a full cluster most small
// jobs share their hosts, and trying each with placement spent the test
// budget before reaching one that holds a host alone. A job skipped here is
// taken as proven unable to answer (the first that fits is offered as
// optimal), so a skip must be certain.
func (p *Planner) opensHost(j topology.JobID) bool {
	pods := p.s.AppendJobPods(p.lonePods[:0], j)
	p.lonePods = pods
	for _, q := range pods {
		if len(pods) == 1 && p.staysClosed(q) {
			return false // most small jobs: no list to walk
		}
		if p.s.HostHealth(q.Host) != topology.Healthy || p.s.HostNominatedMask(q.Host) != 0 {
			continue // closed to the gang, empty or not
		}
		jobs := p.s.AppendHostJobs(p.loneJobs[:0], q.Host)
		p.loneJobs = jobs
		if len(jobs) == 1 {
			return true
		}
	}
	return false
}

// staysClosed reports, from two counts, that q's host certainly stays
// closed to an exclusive gang once q, its job's only pod, is gone: its
// healthy GPUs less its free ones — those in use or nominated — outnumber
// q's, so another pod uses one or one is nominated. The host's GPUs less
// its free ones, as this was once counted, are not enough: they also count
// failed GPUs, so a job alone on a host with a failed GPU looked shared,
// was skipped, and a dearer victim was offered as optimal in its place. A
// host held exclusively counts no GPU free whoever uses it (its holder is
// then the only job there), and one not healthy counts none healthy: those
// are left to the exact checks.
func (p *Planner) staysClosed(q topology.Pod) bool {
	h := q.Host
	if p.s.HostHealthyGPUs(h)-int(p.s.HostFreeCounts()[h]) <= bits.OnesCount64(q.GPUs) {
		return false
	}
	_, held := p.s.HostExclusive(h)
	return !held
}

// loneFits reports whether the request fits anywhere with job j gone (its
// plan left in p.scratch).
func (p *Planner) loneFits(j topology.JobID) bool {
	p.gone = append(p.gone[:0], j)
	p.tests++
	ok, _, err := p.solver.PlaceWithout(p.s, p.r, 0, p.gone, &p.scratch)
	return ok && err == nil
}
