package preempt

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/topology"
)

// Building a whole-cluster model job first. A model of every host reads
// every host's pods (a linked list per host, scattered over the State's pod
// table) and the job of each; on a full cluster of a million GPUs that is
// most of a cluster-wide search. Where the request allows skipping quiet
// domains (quietOK: whole GPUs and nothing else, so the histograms give a
// host's capacity exactly) and dead hosts are folded, the model of the whole
// cluster is built from the other side instead:
//
//  1. the candidates, in id order, from the State's compact job view (a
//     scan of a bitset and an array, not of the job records), and their
//     pods (each job's pods are one list; fetchPods), chained per host in
//     (job, rank) order — as the State lists a host's pods — with the GPUs
//     they use per host, in arrays indexed by host and stamped per build;
//  2. the hosts holding candidate pods, in order: the GPUs their other pods
//     use are the used ones (not unused in the State) that no candidate pod
//     explains (a whole-GPU pod holds its GPU alone; a shared GPU is
//     explained when the candidates' fractions on it are all its milli in
//     use). A dead host (see modelhost.go) is skipped: its constant
//     capacity is what the histograms count for it already. A live one is
//     modelled as addHost would, its histogram share taken off the rest;
//  3. the rest is the root's capacity from the histograms, less the live
//     hosts'.
//
// The model is the same as addHosts builds over [0, NumHosts) — candidates
// met in host order, hosts in order — except hostRec.others, which it
// approximates by the GPUs of other pods (it is read for exclusive requests
// only, which take the other path).

// podLink chains the candidate pod podBuf[i] (candLinks[i]) to the next
// candidate pod on its host (-1: none). Its job is scanJobs[k]: a dense
// index, so that what the build reads and records per job (scanJob,
// scanCand) sits in small arrays, read in job order from the State's job
// view once.
type podLink struct {
	next, k int32
}

// scanJob is a candidate job met by the job-first build, with its priority,
// milli-GPUs, and where its pods start in podBuf.
type scanJob struct {
	id    topology.JobID
	prio  int32
	milli int64
	lo    int32
}

// hostAcc is what the job-first build gathers per host: stamped with the
// build's epoch, the candidate pods' chain and the GPUs they use (all, and
// those held whole).
type hostAcc struct {
	ep           uint32
	head, tail   int32
	cmask, whole uint64
}

// jobFirst reports whether build should model hosts [hlo, hhi) job first.
func (p *Planner) jobFirst(hlo, hhi topology.HostID, fold bool) bool {
	return fold && hlo == 0 && int(hhi) == p.t.NumHosts() && p.quietOK()
}

// addByJobs adds every host of the cluster to the model under construction,
// job first (see above). O(jobs/64 + preemptible jobs + candidate pods +
// hosts): the candidates come from the State's compact job view.
func (m *model) addByJobs(mode int) {
	p := m.p
	s := p.s
	p.scanCands(mode)
	hosts := p.chainPods()
	// Room for every candidate pod and host: a model of the cluster
	// allocates once, not by repeated growth.
	m.pods = slices.Grow(m.pods, len(p.podBuf))
	m.hosts = slices.Grow(m.hosts, hosts)
	m.restGPUs += int64(s.Free(0))
	m.rest[0] += int64(s.PodCapacity(0, int(p.sets[0].gpus)))
	for h := range topology.HostID(len(p.hostAcc)) {
		if a := &p.hostAcc[h]; a.ep == p.accEpoch {
			m.addCandHost(h, mode, a)
		}
	}
}

