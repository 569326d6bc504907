package placement

import (
	"fmt"
	"math"
	"slices"

	"github.com/blinksched/blink/topology"
)

// Solver places gangs. It holds scratch buffers reused across calls, so a
// warmed-up Solver allocates nothing; it is not safe for concurrent use (use
// one per goroutine). The State is only read.
type Solver struct {
	s    *topology.State
	t    *topology.Tree
	r    *Request
	info topology.Job
	hl   topology.Level

	modelOK  []bool
	anyModel bool
	maxGPUs  int // largest host of an acceptable model
	uniGPUs  int // every host's GPU count, when all hosts have the same (Prepare), else 0

	// the pod set being placed
	set              *PodSet
	si               int
	exact            bool // aggregates give exact capacities for the current set
	plain            bool // whole GPUs only, nothing else asked (see plainCap): host capacities are free counts
	sliceL           topology.Level
	sliceS           int64
	perK             [topology.MaxHostGPUs + 1]int64 // ⌊k/GPUs⌋ for whole-GPU sets
	perB             [topology.PartialBuckets]int64  // fractional sets: pods a GPU of each partial bucket takes at most
	perKFor, perBFor int32                           // the GPUs and milli perK and perB are for (0: none)
	perKRows         []int64                         // perK for each GPU count g up to the tree's largest host, row g (Prepare)

	extra topology.Admitted // GPUs nominated for others that this gang may take

	// host overlay: what this attempt has taken so far
	ovIdx   []int32
	ovStamp []uint32
	epoch   uint32
	ov      []hostOv
	ovMilli []gpuMilli // ov's milli per GPU, same index, when milli; never shorter than ov then
	milli   bool       // a pod set asks for a GPU fraction: overlays keep their milli per GPU
	noMilli gpuMilli   // what ovFor hands out when they do not: zeros, and only zeros are written to it

	out         []topology.Pod
	pos         int  // next output index of the current set
	start       int  // first output index of the current set
	tracked     bool // the overlay holds every pod of the current set (see track)
	stack       [][]cand
	depth       int
	cands       []cand     // placeSet's candidates
	reqCands    []cand     // solve's candidates at the required level
	seen        int64      // largest capacity seen by candidates
	seenBelow   int64      // the largest of those below the pods needed
	stop        bool       // candidates found one no later node can beat
	gangAll     bool       // solve's candidates must hold the whole gang (holdsGang)
	gang        gangTotals // what its sets ask for together
	gangOut     bool       // one did not, though it held the primary set
	gangFree    int        // the fewest free GPUs such a host needs (gangWholeFree)
	gangCap     int64      // the fewest pods of the primary set such a host has room for (gangCapFloor)
	gangPass    int        // 1+k: the scan considers hosts of k free GPUs only (gangByFree); 0: all
	passPart    int32      // in such a pass, the partly used GPUs a domain needs at least (passBounds)
	passMilli   int64      // the free milli on partly used GPUs it needs
	passBig     int32      // a partly used GPU with this milli free it needs (0: none)
	spreadTop   int64      // Spread, required on one host: the most room a host can have for the primary set (spreadTops)
	spreadFree  int64      // and the most free GPUs
	gangCut     bool       // a domain or host had fewer
	gangStop    bool       // the scan may stop at a host none can come before (gangFirst)
	gangStopped bool       // it did
	got         int64      // pods placed of the set that failed
	last        bool       // the current set is the last placed: it needs no overlay
	order       []int      // pod sets in placement order (setOrder)
	order2      []int
	offs        []int // first rank of each pod set
	ex          exSearch
	forced      []uint8       // GPUs the next fractions take, in order (exhaustive_frac.go)
	wide        []*wideMin    // by GPUs per pod
	wideRx      []*wideMin    // the same for restricted requests
	wlog        wideLog       // the touch log decoded for them (wide_log.go)
	whole       []*wholeIndex // by level: domains by wholly free hosts (whole_index.go)
	wholeRx     []*wholeIndex // the same for restricted requests
	wholeMin    int32         // tests: the range from which bestDomainWhole uses it (0: wholeIndexMin)
	rx          *Restriction  // the request's, synced with the State
	scope       topology.DomainID

	// placeOne's last descents (one_path.go)
	paths     []*onePath        // by pod shape (shapeIndex)
	pathsRx   []*onePath        // the same for restricted requests
	pathHosts []topology.HostID // pathFrom's scratch: the touches since, when they wrap the log's end
	pathLeave []topology.Level  // and the level where each leaves the path
	noPath    bool              // tests only: placeOne descends every time

	rel       []hostOv         // overlays of the hosts of the jobs gone (PlaceWithout), sorted by host
	relGot    []relGot         // the general build's scratch: what rel's hosts got back, same index
	relMilli  []gpuMilli       // rel's milli per GPU, same index, written by the general build only (newRel)
	relSum    []int64          // prefix sums of rel's gains in whole GPUs
	relSumM   []int64          // prefix sums of rel's gains in milli, or empty when none gained any (wholeEntries)
	relOrder  []int64          // released hosts: bitmap words with per-word counts, or empty (release_index.go)
	relIdx    []int32          // per host: index into rel while building it
	relAcc    []uint64         // per host: the GPUs its pods gave back, while building rel (buildWhole)
	relFull   []uint64         // bitmap of hosts a pod gave back whole, their relAcc not written (wholeAdd)
	relBad    int              // the first pod given that is not podOK, or -1 (releasePods)
	relRes    [][2]int32       // per host: the CPU and memory they gave back, when relUseRes
	relUseRes bool             // buildWhole sums CPU and memory: a pod set asks for them (resSets)
	gone      []topology.JobID // sorted
	relPods   []topology.Pod   // scratch: the gone jobs' pods (empty once gatherWhole built the entries)
	relStarts []int32          // gatherRel's and gatherWhole's scratch: where each job's pods start
	relJobs   []topology.JobID // scratch
	relRest   []topology.JobID // wholeSingles' scratch: the jobs whose pods are read
	hostCaps  []int64          // fillHosts' scratch: capacities of a rack's hosts
	relAll    bool             // released hosts share every GPU: no failed GPU, unhealthy host or nomination
	relCapG   int32            // GPUs per pod relCapSum is for (0: none)
	relCapSum []int64          // prefix sums of released hosts' gains for plain sets (release_fill.go)
	relKeys   [][2]uint8       // per rel entry, when wholeEntries built them: its whole-free count (0 if a job that stays holds it exclusively) and its free count (relCapsQuick)
	rackStamp []uint32         // per domain: the epoch in which a host of it took pods (release_fill.go)
	fracs     bool             // a pod set of the request asks for a GPU fraction (fracSets; set by release and buildRel, read with rel)
	relDirty  bool             // relMilli's slots may be nonzero (a build for fractional pods): newRel must not reuse them as they are
	ovTaken   bool             // since the last reset, an overlay was made or handed out (ovFor), or a rack stamped (reset)
	relKept   bool             // v.ov[:len(v.rel)] (its backing array) holds this release's overlays, maybe taken from (installRel)
	relPlaced bool             // wholeEntries wrote the overlays to v.ov's backing array too: the first install writes only their indexes
	legacy    bool             // tests only: the general paths, without plainCap and the shortcuts that skip work
	noOne     bool             // tests only: no placeOne (one.go), the rest as usual
	noGang    bool             // tests only: no gang bounds (gang_host.go), no Spread stop (spreadTops)
	anyOne    bool             // candidates stop at the first (gangSetsReason)
	reason    Reason

	maxByModel []int        // per model, its largest host's GPUs (-1: none)
	maxAny     int          // the largest of them (largestHost when any model is acceptable)
	kinds      [][]hostKind // per model, its host sizes (host_kinds.go)

	// the profile's capacity-loss rule (profile.go)
	prof    *profile
	pidx    profIndex
	psc     profScratch
	phv     hostView
	profAt  topology.HostID // the host profHost chose, and the GPU a
	profGPU int             // fraction takes there (-1: none)
	known   knownCap        // bestChild's last choice and its capacity (capAt)
	ckey    uint64          // and its pathKey, when ckeyOK (keyOf)
	ckeyOK  bool
	// checkKeys (tests): pathSet compares the scans' keys with pathKey's
	// and counts those that differ in badKeys.
	checkKeys bool
	badKeys   int
}

