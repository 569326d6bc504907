package topology

import "slices"

// Rebase carries the State over to a new Tree in which hosts were added or
// removed (hosts are matched by name). Jobs whose pods all land on surviving
// hosts keep their pods; jobs that lost a host (or no longer fit it: fewer
// GPUs, less CPU) are left out and returned in lost, ascending, for the
// caller to reschedule or repair. Host health, failed GPUs, generations and
// nominations (minus GPUs of removed hosts) carry over; new hosts start
// healthy and free. s is unchanged. O(GPUs + pods + hosts·levels).
func (s *State) Rebase(nt *Tree) (n *State, lost []JobID) {
	n = NewState(nt)
	hostMap := make([]HostID, s.t.NumHosts())
	for h := range hostMap {
		nh, ok := nt.HostByName(s.t.HostName(HostID(h)))
		if !ok {
			nh = -1
		}
		hostMap[h] = nh
	}
	if k := len(s.jobs) - len(n.jobs); k > 0 {
		n.appendJobRecs(k)
	}
	var pods []Pod
	for j := range s.jobs {
		if !s.jobs[j].live {
			continue
		}
		pods = s.AppendJobPods(pods[:0], JobID(j))
		ok := true
		for i := range pods {
			if pods[i].Host = hostMap[pods[i].Host]; pods[i].Host < 0 {
				ok = false
			}
		}
		if !ok || n.Apply(Delta{Ops: []Op{AddJob(JobID(j), s.jobs[j].info, pods...)}}) != nil {
			lost = append(lost, JobID(j))
		}
	}
	s.rebaseNominations(n, hostMap)
	s.rebaseHealth(n, hostMap)
	return n, lost
}

func (s *State) rebaseNominations(n *State, hostMap []HostID) {
	for j := range s.jobs {
		k := s.jobs[j].nom
		if k < 0 {
			continue
		}
		nom := s.noms[k].Nomination
		var gpus []GPUID
		for _, g := range nom.GPUs {
			h := s.t.GPUHost(g)
			nh := hostMap[h]
			if idx := int(g - GPUID(s.t.hostGPU[h])); nh >= 0 && idx < n.t.HostGPUCount(nh) {
				gpus = append(gpus, GPUID(n.t.hostGPU[nh])+GPUID(idx))
			}
		}
		slices.Sort(gpus)
		nom.GPUs = gpus
		if len(gpus) > 0 {
			_ = n.Apply(Delta{Ops: []Op{Nominate(nom)}}) // a GPU now failed or taken: dropped with its nomination
		}
	}
}

func (s *State) rebaseHealth(n *State, hostMap []HostID) {
	for h, nh := range hostMap {
		if nh < 0 {
			continue
		}
		lo := s.t.hostGPU[h]
		for i := range min(s.t.HostGPUCount(HostID(h)), n.t.HostGPUCount(nh)) {
			if testBit(s.failed, int(lo)+i) {
				n.setGPUHealth(GPUID(n.t.hostGPU[nh])+GPUID(i), Failed)
			}
		}
		n.setHostHealth(nh, s.HostHealth(HostID(h)))
		n.hostGen[nh] = s.hostGen[h]
	}
}
