package topology

import (
	"github.com/bits-and-blooms/bitset"
)

// Host flag bits (State.hostFlags).
const (
	flagHealthMask uint8 = 3  // Health value
	flagExclusive  uint8 = 4  // held exclusively by the job of its pods
	flagPending    uint8 = 8  // during Apply: its commit is deferred (apply.go, flush.go)
	flagSeen       uint8 = 16 // scratch of podsApart, cleared before it returns
)

// State is the mutable occupancy of a Tree: per-GPU free bits and milli-GPU,
// per-host resources and health, per-domain aggregates, jobs with their pods,
// and nominations. It changes only through Apply.
//
// Primary data: per GPU the free milli-GPU (FullGPU when unused), failed and
// nominated bits; per host health, exclusivity, free CPU and memory, its pods;
// jobs, pods and nominations. Everything else is derived and kept
// incrementally: the free-mask (a GPU is free when unused, healthy, not
// nominated, on a healthy host no job holds exclusively), per-host free
// counts and idleness, per-domain aggregates. Check recomputes the derived
// data from the primary data.
type State struct {
	t  *Tree
	nm int // GPU models
	nb int // histogram buckets: 0…MaxHostGPUs() free GPUs

	// per GPU (primary)
	unused    []uint64 // bits: milli == FullGPU
	partial   []uint64 // bits: 0 < milli < FullGPU
	failed    []uint64
	nominated []uint64
	milli     []uint16 // free milli-GPU of partly used GPUs (else see gpuMilli)

	// per host (primary)
	hostFlags []uint8 // Health | flagExclusive
	hostCPU   []int32 // free milli-cores
	hostMem   []int32 // free MiB
	hostGen   []uint32
	hostPods  []int32 // last pod of the host's ring, ordered by (job, rank) (pods.go); -1 none

	agg     // derived
	jobView // derived: the compact job view (jobs_compact.go)

	jobs    []jobRec
	pods    []podRec
	podFree int32 // head of the free pod list (linked by jnext)
	nPods   int32 // live pods
	noms    []nomRec
	nomB    nomBounds // derived: the live nominations' bounds (admitted.go)
	nJobs   int32     // live jobs
	setRoom []PodSet  // spare storage for new job records' sets (appendJobRecs)

	jr           journal
	replaceSlots []int32    // scratch of replacePods
	deferring    bool       // commits are deferred to the end of Apply (apply.go, flush.go)
	pending      []HostID   // the hosts whose commit is deferred
	spans        []hostSpan // runs of whole idle hosts a journal-free gang takes: checkApart finds them, placeApart places them, flushPending commits their aggregates (wholerun.go)
	acc          aggDelta   // scratch of flushPending
	runAcc       runAcc     // scratch of flushSpans
	batch        *aggDelta  // during flushRun: where commit adds a host's difference
	touches      *touchLog  // allocated with the State; Clone starts a fresh log
}

// agg is the derived data, kept incrementally; Check recomputes it.
type agg struct {
	free  *bitset.BitSet // the free-mask; freeW are its words
	freeW []uint64

	hostFree   []uint8  // free GPUs per host
	hostCap    []uint8  // healthy GPUs if the host is healthy
	hostShared []uint16 // free milli on partly used GPUs, if usable
	hostPart   []uint32 // partly used GPUs, if usable, by free-milli bucket: 8 bits a bucket
	idleHostW  []uint64 // bit h: host h is idle (usable, no pods, all GPUs free)

	domFree   []int32          // free GPUs
	domCap    []int32          // healthy GPUs on healthy hosts
	domIdle   []int32          // idle hosts: healthy, not exclusive, no pods, every GPU free
	domModel  []int32          // [d*nm+m] free GPUs of model m (nil when nm == 1)
	domHist   []int32          // [(d*nm+m)*nb+k] hosts of model m with k free GPUs
	domPre    []int32          // [d*prioBuckets+b] GPUs held by preemptible jobs of bucket b
	domExcl   []int32          // GPUs of hosts held exclusively
	domShared []int64          // free milli on partly used GPUs of usable hosts
	domPart   []int32          // [d*PartialBuckets+b] partly used GPUs of usable hosts in bucket b
	idle      []*bitset.BitSet // per level: bit i = domain LevelDomains(l).lo+i is idle
	idleW     [][]uint64
}

func newAgg(t *Tree, nm, nb int) agg {
	G, H, D := t.NumGPUs(), t.NumHosts(), t.NumDomains()
	a := agg{
		freeW:      make([]uint64, (G+63)/64),
		hostFree:   make([]uint8, H),
		hostCap:    make([]uint8, H),
		hostShared: make([]uint16, H),
		hostPart:   make([]uint32, H),
		idleHostW:  make([]uint64, (H+63)/64),
		domFree:    make([]int32, D),
		domCap:     make([]int32, D),
		domIdle:    make([]int32, D),
		domHist:    make([]int32, D*nm*nb),
		domPre:     make([]int32, D*prioBuckets),
		domExcl:    make([]int32, D),
		domShared:  make([]int64, D),
		domPart:    make([]int32, D*PartialBuckets),
		idle:       make([]*bitset.BitSet, t.Levels()),
		idleW:      make([][]uint64, t.Levels()),
	}
	a.free = bitset.From(a.freeW)
	if nm > 1 {
		a.domModel = make([]int32, D*nm)
	}
	for l := range a.idle {
		n := t.levelStart[l+1] - t.levelStart[l]
		a.idleW[l] = make([]uint64, (n+63)/64)
		a.idle[l] = bitset.From(a.idleW[l])
	}
	return a
}

// NewState returns the empty State of t: every host healthy, every GPU free.
// O(GPUs).
func NewState(t *Tree) *State {
	s := &State{t: t, nm: len(t.models), nb: t.maxGPUs + 1, podFree: -1, touches: &touchLog{}}
	G, H := t.NumGPUs(), t.NumHosts()
	words := (G + 63) / 64
	s.unused = make([]uint64, words)
	s.partial = make([]uint64, words)
	s.failed = make([]uint64, words)
	s.nominated = make([]uint64, words)
	s.milli = make([]uint16, G)
	s.hostFlags = make([]uint8, H)
	s.hostCPU = append([]int32(nil), t.hostCPU...)
	s.hostMem = append([]int32(nil), t.hostMem...)
	s.hostGen = make([]uint32, H)
	s.hostPods = make([]int32, H)
	for i := range s.hostPods {
		s.hostPods[i] = -1
	}
	setRange(s.unused, 0, G)
	s.agg = s.derive()
	return s
}

// Tree returns the State's immutable topology.
func (s *State) Tree() *Tree { return s.t }

// setRange sets bits [lo, hi) of w.
func setRange(w []uint64, lo, hi int) {
	for i := lo; i < hi; i++ {
		w[i>>6] |= 1 << (uint(i) & 63)
	}
}

// getBits returns bits [lo, lo+n) of w as a mask (n ≤ 64). Small enough to
// inline, and so are the host queries built on it (HostFreeMask, …): for
// n = 64 the mask 1<<n - 1 is all ones, as Go shifts past the width to 0.
func getBits(w []uint64, lo, n int) uint64 {
	if n == 0 {
		return 0
	}
	i, off := lo>>6, uint(lo)&63
	v := w[i] >> off
	if int(off)+n > 64 {
		v |= w[i+1] << (64 - off)
	}
	return v & (1<<uint(n) - 1)
}

func hostMask(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(n) - 1
}
