package slurm

import (
	"fmt"
	"strconv"

	"github.com/blinksched/blink/topology"
)

// Options supply what topology files do not say: each node's resources, the
// cluster's node list, and names.
type Options struct {
	// Host returns the resources of the named node: its GPUs, Model,
	// CPUMilli and MemoryMiB (the importer sets Name and Path; CPUMilli or
	// MemoryMiB 0 means topology.Unlimited). An error aborts the import and
	// is wrapped with the node and line. If Host is nil, every node gets
	// Default.
	Host func(name string) (topology.HostSpec, error)
	// Default is every node's resources when Host is nil.
	Default topology.HostSpec
	// Nodes, if not nil, are the cluster's node names (slurm.conf's NodeName
	// lines, `sinfo -N -h -o %N`; ExpandHostlist expands an expression). A
	// flat topology lists no nodes and needs them. For a tree or block
	// topology, nodes the file names that are not in Nodes are left out, and
	// so are Nodes the file places on no switch or block (Slurm warns about
	// both and schedules neither topology-aware); each case is a Warning.
	Nodes []string
	// Levels, if not nil, renames the derived levels, root-first; it must
	// have one name per level (Result.Tree.Levels()-1 of them).
	Levels []string
	// Topology names the topology.yaml entry to import; "" picks the first
	// with cluster_default: true, else the first. ParseConf ignores it.
	Topology string
}

// Form is the kind of topology a file declares.
type Form uint8

const (
	// FormTree: switches (topology/tree).
	FormTree Form = iota + 1
	// FormBlock: blocks and block sizes (topology/block).
	FormBlock
	// FormFlat: no topology (topology/flat, topology.yaml only).
	FormFlat
)

func (f Form) String() string {
	switch f {
	case FormTree:
		return "tree"
	case FormBlock:
		return "block"
	case FormFlat:
		return "flat"
	}
	return "form(?)"
}

// Result is an imported topology.
type Result struct {
	Tree *topology.Tree
	Form Form
	// Name is the topology.yaml entry's name ("" for topology.conf).
	Name string
	// Warnings report what the importer left out or adjusted, in the order
	// found.
	Warnings []Warning
}

// Warning is something the import accepted but changed or left out.
type Warning struct {
	Line int // 0: not tied to one line
	Text string
}

func (w Warning) String() string {
	if w.Line > 0 {
		return "line " + strconv.Itoa(w.Line) + ": " + w.Text
	}
	return w.Text
}

func (r *Result) warn(line int, format string, args ...any) {
	r.Warnings = append(r.Warnings, Warning{Line: line, Text: fmt.Sprintf(format, args...)})
}

// hostSpec returns node name's HostSpec at path (shared, not copied).
func (o *Options) hostSpec(line int, name string, path []string) (topology.HostSpec, error) {
	h := o.Default
	if o.Host != nil {
		var err error
		if h, err = o.Host(name); err != nil {
			return h, fmt.Errorf("%w: line %d: node %s: %w", topology.ErrInvalid, line, name, err)
		}
	}
	h.Name, h.Path = name, path
	if h.CPUMilli == 0 {
		h.CPUMilli = topology.Unlimited
	}
	if h.MemoryMiB == 0 {
		h.MemoryMiB = topology.Unlimited
	}
	switch {
	case h.GPUs < 0 || h.GPUs > topology.MaxHostGPUs:
		return h, errorf(line, "node %s: %d GPUs, want 0…%d", name, h.GPUs, topology.MaxHostGPUs)
	case h.CPUMilli < 0 || h.CPUMilli > topology.Unlimited:
		return h, errorf(line, "node %s: CPU %d milli-cores, want 0…%d", name, h.CPUMilli, topology.Unlimited)
	case h.MemoryMiB < 0 || h.MemoryMiB > topology.Unlimited:
		return h, errorf(line, "node %s: memory %d MiB, want 0…%d", name, h.MemoryMiB, topology.Unlimited)
	}
	return h, nil
}
