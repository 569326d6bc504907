package fgd

import (
	"github.com/blinksched/blink/bench/openb"
	"github.com/blinksched/blink/topology"
)

// nodes is the baselines' own model of the cluster, independent of the
// topology package: per node its free CPU, memory and milli-GPU of each GPU.
// It is the simplest faithful model of the FGD paper's simulator, where a
// node's GPUs are a list of free milli values.
type nodes struct {
	c         *openb.Cluster
	model     []int   // per node
	cpu, mem  []int64 // free, per node
	lo, n     []int   // a node's GPUs are milli[lo : lo+n]
	milli     []int32 // free milli per GPU
	freeMilli []int64 // per node: Σ milli of its GPUs
	whole     []int   // per node: unused GPUs (milli = 1000)
	accept    []bool  // per model, for the pod being placed
}

func newNodes(c *openb.Cluster) *nodes {
	h := len(c.Nodes)
	m := &nodes{c: c, model: make([]int, h), cpu: make([]int64, h), mem: make([]int64, h),
		lo: make([]int, h), n: make([]int, h), milli: make([]int32, c.GPUs),
		freeMilli: make([]int64, h), whole: make([]int, h), accept: make([]bool, c.Tree.NumModels())}
	g := 0
	for i := range c.Nodes {
		m.model[i] = c.Tree.HostModel(topology.HostID(i))
		m.lo[i], m.n[i] = g, c.Nodes[i].GPUs
		g += m.n[i]
	}
	m.reset()
	return m
}

// reset frees everything.
func (m *nodes) reset() {
	for i, n := range m.c.Nodes {
		m.cpu[i], m.mem[i] = n.CPUMilli, n.MemoryMiB
		m.freeMilli[i] = int64(n.GPUs) * topology.FullGPU
		m.whole[i] = n.GPUs
	}
	for g := range m.milli {
		m.milli[g] = topology.FullGPU
	}
}

// setPod prepares the model filter for s.
func (m *nodes) setPod(s *openb.Shape) {
	for i := range m.accept {
		m.accept[i] = s.GPUs == 0 || s.Accepts(i)
	}
}

// fits reports whether s fits node i (setPod(s) first).
func (m *nodes) fits(i int, s *openb.Shape) bool {
	if !m.accept[m.model[i]] || m.cpu[i] < int64(s.CPUMilli) || m.mem[i] < int64(s.MemoryMiB) {
		return false
	}
	switch {
	case s.GPUs == 0:
		return true
	case s.Milli == 0:
		return m.whole[i] >= int(s.GPUs)
	}
	if m.whole[i] > 0 {
		return true
	}
	for _, f := range m.milli[m.lo[i] : m.lo[i]+m.n[i]] {
		if f >= s.Milli {
			return true
		}
	}
	return false
}

// take places s on node i: a fractional pod on the node's GPU gpu (an index
// within the node, with room for it); whole GPUs on the lowest unused ones
// (which unused GPUs does not matter: they are alike).
func (m *nodes) take(i int, s *openb.Shape, gpu int) {
	m.cpu[i] -= int64(s.CPUMilli)
	m.mem[i] -= int64(s.MemoryMiB)
	gs := m.milli[m.lo[i] : m.lo[i]+m.n[i]]
	if s.Milli > 0 {
		if gs[gpu] == topology.FullGPU {
			m.whole[i]--
		}
		gs[gpu] -= s.Milli
		m.freeMilli[i] -= int64(s.Milli)
		return
	}
	left := int(s.GPUs)
	for g := range gs {
		if left == 0 {
			break
		}
		if gs[g] == topology.FullGPU {
			gs[g] = 0
			left--
		}
	}
	m.whole[i] -= int(s.GPUs)
	m.freeMilli[i] -= int64(s.GPUs) * topology.FullGPU
}

// gpus returns node i's free milli per GPU (read-only).
func (m *nodes) gpus(i int) []int32 { return m.milli[m.lo[i] : m.lo[i]+m.n[i]] }