// hostOv is a host's overlay: what the gang may still take there. Its free
// milli per GPU, which only fractional pods read, is kept apart (gpuMilli,
// at the same index of ovMilli or relMilli), so that whole-GPU requests,
// which touch many overlays, read and write 24 bytes per host.
type hostOv struct {
	mask   uint64 // whole GPUs still free for this gang
	h      topology.HostID
	cpu    int32 // free CPU and memory; 0 in the entries wholeEntries
	mem    int32 // builds for a request that asks for neither (resSets): unread
	others bool  // the host holds pods of other jobs (not the gang, not gone)
}

// gpuMilli is a host's free milli per GPU for fractional pods (entries past
// its GPU count are unused).
type gpuMilli [topology.MaxHostGPUs]uint16

// cand is a domain (or host) with its capacity for the current pod set.
type cand struct {
	idx  int32
	cap  int64
	free int64
	take int64 // pods assigned (fill)
	host bool  // a host, not a domain
}

const inf = math.MaxInt64 / 4

// Place finds where request r goes in s and writes it to plan (reusing the
// plan's buffers). It returns false and a Reason when the gang cannot fit
// now, and an error (wrapping ErrInvalid) only for a malformed request.
func (v *Solver) Place(s *topology.State, r *Request, plan *Plan) (bool, Reason, error) {
	if !r.plain(s.Tree()) { // Validate, one call fewer for the commonest requests
		if err := r.validate(s.Tree()); err != nil {
			return false, Reason{}, err
		}
	}
	// PlaceWithout with no job gone, anywhere: begin leaves no overlay, no
	// scope and no release, as release(nil) and placeReleased's reset would.
	v.begin(s, r)
	v.relSum, v.relOrder = v.relSum[:0], v.relOrder[:0]
	if v.placeOne(plan) { // placeReset, one call fewer for the commonest requests
		return true, Reason{}, nil
	}
	return v.placeGeneral(plan)
}

