package topology

import "slices"

// HostMask is some of one host's GPUs: bit i is the host's i-th GPU.
type HostMask struct {
	Host HostID
	Mask uint64
}

// AppendAdmitted appends to dst the GPUs of the nominations that admit job
// id with attributes info (Nomination.Admits: its own, those of lower
// priority, those whose ready time it ends by), one entry per host, hosts
// ascending: the GPUs a placement of that job may take although they are not
// free. O(nominated GPUs · log); nothing when there are no nominations.
func (s *State) AppendAdmitted(dst []HostMask, id JobID, info *Job) []HostMask {
	n0 := len(dst)
	for i := range s.noms {
		n := &s.noms[i]
		if !n.live || !mayTake(id, info, &n.Nomination) {
			continue
		}
		h, lo, hi := HostID(-1), GPUID(0), GPUID(0)
		for _, g := range n.GPUs { // ascending: a host's GPUs come together
			if g < lo || g >= hi {
				h = s.t.GPUHost(g)
				lo, hi = GPUID(s.t.hostGPU[h]), GPUID(s.t.hostGPU[h+1])
				dst = append(dst, HostMask{Host: h})
			}
			dst[len(dst)-1].Mask |= 1 << uint(g-lo)
		}
	}
	out := dst[n0:]
	slices.SortFunc(out, func(a, b HostMask) int { return int(a.Host - b.Host) })
	k := 0
	for _, e := range out { // merge hosts of two nominations
		if k > 0 && out[k-1].Host == e.Host {
			out[k-1].Mask |= e.Mask
			continue
		}
		out[k] = e
		k++
	}
	return dst[:n0+k]
}
