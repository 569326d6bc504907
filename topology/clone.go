package topology

import (
	"slices"

	"github.com/bits-and-blooms/bitset"
)

// Clone returns an independent copy of the State (sharing the immutable
// Tree): a copy of flat slices, for what-if planning. O(GPUs + pods). The
// copy keeps the job and pod tables' spare room (see Grow), so it takes as
// many jobs and pods as the original without reallocating.
func (s *State) Clone() *State {
	c := &State{t: s.t, nm: s.nm, nb: s.nb, podFree: s.podFree, nPods: s.nPods, nJobs: s.nJobs, touches: &touchLog{}}
	c.unused = slices.Clone(s.unused)
	c.partial = slices.Clone(s.partial)
	c.failed = slices.Clone(s.failed)
	c.nominated = slices.Clone(s.nominated)
	c.milli = slices.Clone(s.milli)
	c.hostFlags = slices.Clone(s.hostFlags)
	c.hostCPU = slices.Clone(s.hostCPU)
	c.hostMem = slices.Clone(s.hostMem)
	c.hostGen = slices.Clone(s.hostGen)
	c.hostPods = slices.Clone(s.hostPods)
	c.agg = s.agg.clone()
	c.jobView = s.jobView.clone()
	c.pods = append(make([]podRec, 0, cap(s.pods)), s.pods...)
	c.jobs = append(make([]jobRec, 0, cap(s.jobs)), s.jobs...)
	c.cloneSets()
	c.setRoom = make([]PodSet, 0, cap(s.setRoom)-len(s.setRoom))
	c.noms, c.nomB = slices.Clone(s.noms), s.nomB
	for i := range c.noms {
		c.noms[i].GPUs = slices.Clone(c.noms[i].GPUs)
	}
	return c
}

// cloneSets gives the copied job records sets of their own, with the
// originals' capacities, carved from one allocation.
func (c *State) cloneSets() {
	n := 0
	for i := range c.jobs {
		n += cap(c.jobs[i].info.Sets)
	}
	room := make([]PodSet, n)
	for i := range c.jobs {
		sets := c.jobs[i].info.Sets
		k := cap(sets)
		c.jobs[i].info.Sets = append(room[:0:k], sets...)
		room = room[k:]
	}
}

func (a *agg) clone() agg {
	c := agg{
		freeW:      slices.Clone(a.freeW),
		hostFree:   slices.Clone(a.hostFree),
		hostCap:    slices.Clone(a.hostCap),
		hostShared: slices.Clone(a.hostShared),
		hostPart:   slices.Clone(a.hostPart),
		idleHostW:  slices.Clone(a.idleHostW),
		domFree:    slices.Clone(a.domFree),
		domCap:     slices.Clone(a.domCap),
		domIdle:    slices.Clone(a.domIdle),
		domModel:   slices.Clone(a.domModel),
		domHist:    slices.Clone(a.domHist),
		domPre:     slices.Clone(a.domPre),
		domExcl:    slices.Clone(a.domExcl),
		domShared:  slices.Clone(a.domShared),
		domPart:    slices.Clone(a.domPart),
		idle:       make([]*bitset.BitSet, len(a.idle)),
		idleW:      make([][]uint64, len(a.idleW)),
	}
	c.free = bitset.From(c.freeW)
	for l := range a.idleW {
		c.idleW[l] = slices.Clone(a.idleW[l])
		c.idle[l] = bitset.From(c.idleW[l])
	}
	return c
}
