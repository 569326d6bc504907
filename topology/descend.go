package topology

// Descendants returns the domains of level l inside domain d as [lo, hi)
// (d itself when l is d's level; empty when l is above d or at the host
// level). Depth-first numbering makes them contiguous. O(levels).
func (t *Tree) Descendants(d DomainID, l Level) (lo, hi DomainID) {
	dl := Level(t.domLevel[d])
	if l < dl || int(l) >= t.Levels() {
		return 0, 0
	}
	lo, hi = d, d+1
	for ; dl < l; dl++ {
		lo, hi = DomainID(t.domChild[lo]), DomainID(t.domChildEnd[hi-1])
	}
	return lo, hi
}

// Admits reports whether job id with attributes info may take GPUs of this
// nomination: it is the nominee, of strictly higher priority, or expected to
// end at or before the nomination's ready time.
func (n *Nomination) Admits(id JobID, info *Job) bool { return mayTake(id, info, n) }

// HostHasPods reports whether any pod (of any job) is on host h.
func (s *State) HostHasPods(h HostID) bool { return s.hostPods[h] >= 0 }

// HostFreeCounts is the per-host free GPU count array (element h is
// HostFree(h)), for scans over host ranges. Read-only.
func (s *State) HostFreeCounts() []uint8 { return s.hostFree }

// HistogramData exposes every domain's histograms at once for tight scans:
// the count of hosts of model m in domain d with k free GPUs is
// data[(d·models + m)·buckets + k]. Read-only.
func (s *State) HistogramData() (data []int32, models, buckets int) {
	return s.domHist, s.nm, s.nb
}

// DomainFreeData is the per-domain free GPU count array (element d is
// Free(d)), for scans over domain ranges. Read-only.
func (s *State) DomainFreeData() []int32 { return s.domFree }

// SharedMilliData is the per-domain shared milli array (element d is
// SharedMilli(d)), for scans over domain ranges. Read-only.
func (s *State) SharedMilliData() []int64 { return s.domShared }

// PartialGPUsData is every domain's partly used GPUs by bucket at once
// (PartialGPUs(d)[b] is element d·PartialBuckets + b), for scans over
// domain ranges. Read-only.
func (s *State) PartialGPUsData() []int32 { return s.domPart }

// HostSharedData is the per-host shared milli array (element h is
// HostSharedMilli(h)), for scans over host ranges. Read-only.
func (s *State) HostSharedData() []uint16 { return s.hostShared }

// HostPartialData is the per-host partly used GPUs by bucket, packed 8 bits
// a bucket (bucket b of host h is element h >> (8·b) & 0xFF; the same
// counts as HostPartialGPUs(h)), for scans over host ranges. Read-only.
func (s *State) HostPartialData() []uint32 { return s.hostPart }