// scanCands lists the candidates of mode (preemptible, of priority below the
// request's and, for modeBelow, below p.below) in job order, from the job
// view, then fetches all their pods into podBuf (fetchPods).
func (p *Planner) scanCands(mode int) {
	limit := p.r.Priority
	if mode == modeBelow {
		limit = min(limit, p.below)
	}
	most := 0
	for _, x := range p.preW {
		most += bits.OnesCount64(x)
	}
	jobs, npods := slices.Grow(p.scanJobs[:0], most), 0
	for w, x := range p.preW {
		for ; x != 0; x &= x - 1 {
			j := topology.JobID(w<<6 | bits.TrailingZeros64(x))
			if prio := p.prios[j]; prio < limit {
				jobs = append(jobs, scanJob{id: j, prio: prio, milli: p.milli(j)})
				npods += int(p.npods[j])
			}
		}
	}
	p.scanJobs = jobs
	p.fetchPods(p.fetch == 2 || p.fetch == 0 && 4*npods >= p.s.NumPods(), npods)
	p.scanCand = resize(p.scanCand, len(jobs))
	for k := range p.scanCand {
		p.scanCand[k] = -1
	}
}

// fetchPods appends the pods of scanJobs (npods in all) to podBuf, noting
// where each job's pods start. The State keeps job records in id order, and
// a job's pods together in the order jobs arrived: a walk of every job
// streams through both, which the hardware prefetches, while a walk of some
// jobs skips about and waits for memory at each. When the candidates hold
// many of the pods (all, at least a quarter), walking every job and keeping
// the candidates' pods is faster (a million GPUs, 40% of the pods: 2.7 ms
// against 5.7); on a State whose churn has scattered its pods it reads at
// most 4 times as many.
func (p *Planner) fetchPods(all bool, npods int) {
	s, jobs := p.s, p.scanJobs
	pods := slices.Grow(p.podBuf[:0], npods) // room once, not growth by copies
	if !all {
		// All their first pods' slots, then all their pods: the reads overlap.
		ids := p.idBuf[:0]
		for k := range jobs {
			ids = append(ids, jobs[k].id)
		}
		p.idBuf = ids
		p.tdStarts = resize(p.tdStarts, len(ids))
		p.podBuf = s.AppendJobsPods(pods, ids, p.tdStarts)
		for k := range jobs {
			jobs[k].lo = p.tdStarts[k]
		}
		return
	}
	if len(p.npods) > 0 { // and for the largest job's, appended before it is dropped
		pods = slices.Grow(pods, npods+int(slices.Max(p.npods)))
	}
	k := 0
	for j := range topology.JobID(len(p.prios)) {
		lo := len(pods)
		pods = s.AppendJobPods(pods, j)
		if k < len(jobs) && jobs[k].id == j {
			jobs[k].lo = int32(lo)
			k++
		} else {
			pods = pods[:lo] // not a candidate
		}
	}
	p.podBuf = pods
}

// chainPods chains the candidates' pods (podBuf) per host, in (job, rank)
// order (candLinks), and gathers per host the GPUs they use (hostAcc,
// stamped with a new epoch); it returns how many hosts they are on.
func (p *Planner) chainPods() int {
	if len(p.hostAcc) < p.t.NumHosts() {
		p.hostAcc, p.accEpoch = make([]hostAcc, p.t.NumHosts()), 0
	}
	if p.accEpoch++; p.accEpoch == 0 { // wrapped: clear the stamps
		clear(p.hostAcc)
		p.accEpoch = 1
	}
	ep, acc, hosts := p.accEpoch, p.hostAcc, 0
	links := resize(p.candLinks, len(p.podBuf))
	p.candLinks = links
	for k := range p.scanJobs {
		hi := len(p.podBuf)
		if k+1 < len(p.scanJobs) {
			hi = int(p.scanJobs[k+1].lo)
		}
		for e := int32(p.scanJobs[k].lo); e < int32(hi); e++ {
			q := &p.podBuf[e]
			links[e] = podLink{next: -1, k: int32(k)}
			a := &acc[q.Host]
			if a.ep != ep {
				*a = hostAcc{ep: ep, head: e}
				hosts++
			} else {
				links[a.tail].next = e
			}
			a.tail = e
			a.cmask |= q.GPUs
			if q.Milli == 0 {
				a.whole |= q.GPUs
			}
		}
	}
	return hosts
}

