package preempt

import (
	"math/bits"

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
//  1. the jobs, in id order (a sequential scan), and the pods of those that
//     are candidates (each job's pods are one list), chained per host in
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

// jobPod is a candidate's pod met by the job-first build (its host is the
// chain's), chained to the next candidate pod on its host (-1: none). Its
// job is scanJobs[k]: a dense index, so that what the build records per job
// (scanCand) stays in a small array.
type jobPod struct {
	k        int32
	next     int32
	gpus     uint64
	milli    int32
	cpu, mem int32
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
	s, t := p.s, p.t
	if len(p.hostAcc) < t.NumHosts() {
		p.hostAcc, p.accEpoch = make([]hostAcc, t.NumHosts()), 0
	}
	if p.accEpoch++; p.accEpoch == 0 { // wrapped: clear the stamps
		clear(p.hostAcc)
		p.accEpoch = 1
	}
	ep, acc := p.accEpoch, p.hostAcc
	limit := p.r.Priority // the candidates: preemptible, of priority below limit
	if mode == modeBelow {
		limit = min(limit, p.below)
	}
	ents, jobs, cands := p.candPods[:0], p.scanJobs[:0], p.scanCand[:0]
	for w, x := range p.preW {
		for ; x != 0; x &= x - 1 {
			j := topology.JobID(w<<6 | bits.TrailingZeros64(x))
			if p.prios[j] >= limit {
				continue
			}
			k := int32(len(jobs))
			jobs, cands = append(jobs, j), append(cands, -1)
			pods := s.AppendJobPods(p.podBuf[:0], j)
			p.podBuf = pods
			for _, q := range pods {
				e := int32(len(ents))
				ents = append(ents, jobPod{k: k, next: -1, gpus: q.GPUs, milli: q.Milli, cpu: q.CPUMilli, mem: q.MemoryMiB})
				a := &acc[q.Host]
				if a.ep != ep {
					*a = hostAcc{ep: ep, head: e}
				} else {
					ents[a.tail].next = e
				}
				a.tail = e
				a.cmask |= q.GPUs
				if q.Milli == 0 {
					a.whole |= q.GPUs
				}
			}
		}
	}
	p.candPods, p.scanJobs, p.scanCand = ents, jobs, cands
	m.restGPUs += int64(s.Free(0))
	m.rest[0] += int64(s.PodCapacity(0, int(p.sets[0].gpus)))
	for h := range topology.HostID(len(acc)) {
		if acc[h].ep == ep {
			m.addCandHost(h, mode, &acc[h])
		}
	}
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
		fixed = p.explain(h, a, fixed)
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
	for e := a.head; e >= 0; e = p.candPods[e].next {
		q := &p.candPods[e]
		ci := p.scanCand[q.k]
		if ci < 0 {
			ci = m.candOf(p.scanJobs[q.k], mode)
			p.scanCand[q.k] = ci
		}
		m.pods = append(m.pods, podEnt{cand: ci, gpus: q.gpus, milli: q.milli, cpu: q.cpu, mem: q.mem})
		m.cands[ci].gpus += int64(bits.OnesCount64(q.gpus))
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

// explain takes out of fixed the shared GPUs of host h whose milli in use
// the candidates' fractions on them (a's chain) account for entirely.
func (p *Planner) explain(h topology.HostID, a *hostAcc, fixed uint64) uint64 {
	var milli [topology.MaxHostGPUs]int32
	var frac uint64
	for e := a.head; e >= 0; e = p.candPods[e].next {
		q := &p.candPods[e]
		if q.milli == 0 {
			continue
		}
		for u := q.gpus; u != 0; u &= u - 1 {
			b := bits.TrailingZeros64(u)
			frac |= 1 << uint(b)
			milli[b] += q.milli
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
