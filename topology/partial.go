package topology

// Partly used GPUs are counted per domain by their free milli, in
// PartialBuckets buckets of PartialBucketMilli: bucket b holds the GPUs with
// free milli in [b·250, b·250+249]. A fractional pod of m milli fits at most
// ⌊(b·250+249)/m⌋ times on a GPU of bucket b, so the counts bound a domain's
// capacity for fractional pods far tighter than its shared milli alone, and
// exactly for multiples of 250 milli.
const (
	PartialBuckets     = 4
	PartialBucketMilli = FullGPU / PartialBuckets
)

// PartialGPUs returns domain d's partly used GPUs (usable hosts, healthy
// GPUs, not nominated) by free-milli bucket: element b counts those with
// free milli in [b·PartialBucketMilli, (b+1)·PartialBucketMilli).
func (s *State) PartialGPUs(d DomainID) [PartialBuckets]int32 {
	var out [PartialBuckets]int32
	copy(out[:], s.domPart[int(d)*PartialBuckets:])
	return out
}

// addPart adds the bucket counts packed in a (8 bits a bucket) and
// subtracts those packed in b to dst[0:PartialBuckets].
func addPart(dst []int32, b, a uint32) {
	for k := range PartialBuckets {
		sh := 8 * uint(k)
		dst[k] += int32(a>>sh&0xFF) - int32(b>>sh&0xFF)
	}
}

// HostPartialGPUs is PartialGPUs for host h alone.
func (s *State) HostPartialGPUs(h HostID) [PartialBuckets]int32 {
	var out [PartialBuckets]int32
	p := s.hostPart[h]
	for k := range PartialBuckets {
		out[k] = int32(p >> (8 * uint(k)) & 0xFF)
	}
	return out
}
