package preempt

import "github.com/blinksched/blink/topology"

// Most hosts of a loaded cluster of whole-host jobs hold one pod on every
// GPU, and a gang's pods hold runs of adjacent hosts. creditHosts takes a
// run of such hosts of one job at once (State.SolePodRun), without reading
// their pods: on a plain, healthy host of n ≥ g GPUs with no nominated GPU
// (creditHost's shortcut to all n usable) that one pod fills, f = 0, so the
// host adds no pod by itself, and its job, if a candidate, earns min(⌈n/g⌉
// pods in credit units, ⌊n/g⌋ pods) = the credit creditHost gives it, with
// ⌊n/g⌋ solo pods; a job that stays earns nothing. The sums are those
// creditHost's calls would add one host at a time, and the jobs are listed
// in the same order (each on its first credit), so the bound is the same.
// In a domain of hosts of the cluster's largest size all healthy, with no
// nominated GPU, every host of the run qualifies (a pod on n = that many
// GPUs fills its host); elsewhere each host is checked (plainRun).

// soleShare is what a host of n GPUs that one candidate's pod fills earns
// it (w credit units, solo pods); mask is the host's GPUs.
type soleShare struct {
	n       int
	mask    uint64
	w, solo int64
}

// soleShareOf is soleShare for hosts of n ≥ g GPUs (pods of g GPUs).
func (p *Planner) soleShareOf(n int, g int64) soleShare {
	pods := p.cred.pods[n]
	mask := ^uint64(0)
	if n < 64 {
		mask = uint64(1)<<uint(n) - 1
	}
	return soleShare{n: n, mask: mask, w: min((int64(n)*creditUnit+g-1)/g, pods*creditUnit), solo: pods}
}

// creditHosts credits the candidates on the hosts of leaf domain d (pods
// of g GPUs) and returns Σ⌊f/g⌋ over them, as creditHost on each host in
// turn would; plain and noms as for creditHost.
func (p *Planner) creditHosts(d topology.DomainID, g int64, plain, noms bool) int64 {
	s, t := p.s, p.t
	lo, hi := t.Hosts(d)
	glo, ghi := t.GPUs(d)
	uniform := !noms && s.HealthyGPUs(d) == int(ghi-glo)
	sz := soleShare{n: -1}
	base := int64(0)
	for h := lo; h < hi; {
		if plain && !p.noSoleRuns {
			j, gpus, end := s.SolePodRun(h, hi)
			if end > h {
				n := t.HostGPUCount(h)
				if n != sz.n && int64(n) >= g {
					sz = p.soleShareOf(n, g)
				}
				switch {
				case n != sz.n || gpus != sz.mask:
					end = h // not full, or fewer GPUs than a pod
				case !uniform || n != t.MaxHostGPUs():
					end = p.plainRun(h, end, n, noms)
				}
			}
			if end > h {
				if p.candidate(j) {
					p.credit(j, int64(end-h)*sz.w, int64(end-h)*sz.solo)
				}
				h = end
				p.soleRuns++
				continue
			}
		}
		base += p.creditHost(h, g, plain, noms)
		h++
	}
	return base
}

// plainRun is the end of the run of hosts from h (before end) each of n
// GPUs all healthy, none nominated if noms (the domain has nominated
// GPUs): h itself if h is not such a host.
func (p *Planner) plainRun(h, end topology.HostID, n int, noms bool) topology.HostID {
	s, t := p.s, p.t
	for ; h < end; h++ {
		if t.HostGPUCount(h) != n || s.HostHealthyGPUs(h) != n || noms && s.HostNominatedMask(h) != 0 {
			return h
		}
	}
	return h
}
