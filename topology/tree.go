package topology

import (
	"fmt"
	"strings"
)

// Tree is the immutable topology of a cluster: domain levels root-first, the
// hosts below them and their GPUs, laid out as struct-of-arrays with int32
// links. Domains of one level are numbered depth-first in order of first
// appearance in the builder's input, so every domain covers a contiguous range
// of child domains, hosts and GPUs. Names are interned at build time; no
// accessor used by planners touches a string or a map.
//
// A Tree is safe for concurrent reads and is shared by every State built on it.
type Tree struct {
	levelNames []string // [0] root (""), [1..L] named levels, [L+1] "host"
	levelStart []int32  // domains of level l: [levelStart[l], levelStart[l+1])

	domParent   []int32 // -1 for the root
	domLevel    []uint8
	domChild    []int32 // first child domain, or first host at level L
	domChildEnd []int32
	domHostLo   []int32
	domHostEnd  []int32
	domHosts    []int32 // domHostEnd − domHostLo
	levelHosts  []int32 // per level: the most hosts a domain of it holds
	domIdx      []int32 // the domain's index in its level (d − levelStart[domLevel[d]])
	domLabel    []int32

	hostParent []int32  // domain of level L
	hostGPU    []int32  // len H+1: GPUs of host h are [hostGPU[h], hostGPU[h+1])
	hostModel  []uint16 // index into models
	hostCPU    []int32  // milli-cores, Unlimited for none given
	hostMem    []int32  // MiB, Unlimited for none given
	hostLabel  []int32

	labels    []string
	labelIDs  map[string]int32
	models    []string
	modelIDs  map[string]int32
	hostNames map[string]HostID // nil when host names are paths (shape builder)
	maxGPUs   int
	uniGPUs   int // every host's GPU count when all have the same, else 0
}

// Levels returns the number of domain levels, the root included: named levels
// are 1…Levels()-1.
func (t *Tree) Levels() int { return len(t.levelNames) - 1 }

// HostLevel is the implicit leaf level.
func (t *Tree) HostLevel() Level { return Level(len(t.levelNames) - 1) }

// LevelName returns the name of level l: "" for the root, "host" for the
// host level, and the number itself for a level the tree does not have (an
// error message may name a level a caller got wrong).
func (t *Tree) LevelName(l Level) string {
	if int(l) < 0 || int(l) >= len(t.levelNames) {
		return fmt.Sprint(int(l))
	}
	return t.levelNames[l]
}

// LevelByName returns the level called name ("host" included), or false.
func (t *Tree) LevelByName(name string) (Level, bool) {
	if name == "" {
		return NoLevel, false
	}
	for i, n := range t.levelNames {
		if n == name {
			return Level(i), true
		}
	}
	return NoLevel, false
}

// NumDomains is the number of domains, the root included.
func (t *Tree) NumDomains() int { return len(t.domParent) }

// NumHosts is the number of hosts.
func (t *Tree) NumHosts() int { return len(t.hostParent) }

// NumGPUs is the number of GPUs.
func (t *Tree) NumGPUs() int { return int(t.hostGPU[len(t.hostGPU)-1]) }

// MaxHostGPUs is the largest GPU count of any host.
func (t *Tree) MaxHostGPUs() int { return t.maxGPUs }

// UniformHostGPUs is every host's GPU count when all hosts have the same
// one, else 0 (hosts of different counts, or no host).
func (t *Tree) UniformHostGPUs() int { return t.uniGPUs }

// LevelMaxHosts is the most hosts a domain of level l (0 … the last named
// level) holds: a bound on any count of its hosts; 1 at the host level, 0
// for a level the tree does not have.
func (t *Tree) LevelMaxHosts(l Level) int {
	switch {
	case l == t.HostLevel():
		return 1
	case l < 0 || int(l) >= len(t.levelHosts):
		return 0
	}
	return int(t.levelHosts[l])
}

// LevelDomains returns the domains of level l (l < HostLevel()) as [lo, hi).
func (t *Tree) LevelDomains(l Level) (lo, hi DomainID) {
	return DomainID(t.levelStart[l]), DomainID(t.levelStart[l+1])
}

// DomainLevel returns the level of domain d.
func (t *Tree) DomainLevel(d DomainID) Level { return Level(t.domLevel[d]) }

// Parent returns the parent of d, or -1 for the root.
func (t *Tree) Parent(d DomainID) DomainID { return DomainID(t.domParent[d]) }

// Children returns the child domains of d as [lo, hi); empty when d is at the
// last named level (its children are hosts: see Hosts).
func (t *Tree) Children(d DomainID) (lo, hi DomainID) {
	if int(t.domLevel[d]) == t.Levels()-1 {
		return 0, 0
	}
	return DomainID(t.domChild[d]), DomainID(t.domChildEnd[d])
}

// Hosts returns the hosts of domain d as [lo, hi).
func (t *Tree) Hosts(d DomainID) (lo, hi HostID) {
	return HostID(t.domHostLo[d]), HostID(t.domHostEnd[d])
}