// addCandHost adds host h, whose candidate pods a gathered, unless it is
// dead or takes nothing.
func (m *model) addCandHost(h topology.HostID, mode int, a *hostAcc) {
	p := m.p
	s := p.s
	if s.HostHealth(h) != topology.Healthy {
		return // takes nothing, and the histograms count nothing for it
	}
	n := p.t.HostGPUCount(h)
	all := uint64(1)<<uint(n) - 1
	if n == 64 {
		all = ^uint64(0)
	}
	used := all &^ s.HostUnusedMask(h)
	fixed := used &^ a.whole
	if fixed&a.cmask != 0 {
		fixed = p.explain(h, a.head, nil, fixed)
	}
	j, held := s.HostExclusive(h)
	if held && !p.isCand(j, mode) {
		return // held by a job that stays: nothing, as the histograms say
	}
	share := all &^ s.HostFailedMask(h) // no nominations (quietOK)
	g := p.sets[0].gpus
	none := int64(0)
	if !held {
		none = int64(bits.OnesCount64(share&^used)) / g
	}
	if int64(bits.OnesCount64(share&^fixed))/g == none {
		return // dead: its constant capacity is the histograms' already
	}
	// hostBase's record, which quietOK reduces to this: healthy (checked),
	// any model, any host, no nominations.
	rec := hostRec{h: h, owner: -1, share: share, cpu: int64(s.HostCPU(h)), mem: int64(s.HostMemory(h)),
		fixed: fixed, others: fixed != 0}
	free := int64(s.HostFree(h)) // the histograms' share of h
	m.restGPUs -= free
	m.rest[0] -= free / g
	rec.lo = int32(len(m.pods))
	for e := a.head; e >= 0; e = p.candLinks[e].next {
		q, k := &p.podBuf[e], p.candLinks[e].k
		ci := p.scanCand[k]
		if ci < 0 {
			ci = m.scanCand(&p.scanJobs[k])
			p.scanCand[k] = ci
		}
		m.pods = append(m.pods, podEnt{cand: ci, gpus: q.GPUs, milli: q.Milli, cpu: q.CPUMilli, mem: q.MemoryMiB})
		m.cands[ci].gpus += int64(bits.OnesCount64(q.GPUs))
	}
	rec.hi = int32(len(m.pods))
	if held {
		rec.owner = m.candOf(j, mode)
	}
	if rec.owner < 0 {
		m.gpus0 += int64(bits.OnesCount64(rec.share &^ used))
	}
	m.hosts = append(m.hosts, rec)
}

// scanCand adds job sj, met through its first pod on a live host, as a
// candidate and returns its index. A candidate is always met through a pod
// first: one holding a host exclusively (candOf, after the host's pods) has
// pods there.
func (m *model) scanCand(sj *scanJob) int32 {
	return m.addCand(cand{id: sj.id, prio: sj.prio, allowed: true, pre: true, milli: sj.milli})
}

// explain takes out of fixed the shared GPUs of host h whose milli in use
// the candidates' fractions on them (the chain from head) account for
// entirely. With in, only the pods of jobs k with in[k] count.
func (p *Planner) explain(h topology.HostID, head int32, in []bool, fixed uint64) uint64 {
	var milli [topology.MaxHostGPUs]int32
	var frac uint64
	for e := head; e >= 0; e = p.candLinks[e].next {
		q := &p.podBuf[e]
		if q.Milli == 0 || in != nil && !in[p.candLinks[e].k] {
			continue
		}
		for u := q.GPUs; u != 0; u &= u - 1 {
			b := bits.TrailingZeros64(u)
			frac |= 1 << uint(b)
			milli[b] += q.Milli
		}
	}
	lo, _ := p.t.HostGPUs(h)
	for u := fixed & frac; u != 0; u &= u - 1 {
		b := bits.TrailingZeros64(u)
		if int(milli[b]) == topology.FullGPU-p.s.GPUMilli(lo+topology.GPUID(b)) {
			fixed &^= 1 << uint(b)
		}
	}
	return fixed
}
