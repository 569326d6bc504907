package openb

import (
	"fmt"
	"slices"

	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Cluster is a node list built into a topology.Tree.
type Cluster struct {
	Tree *topology.Tree
	// Nodes[h] is the node of host h.
	Nodes []Node
	// GPUs is the number of GPUs of all nodes.
	GPUs int
}

// Trees NewCluster builds from a node list.
const (
	// Flat: no domain levels; every node is a host of the root, in file order.
	Flat = "flat"
	// Pool: one level, "pool", grouping nodes of one instance type (GPU model,
	// GPU count, CPU and memory) like a Kubernetes node pool; pools in order
	// of first appearance, nodes in file order within their pool.
	Pool = "pool"
)

// Trees are the tree kinds NewCluster knows.
var Trees = []string{Flat, Pool}

// NewCluster builds the Tree of nodes with topology.BuildHosts, of kind tree
// (Flat or Pool; "" is Flat). Node names must be unique. Host ids follow the
// tree's depth-first order; Cluster.Nodes is indexed by host id.
func NewCluster(nodes []Node, tree string) (*Cluster, error) {
	var levels []string
	switch tree {
	case "", Flat:
	case Pool:
		levels = []string{Pool}
	default:
		return nil, fmt.Errorf("openb: unknown tree %q (want %s or %s)", tree, Flat, Pool)
	}
	specs := make([]topology.HostSpec, len(nodes))
	for i, n := range nodes {
		specs[i] = topology.HostSpec{Name: n.Name, GPUs: n.GPUs, Model: n.Model,
			CPUMilli: n.CPUMilli, MemoryMiB: n.MemoryMiB}
		if levels != nil {
			specs[i].Path = []string{fmt.Sprintf("%s-%dgpu-%dm-%dMi", n.Model, n.GPUs, n.CPUMilli, n.MemoryMiB)}
		}
	}
	t, err := topology.BuildHosts(levels, specs)
	if err != nil {
		return nil, fmt.Errorf("openb: node list: %w", err)
	}
	c := &Cluster{Tree: t, Nodes: make([]Node, len(nodes)), GPUs: t.NumGPUs()}
	for _, n := range nodes {
		h, ok := t.HostByName(n.Name)
		if !ok {
			return nil, fmt.Errorf("openb: node %q lost by the tree builder", n.Name)
		}
		c.Nodes[h] = n
	}
	return c, nil
}

// CapacityMilli is the cluster's GPU capacity in milli-GPU.
func (c *Cluster) CapacityMilli() int64 { return int64(c.GPUs) * topology.FullGPU }

// Shape is a pod's request in the terms of a Cluster: what one pod asks for,
// with model names resolved to the Tree's model ids.
type Shape struct {
	// GPUs is the number of whole GPUs, or 1 for a fraction of one GPU.
	GPUs int32
	// Milli is 0 for whole GPUs, or the 1…999 milli-GPU share of one GPU.
	Milli               int32
	CPUMilli, MemoryMiB int32
	// Models are the acceptable model ids (Tree.ModelByName), ascending;
	// nil for any model (and always nil for a CPU-only pod).
	Models []int
	// NoModel: the pod asks for GPU models none of which the cluster has; it
	// fits nowhere.
	NoModel bool
}

// MilliGPU is the shape's GPU request in milli-GPU.
func (s *Shape) MilliGPU() int64 {
	if s.Milli > 0 {
		return int64(s.Milli)
	}
	return int64(s.GPUs) * topology.FullGPU
}

// Accepts reports whether a host of model m may take the pod.
func (s *Shape) Accepts(m int) bool {
	if s.NoModel {
		return false
	}
	return s.Models == nil || slices.Contains(s.Models, m)
}

// Request returns the one-pod placement request of the shape as job id,
// with the default policy. A NoModel shape has no request: the caller must
// treat it as a no-fit (an empty model list would mean any model).
func (s *Shape) Request(id topology.JobID) placement.Request {
	return placement.Request{Job: id, Models: s.Models, Sets: []placement.PodSet{{
		Pods: 1, GPUs: s.GPUs, Milli: s.Milli, CPUMilli: s.CPUMilli, MemoryMiB: s.MemoryMiB}}}
}

// Shape converts a pod of the trace into its request on c.
func (c *Cluster) Shape(p *Pod) Shape {
	s := Shape{CPUMilli: int32(p.CPUMilli), MemoryMiB: int32(p.MemoryMiB)}
	if p.NumGPU == 0 {
		return s
	}
	s.GPUs = int32(p.NumGPU)
	if p.GPUMilli < topology.FullGPU {
		s.Milli = int32(p.GPUMilli)
	}
	if len(p.Models) == 0 {
		return s
	}
	s.Models = []int{}
	for _, name := range p.Models {
		if m, ok := c.Tree.ModelByName(name); ok && !slices.Contains(s.Models, m) {
			s.Models = append(s.Models, m)
		}
	}
	slices.Sort(s.Models)
	s.NoModel = len(s.Models) == 0
	return s
}

// Shapes converts every pod of a trace (see Shape).
func (c *Cluster) Shapes(pods []Pod) []Shape {
	out := make([]Shape, len(pods))
	for i := range pods {
		out[i] = c.Shape(&pods[i])
	}
	return out
}