// PlaceWithout is Place inside domain scope (the root: anywhere; a domain at
// or below the required level: inside it), as if the jobs gone (sorted
// ascending) held nothing: their GPUs, milli, CPU, memory and exclusive holds
// count as free. The State is not changed; the plan's pods may use the gone
// jobs' GPUs, so it applies only once they are removed. Preemption uses it
// to test victim sets.
func (v *Solver) PlaceWithout(s *topology.State, r *Request, scope topology.DomainID, gone []topology.JobID, plan *Plan) (bool, Reason, error) {
	if err := v.checkWithout(s, r, scope, gone); err != nil {
		return false, Reason{}, err
	}
	v.begin(s, r)
	v.scope = scope
	v.release(gone)
	return v.placeReleased(plan)
}

// PlaceWithoutPods is PlaceWithout for a caller that has read the pods of
// the jobs gone already (preemption, choosing them): pods are those pods,
// as State.AppendJobsPods returns them (the jobs in any order), and
// PlaceWithout does not read them again. It checks that they are as many as
// the jobs gone have and that each names a host of the tree, GPUs of that
// host and a valid fraction; pods that are not the jobs' give a plan that
// does not apply once they are gone (Apply rejects it whole). pods is only
// read.
func (v *Solver) PlaceWithoutPods(s *topology.State, r *Request, scope topology.DomainID, gone []topology.JobID, pods []topology.Pod, plan *Plan) (bool, Reason, error) {
	if err := v.checkWithout(s, r, scope, gone); err != nil {
		return false, Reason{}, err
	}
	if err := checkGoneCount(s, gone, pods); err != nil {
		return false, Reason{}, err
	}
	v.begin(s, r)
	v.scope = scope
	if err := v.releasePods(gone, pods); err != nil {
		return false, Reason{}, err
	}
	return v.placeReleased(plan)
}

// checkWithout checks PlaceWithout's arguments.
func (v *Solver) checkWithout(s *topology.State, r *Request, scope topology.DomainID, gone []topology.JobID) error {
	if err := r.Validate(s.Tree()); err != nil {
		return err
	}
	if scope < 0 || int(scope) >= s.Tree().NumDomains() {
		return fmt.Errorf("%w: scope domain %d out of range", ErrInvalid, scope)
	}
	if !slices.IsSorted(gone) {
		return fmt.Errorf("%w: jobs gone are not sorted", ErrInvalid)
	}
	return nil
}

// placeReleased places the request around the overlays release built.
func (v *Solver) placeReleased(plan *Plan) (bool, Reason, error) {
	v.reset()
	return v.placeReset(plan)
}

