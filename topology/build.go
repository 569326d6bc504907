package topology

import (
	"fmt"
	"math"
)

// skeleton is what every builder produces before finalize lays it out: per
// named level, its domains in final (depth-first) order with the index of their
// parent within the previous level, and the hosts in final order with the index
// of their parent within the last named level. Parents must be non-decreasing.
type skeleton struct {
	levels     []string  // named levels, root-first
	domParent  [][]int32 // [level-1][i]: parent index within level-1 (0 = root for level 1)
	domLabel   [][]int32
	hostParent []int32
	hostLabel  []int32
	hostGPUs   []int32
	hostModel  []uint16
	hostCPU    []int32
	hostMem    []int32
	labels     []string
	labelIDs   map[string]int32
	models     []string
	modelIDs   map[string]int32
}

func newSkeleton(levels []string) *skeleton {
	return &skeleton{
		levels:    levels,
		domParent: make([][]int32, len(levels)),
		domLabel:  make([][]int32, len(levels)),
		labelIDs:  map[string]int32{},
		modelIDs:  map[string]int32{},
	}
}

func (s *skeleton) label(name string) int32 {
	if id, ok := s.labelIDs[name]; ok {
		return id
	}
	id := int32(len(s.labels))
	s.labels = append(s.labels, name)
	s.labelIDs[name] = id
	return id
}

func (s *skeleton) model(name string) uint16 {
	if id, ok := s.modelIDs[name]; ok {
		return uint16(id)
	}
	id := int32(len(s.models))
	s.models = append(s.models, name)
	s.modelIDs[name] = id
	return uint16(id)
}

// validateLevels checks level names: non-empty, unique, not "host".
func validateLevels(levels []string) error {
	seen := map[string]bool{}
	for i, l := range levels {
		switch {
		case l == "":
			return fmt.Errorf("%w: level %d has an empty name", ErrInvalid, i)
		case l == "host":
			return fmt.Errorf("%w: level %d: %q is the implicit leaf level", ErrInvalid, i, l)
		case seen[l]:
			return fmt.Errorf("%w: level %d: duplicate level name %q", ErrInvalid, i, l)
		}
		seen[l] = true
	}
	if len(levels) > 60 {
		return fmt.Errorf("%w: %d levels, at most 60", ErrInvalid, len(levels))
	}
	return nil
}

// validateHost checks one host's resources; where names the host in errors.
func validateHost(where string, gpus int, cpu, mem int64) error {
	switch {
	case gpus < 0 || gpus > MaxHostGPUs:
		return fmt.Errorf("%w: %s: %d GPUs, want 0…%d", ErrInvalid, where, gpus, MaxHostGPUs)
	case cpu < 0 || cpu > Unlimited:
		return fmt.Errorf("%w: %s: CPU %d milli-cores, want 0…%d", ErrInvalid, where, cpu, Unlimited)
	case mem < 0 || mem > Unlimited:
		return fmt.Errorf("%w: %s: memory %d MiB, want 0…%d", ErrInvalid, where, mem, Unlimited)
	}
	return nil
}

// finalize lays the skeleton out as a Tree.
func (s *skeleton) finalize(hostNames map[string]HostID) (*Tree, error) {
	L := len(s.levels)
	t := &Tree{labels: s.labels, labelIDs: s.labelIDs, models: s.models, modelIDs: s.modelIDs, hostNames: hostNames}
	if len(t.models) == 0 {
		t.models, t.modelIDs = []string{""}, map[string]int32{"": 0}
	}
	t.levelNames = append(append([]string{""}, s.levels...), "host")
	rootLabel := s.label("")
	t.labels = s.labels
	n := 1
	t.levelStart = make([]int32, L+2)
	for l := 0; l < L; l++ {
		t.levelStart[l+1] = int32(n)
		n += len(s.domParent[l])
	}
	t.levelStart[L+1] = int32(n)
	if n > math.MaxInt32/2 {
		return nil, fmt.Errorf("%w: %d domains", ErrInvalid, n)
	}
	t.domParent = make([]int32, n)
	t.domLevel = make([]uint8, n)
	t.domChild = make([]int32, n)
	t.domChildEnd = make([]int32, n)
	t.domHostLo = make([]int32, n)
	t.domHostEnd = make([]int32, n)
	t.domLabel = make([]int32, n)
	t.domParent[0], t.domLabel[0] = -1, rootLabel
	for l := 0; l < L; l++ {
		base, pbase := t.levelStart[l+1], t.levelStart[l]
		for i, p := range s.domParent[l] {
			d := base + int32(i)
			t.domParent[d] = pbase + p
			t.domLevel[d] = uint8(l + 1)
			t.domLabel[d] = s.domLabel[l][i]
		}
	}
	if err := t.layoutHosts(s); err != nil {
		return nil, err
	}
	return t, nil
}

// layoutHosts fills host arrays, GPU prefix sums and every domain's child and
// host ranges (children follow parents in order, so ranges come from one pass).
func (t *Tree) layoutHosts(s *skeleton) error {
	H := len(s.hostParent)
	leafBase := t.levelStart[len(s.levels)]
	t.hostParent = make([]int32, H)
	t.hostGPU = make([]int32, H+1)
	var total int64
	for h, p := range s.hostParent {
		t.hostParent[h] = leafBase + p
		t.hostGPU[h] = int32(total)
		total += int64(s.hostGPUs[h])
		if s.hostGPUs[h] > int32(t.maxGPUs) {
			t.maxGPUs = int(s.hostGPUs[h])
		}
		if total > math.MaxInt32 {
			return fmt.Errorf("%w: more than %d GPUs", ErrInvalid, math.MaxInt32)
		}
	}
	t.hostGPU[H] = int32(total)
	if H > 0 && int64(H)*int64(t.maxGPUs) == total { // every host has the most
		t.uniGPUs = t.maxGPUs
	}
	t.hostModel, t.hostCPU, t.hostMem, t.hostLabel = s.hostModel, s.hostCPU, s.hostMem, s.hostLabel
	n := len(t.domParent)
	for d := range n {
		t.domChild[d], t.domChildEnd[d] = -1, -1
		t.domHostLo[d], t.domHostEnd[d] = -1, -1
	}
	for d := n - 1; d > 0; d-- { // children of each domain: a contiguous run
		p := t.domParent[d]
		t.domChild[p] = int32(d)
		if t.domChildEnd[p] < 0 {
			t.domChildEnd[p] = int32(d + 1)
		}
	}
	for h := H - 1; h >= 0; h-- {
		for d := t.hostParent[h]; d >= 0; d = t.domParent[d] {
			t.domHostLo[d] = int32(h)
			if t.domHostEnd[d] < 0 {
				t.domHostEnd[d] = int32(h + 1)
			}
		}
	}
	t.domHosts, t.domIdx = make([]int32, n), make([]int32, n)
	t.levelHosts = make([]int32, len(s.levels)+1)
	for d := range n {
		if t.domHostLo[d] < 0 {
			return fmt.Errorf("%w: domain %q has no hosts", ErrInvalid, t.DomainPath(DomainID(d)))
		}
		if int(t.domLevel[d]) == len(s.levels) {
			t.domChild[d], t.domChildEnd[d] = t.domHostLo[d], t.domHostEnd[d]
		}
		t.domHosts[d] = t.domHostEnd[d] - t.domHostLo[d]
		t.domIdx[d] = int32(d) - t.levelStart[t.domLevel[d]]
		t.levelHosts[t.domLevel[d]] = max(t.levelHosts[t.domLevel[d]], t.domHosts[d])
	}
	return nil
}
