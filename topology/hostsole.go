package topology

// SolePodRun returns the job and GPUs of host h's pod when the host holds
// exactly one, and the end of the run of hosts from h on (before hi) that
// each hold exactly one pod, of that job on the same GPUs; end is h when h
// holds none or several. A reader of a cluster mostly of whole-host pods
// (the credit bound of package preempt) takes a gang's hosts a run at a
// time, with no copy of a pod. O(the run).
func (s *State) SolePodRun(h, hi HostID) (job JobID, gpus uint64, end HostID) {
	heads, pods := s.hostPods, s.pods
	p := heads[h]
	if p < 0 || pods[p].next != p { // none, or several (a ring of one is its own next)
		return -1, 0, h
	}
	job, gpus = pods[p].job, pods[p].GPUs
	for end = h + 1; end < hi; end++ {
		q := heads[end]
		if q < 0 || pods[q].next != q || pods[q].job != job || pods[q].GPUs != gpus {
			break
		}
	}
	return job, gpus, end
}

// JobGPUs is a pod as a reader of GPUs only needs it: its job and GPUs.
type JobGPUs struct {
	Job  JobID
	GPUs uint64
}

// AppendHostJobGPUs appends host h's pods, ordered by (job, rank), to dst
// as their jobs and GPUs: AppendHostPods for a reader of GPUs only, without
// copying the rest of each pod. O(pods on h).
func (s *State) AppendHostJobGPUs(dst []JobGPUs, h HostID) []JobGPUs {
	last := s.hostPods[h]
	if last < 0 {
		return dst
	}
	for p := s.pods[last].next; ; p = s.pods[p].next { // the ring from its first pod, as AppendHostPods
		r := &s.pods[p]
		dst = append(dst, JobGPUs{Job: r.job, GPUs: r.GPUs})
		if p == last {
			return dst
		}
	}
}