// placeReset is placeReleased once the overlays are reset.
func (v *Solver) placeReset(plan *Plan) (bool, Reason, error) {
	if v.placeOne(plan) {
		return true, Reason{}, nil
	}
	return v.placeGeneral(plan)
}

// placeGeneral is placeReset when placeOne did not place the request.
func (v *Solver) placeGeneral(plan *Plan) (bool, Reason, error) {
	v.known, v.profAt, v.profGPU = knownCap{idx: -1}, -1, -1 // as begin left them
	v.setOrder()
	if !v.rejectFast() {
		plan.Pods = plan.Pods[:0]
		return false, v.reason, nil
	}
	v.sizeOut(plan)
	d, ok := v.solve()
	if !ok {
		plan.Pods = plan.Pods[:0]
		return false, v.reason, nil
	}
	v.writePlan(plan, d)
	return true, Reason{}, nil
}

// begin resets the per-call state.
func (v *Solver) begin(s *topology.State, r *Request) {
	t := s.Tree()
	if v.t != t { // Prepare's own test, without the call
		v.Prepare(t)
	}
	v.rel, v.gone, v.scope = v.rel[:0], nil, 0
	v.newEpoch() // reset with nothing released: no overlay yet, and no stamp left by an earlier call (or a zero stamp) matches
	v.s, v.r, v.hl = s, r, t.HostLevel()
	v.milli = v.fracSets()
	if v.rx = r.Restriction; v.rx != nil {
		v.rx.sync(s)
	}
	r.setJobInfo(&v.info)
	v.reason = Reason{}
	v.known = knownCap{idx: -1}
	v.ex.fails.n = 0
	v.profAt, v.profGPU = -1, -1
	if len(r.Models) != 0 || !v.anyModel { // else modelOK is still all true from the last call
		v.setModels()
	}
	v.extra.Collect(s, r.Job, &v.info) // the nominated GPUs this gang may take
}

// sizeOut makes the plan's pod buffer the output, sized to the gang (pods
// are written in place; after a no-fit its content is meaningless).
func (v *Solver) sizeOut(plan *Plan) {
	total := 0
	for i := range v.r.Sets {
		total += int(v.r.Sets[i].Pods)
	}
	if cap(plan.Pods) < total {
		plan.Pods = make([]topology.Pod, total)
	}
	plan.Pods = plan.Pods[:total]
	v.out = plan.Pods
	if need := len(v.rel) + total; cap(v.ov) < need { // a pod makes one overlay at most: room once, not growth by copies
		v.ov = slices.Grow(v.ov, need-len(v.ov))
	}
}

// setModels sets modelOK (and anyModel) to the request's models. With no
// models asked for and anyModel set, modelOK is all true for this tree
// already (Prepare clears anyModel when the tree changes), and begin does
// not call it.
func (v *Solver) setModels() {
	t := v.t
	if cap(v.modelOK) < t.NumModels() {
		v.modelOK = make([]bool, t.NumModels())
	}
	v.modelOK = v.modelOK[:t.NumModels()]
	v.anyModel = len(v.r.Models) == 0
	for m := range v.modelOK {
		v.modelOK[m] = v.anyModel
	}
	for _, m := range v.r.Models {
		v.modelOK[m] = true
	}
	if !v.anyModel {
		all := true
		for _, ok := range v.modelOK {
			all = all && ok
		}
		v.anyModel = all
	}
}

func (v *Solver) writePlan(plan *Plan, d topology.DomainID) {
	plan.Job = v.r.Job
	plan.Info = v.info
	n := len(v.r.Sets)
	if cap(plan.sets) < n {
		plan.sets = make([]topology.PodSet, n)
	}
	plan.sets = plan.sets[:n]
	sets := plan.sets
	for i := range sets { // in place, field by field: no copy of each set, no append's checks
		in, out := &v.r.Sets[i], &sets[i]
		out.Count, out.GPUs, out.Milli, out.CPUMilli = in.Pods, in.GPUs, in.Milli, in.CPUMilli
		out.MemoryMiB, out.SliceSize, out.SliceLevel = in.MemoryMiB, in.SliceSize, in.SliceLevel
	}
	plan.Info.Sets = plan.sets
	plan.Domain, plan.Host = d, -1
	if v.r.Required == v.hl {
		plan.Host = v.out[0].Host
		plan.Domain = v.t.HostParent(plan.Host)
	}
}