// GPUs returns the GPUs of domain d as [lo, hi).
func (t *Tree) GPUs(d DomainID) (lo, hi GPUID) {
	return GPUID(t.hostGPU[t.domHostLo[d]]), GPUID(t.hostGPU[t.domHostEnd[d]])
}

// DomainGPUs is the number of GPUs of domain d.
func (t *Tree) DomainGPUs(d DomainID) int {
	return int(t.hostGPU[t.domHostEnd[d]] - t.hostGPU[t.domHostLo[d]])
}

// HostDomain returns the domain of level l containing host h (l < HostLevel()).
func (t *Tree) HostDomain(h HostID, l Level) DomainID {
	d := t.hostParent[h]
	for int(t.domLevel[d]) > int(l) {
		d = t.domParent[d]
	}
	return DomainID(d)
}

// HostParent returns the domain directly above host h.
func (t *Tree) HostParent(h HostID) DomainID { return DomainID(t.hostParent[h]) }

// HostGPUs returns the GPUs of host h as [lo, hi).
func (t *Tree) HostGPUs(h HostID) (lo, hi GPUID) {
	return GPUID(t.hostGPU[h]), GPUID(t.hostGPU[h+1])
}

// HostGPUCount is the number of GPUs of host h.
func (t *Tree) HostGPUCount(h HostID) int { return int(t.hostGPU[h+1] - t.hostGPU[h]) }

// HostModel returns the GPU model id of host h (see ModelName).
func (t *Tree) HostModel(h HostID) int { return int(t.hostModel[h]) }

// HostCPU is the CPU capacity of host h in milli-cores (Unlimited if none).
func (t *Tree) HostCPU(h HostID) int32 { return t.hostCPU[h] }

// HostMemory is the memory capacity of host h in MiB (Unlimited if none).
func (t *Tree) HostMemory(h HostID) int32 { return t.hostMem[h] }

// GPUHost returns the host of GPU g: a division on trees of uniform hosts,
// else a binary search over host GPU ranges.
func (t *Tree) GPUHost(g GPUID) HostID {
	if k := t.uniGPUs; k > 0 { // as the search answers: 0 below, NumHosts past the end
		return HostID(min(max(int(g), 0)/k, len(t.hostParent)))
	}
	lo, hi := 0, len(t.hostParent)
	for lo < hi { // smallest h with hostGPU[h+1] > g
		m := int(uint(lo+hi) >> 1)
		if t.hostGPU[m+1] <= int32(g) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return HostID(lo)
}

// NumModels is the number of distinct GPU models ("" counts as a model).
func (t *Tree) NumModels() int { return len(t.models) }

// ModelName returns the name of model id m.
func (t *Tree) ModelName(m int) string { return t.models[m] }

// ModelByName returns the id of a model, or false if no host has it.
func (t *Tree) ModelByName(name string) (int, bool) {
	m, ok := t.modelIDs[name]
	return int(m), ok
}

// DomainLabel returns d's own label (e.g. "rack17"); "" for the root.
func (t *Tree) DomainLabel(d DomainID) string { return t.labels[t.domLabel[d]] }

// DomainPath returns d's full path joined by "/" (e.g. "block3/rack17").
func (t *Tree) DomainPath(d DomainID) string {
	var parts []string
	for ; d > 0; d = DomainID(t.domParent[d]) {
		parts = append(parts, t.labels[t.domLabel[d]])
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, "/")
}

// HostName returns the host's name: the name given to the host-list builder,
// or the full path (e.g. "block3/rack17/host5") for shape-built trees.
func (t *Tree) HostName(h HostID) string {
	label := t.labels[t.hostLabel[h]]
	if t.hostNames != nil {
		return label
	}
	if p := t.DomainPath(DomainID(t.hostParent[h])); p != "" {
		return p + "/" + label
	}
	return label
}

// HostByName finds a host by the name HostName gives.
func (t *Tree) HostByName(name string) (HostID, bool) {
	if t.hostNames != nil {
		h, ok := t.hostNames[name]
		return h, ok
	}
	parts := strings.Split(name, "/")
	d, ok := t.DomainByPath(parts[:len(parts)-1])
	if !ok || int(t.domLevel[d]) != t.Levels()-1 {
		return -1, false
	}
	id, ok := t.labelIDs[parts[len(parts)-1]]
	if !ok {
		return -1, false
	}
	for h := t.domHostLo[d]; h < t.domHostEnd[d]; h++ {
		if t.hostLabel[h] == id {
			return HostID(h), true
		}
	}
	return -1, false
}

// DomainByPath finds the domain with the given path of labels, root-first
// (an empty path is the root).
func (t *Tree) DomainByPath(path []string) (DomainID, bool) {
	d := DomainID(0)
	for _, label := range path {
		id, ok := t.labelIDs[label]
		lo, hi := t.Children(d)
		if !ok || lo == hi {
			return -1, false
		}
		found := false
		for c := lo; c < hi; c++ {
			if t.domLabel[c] == id {
				d, found = c, true
				break
			}
		}
		if !found {
			return -1, false
		}
	}
	return d, true
}
