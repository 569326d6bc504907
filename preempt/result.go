package preempt

import (
	"math/bits"
	"slices"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Result is a preemption plan: whom to evict, where the request goes once
// they are gone, and the nomination that reserves those GPUs meanwhile. It is
// a value; the Planner overwrites it on the next call, reusing its buffers.
type Result struct {
	// Victims are the job ids to evict, ascending; empty when the request
	// fits as the cluster is.
	Victims []topology.JobID
	// Plan is the placement the request gets once the victims are gone (its
	// pods may use the victims' GPUs): apply Plan.Delta() after removing
	// them. When there are no victims it applies now.
	Plan placement.Plan
	// Nomination reserves the plan's GPUs for the request (Job and Priority
	// of the request, Ready and Expiry as given to Plan), so that what the
	// victims free on terminating goes to it. Its GPUs are ascending; GPUs
	// already nominated for a job of equal or higher priority (which the
	// request may use only by ending before their ready time) are left out.
	// Empty when there are no victims.
	Nomination topology.Nomination
	// Displaced are the jobs of lower priority whose nominations overlap the
	// plan's GPUs: Delta cancels them, since the request outranks them.
	Displaced []topology.JobID
	// Cost is what the victims cost (see Cost).
	Cost Cost
	// Exact reports that no cheaper victim set exists: the search was
	// exhaustive, or stopped on a lower bound the answer meets. When false,
	// Bound is what the search could prove.
	Exact bool
	// Bound is a lower bound on the cost of every victim set that makes the
	// request fit; it equals Cost when Exact. The gap Cost − Bound says how
	// far from the optimum a bounded search may be.
	Bound Cost
	// Scope is the domain the answer was searched in: the domain of the
	// required level, the parent of the host for a one-host request, or the
	// root.
	Scope topology.DomainID
	// Tests counts the placement calls the search made, and Scopes the
	// scopes (hosts or domains) whose capacity model it built: measures of
	// its work, for benchmarks and tests.
	Tests, Scopes int

	ownNom bool // the request's job held a nomination: Delta cancels it first
	ops    []topology.Op
}

// Delta returns the Delta that records the nomination: it cancels the
// request's own earlier nomination and the displaced ones, then nominates
// Nomination.GPUs for the request. It is empty when there are no victims.
// It shares the Result's buffers: apply it before the Result is reused.
// Evicting the victims and, once they are gone, applying Plan.Delta() are
// the caller's steps (adding the request's job releases its nomination).
func (r *Result) Delta() topology.Delta {
	r.ops = r.ops[:0]
	if len(r.Victims) == 0 || len(r.Nomination.GPUs) == 0 {
		return topology.Delta{}
	}
	if r.ownNom {
		r.ops = append(r.ops, topology.CancelNomination(r.Nomination.Job))
	}
	for _, j := range r.Displaced {
		r.ops = append(r.ops, topology.CancelNomination(j))
	}
	r.ops = append(r.ops, topology.Nominate(r.Nomination))
	return topology.Delta{Ops: r.ops}
}

// reset empties the result, keeping its buffers.
func (r *Result) reset() {
	ops, victims, gpus, displaced := r.ops[:0], r.Victims[:0], r.Nomination.GPUs[:0], r.Displaced[:0]
	plan := r.Plan
	plan.Pods = plan.Pods[:0]
	*r = Result{Plan: plan, ops: ops, Victims: victims, Displaced: displaced}
	r.Nomination.GPUs = gpus
}

// gpusByBitmap appends to dst the GPUs of pods, ascending and once, through
// a bitmap of the cluster's GPUs (words of them): for a plan of many pods
// and no nominations anywhere, O(GPUs/64 + pods + GPUs taken).
func (p *Planner) gpusByBitmap(dst []topology.GPUID, pods []topology.Pod, words int) []topology.GPUID {
	b := resize(p.gpuBits, words+1) // one more: a host may straddle the last word
	p.gpuBits = b
	clear(b)
	uni := topology.GPUID(p.t.UniformHostGPUs())
	straddle := uni == 0 || 64%uni != 0 // a host may cross a word
	for _, pod := range pods {
		lo := uni * topology.GPUID(pod.Host)
		if uni == 0 {
			lo, _ = p.t.HostGPUs(pod.Host)
		}
		i, off := int(lo)>>6, uint(lo)&63
		b[i] |= pod.GPUs << off
		if straddle && off > 0 {
			b[i+1] |= pod.GPUs >> (64 - off)
		}
	}
	n := 0
	for _, x := range b {
		n += bits.OnesCount64(x)
	}
	dst = slices.Grow(dst, n)[:n]
	k := 0
	for w, x := range b {
		if x == ^uint64(0) { // 64 GPUs in a row: no bit to find
			run, base := dst[k:k+64], topology.GPUID(w<<6)
			for i := range run {
				run[i] = base + topology.GPUID(i)
			}
			k += 64
			continue
		}
		for ; x != 0; x &= x - 1 {
			dst[k] = topology.GPUID(w<<6 | bits.TrailingZeros64(x))
			k++
		}
	}
	return dst
}

// nominate fills the nomination from the plan's GPUs: every GPU a pod takes,
// ascending and once, less those nominated for jobs of equal or higher
// priority; nominations of lower-priority jobs it overlaps are displaced.
// The pods are read host by host in ascending order (byHost), their GPUs
// on a host together, so the GPUs come out ascending and once without a
// sort of them (a gang of hundreds of whole hosts takes thousands).
func (p *Planner) nominate(out *Result, ready, expiry int64) {
	r, s, t := p.r, p.s, p.t
	n := &out.Nomination
	n.Job, n.Priority, n.Ready, n.Expiry = r.Job, r.Priority, ready, expiry
	n.GPUs = n.GPUs[:0]
	_, out.ownNom = s.NominationOf(r.Job)
	noms := s.NumNominations() > 0
	pods := out.Plan.Pods
	if words := (t.NumGPUs() + 63) / 64; !noms && 2*len(pods) >= words {
		n.GPUs = p.gpusByBitmap(n.GPUs, pods, words)
		return
	}
	order := p.byHost(pods)
	for a := 0; a < len(order); {
		h := pods[order[a]].Host
		var mask uint64
		for ; a < len(order) && pods[order[a]].Host == h; a++ {
			mask |= pods[order[a]].GPUs // fractional pods may share a GPU
		}
		lo, _ := t.HostGPUs(h)
		var nominated uint64
		if noms {
			nominated = s.HostNominatedMask(h) & mask
		}
		for m := mask; m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m)
			g := lo + topology.GPUID(i)
			if nominated&(1<<uint(i)) != 0 {
				if j, _ := s.GPUNominee(g); j != r.Job {
					other, _ := s.NominationOf(j)
					if other.Priority >= r.Priority {
						continue // the request may only backfill it: it stays the nominee's
					}
					if !slices.Contains(out.Displaced, j) {
						out.Displaced = append(out.Displaced, j)
					}
				}
			}
			n.GPUs = append(n.GPUs, g)
		}
	}
	slices.Sort(out.Displaced)
}

// byHost returns the indices of pods in order of host (ties in any order),
// in the Planner's scratch: one key per pod, its host and index, sorted by
// comparison when they are few, else by radix (a whole-cluster gang's
// hundreds of thousands: O(pods) per 11 bits of host ids).
func (p *Planner) byHost(pods []topology.Pod) []int32 {
	order := resize(p.hostOrder, len(pods))
	p.hostOrder = order
	if len(pods) < 512 {
		keys := p.hostKeys[:0]
		for i := range pods {
			keys = append(keys, uint64(uint32(pods[i].Host))<<32|uint64(i))
		}
		slices.Sort(keys)
		for i, k := range keys {
			order[i] = int32(uint32(k))
		}
		p.hostKeys = keys
		return order
	}
	keys := resize(p.radixA, len(pods))
	hi := topology.HostID(0)
	for i := range pods {
		keys[i] = radixKey{k: uint64(pods[i].Host), c: int32(i)}
		hi = max(hi, pods[i].Host)
	}
	sorted, other := radixSort(keys, p.radixB, bits.Len64(uint64(hi)))
	for i := range sorted {
		order[i] = sorted[i].c
	}
	p.radixA, p.radixB = sorted, other
	return order
}
