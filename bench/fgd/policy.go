package fgd

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/blinksched/blink/bench/openb"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// A Placer is a placement policy under the protocol: it places pods on an
// initially empty cluster, one at a time, and never removes any.
type Placer interface {
	// Reset empties the cluster and seeds the policy's own random choices.
	Reset(seed uint64)
	// Place puts one pod of shape s on the cluster and reports whether it
	// fitted; a pod that fits nowhere leaves the cluster unchanged. An error
	// is a bug (a plan that does not apply), not a no-fit.
	Place(s *openb.Shape) (bool, error)
}

// Policies are the names NewPlacer knows, in the order help lists them.
var Policies = []string{"blink", "blink-bestfit", "bestfit", "random"}

// NewPlacer returns the named policy on cluster c for a workload drawn from
// shapes (the pod list):
//
//   - blink: placement.Solver.Place with the default policy and the
//     workload's profile (openb.Profile: every shape of the pod list,
//     weighted by its pods — what FGD knows of the workload), one pod per
//     request (CPU, memory, GPUs or milli, model filter), applied with
//     State.Apply.
//   - blink-bestfit: the same without a profile (BestFit among hosts).
//   - bestfit: the FGD paper's BestFit: the node minimising
//     0.5·(free CPU − requested CPU)/128,000 + 0.5·(free GPU −
//     requested GPU)/8,000 (milli-cores; milli-GPU summed over the node),
//     ties to the lowest node; a fractional pod takes the GPU with the least
//     free milli that fits (ties: lowest GPU).
//   - random: a node drawn uniformly among those where the pod fits; a
//     fractional pod takes a GPU drawn uniformly among those it fits.
//
// Whole-GPU pods take unused GPUs in every policy.
//
// The placer returned is empty and seeded with 0 (Reset(0)).
func NewPlacer(name string, c *openb.Cluster, shapes []openb.Shape) (Placer, error) {
	var p Placer
	switch name {
	case "blink":
		b := newBlink(c)
		if err := b.v.SetProfile(c.Tree, openb.Profile(shapes)); err != nil {
			return nil, fmt.Errorf("fgd: %w", err)
		}
		p = b
	case "blink-bestfit":
		p = newBlink(c)
	case "bestfit":
		p = &bestFit{m: newNodes(c)}
	case "random":
		p = &random{m: newNodes(c)}
	default:
		return nil, fmt.Errorf("fgd: unknown policy %q (want one of %s)", name, strings.Join(Policies, ", "))
	}
	p.Reset(0)
	return p, nil
}

// bestFit is the paper's BestFit over the baseline node model.
type bestFit struct {
	m             *nodes
	last, lastGPU int // the last pod's node and GPU (-1: whole GPUs), for tests
}

func (p *bestFit) Reset(uint64) { p.m.reset() }

func (p *bestFit) Place(s *openb.Shape) (bool, error) {
	m := p.m
	m.setPod(s)
	best, bestKey := -1, int64(0)
	cpu, gpu := int64(s.CPUMilli), s.MilliGPU()
	for i := range m.model {
		if !m.fits(i, s) {
			continue
		}
		// 0.5·Δcpu/128,000 + 0.5·Δgpu/8,000 = (Δcpu + 16·Δgpu)/256,000: an
		// exact integer key with the same order.
		key := (m.cpu[i] - cpu) + 16*(m.freeMilli[i]-gpu)
		if best < 0 || key < bestKey {
			best, bestKey = i, key
		}
	}
	if best < 0 {
		return false, nil
	}
	g := -1
	if s.Milli > 0 {
		for j, f := range m.gpus(best) {
			if f >= s.Milli && (g < 0 || f < m.gpus(best)[g]) {
				g = j
			}
		}
	}
	m.take(best, s, g)
	p.last, p.lastGPU = best, g
	return true, nil
}

// random is the paper's Random over the baseline node model.
type random struct {
	m             *nodes
	rng           *rand.Rand
	cand          []int
	last, lastGPU int // the last pod's node and GPU (-1: whole GPUs), for tests
}

func (p *random) Reset(seed uint64) {
	p.m.reset()
	p.rng = rand.New(rand.NewPCG(seed, streamPolicy))
}

func (p *random) Place(s *openb.Shape) (bool, error) {
	m := p.m
	m.setPod(s)
	p.cand = p.cand[:0]
	for i := range m.model {
		if m.fits(i, s) {
			p.cand = append(p.cand, i)
		}
	}
	if len(p.cand) == 0 {
		return false, nil
	}
	i := p.cand[p.rng.IntN(len(p.cand))]
	g := -1
	if s.Milli > 0 {
		n := 0
		for j, f := range m.gpus(i) {
			if f >= s.Milli {
				n++
				if p.rng.IntN(n) == 0 { // reservoir sampling: uniform over the fitting GPUs
					g = j
				}
			}
		}
	}
	m.take(i, s, g)
	p.last, p.lastGPU = i, g
	return true, nil
}

// blink places with the engine: placement.Solver on a topology.State.
type blink struct {
	c    *openb.Cluster
	s    *topology.State
	v    placement.Solver
	plan placement.Plan
	req  placement.Request
	set  [1]placement.PodSet
	next topology.JobID
}

func newBlink(c *openb.Cluster) *blink {
	b := &blink{c: c}
	b.req.Sets = b.set[:]
	return b
}

func (b *blink) Reset(uint64) {
	b.s = topology.NewState(b.c.Tree)
	b.next = 0
}

func (b *blink) Place(s *openb.Shape) (bool, error) {
	if s.NoModel {
		return false, nil
	}
	b.req.Job, b.req.Models = b.next, s.Models
	b.set[0] = placement.PodSet{Pods: 1, GPUs: s.GPUs, Milli: s.Milli, CPUMilli: s.CPUMilli, MemoryMiB: s.MemoryMiB}
	ok, _, err := b.v.Place(b.s, &b.req, &b.plan)
	if err != nil || !ok {
		return false, err
	}
	if err := b.s.Apply(b.plan.Delta()); err != nil {
		return false, fmt.Errorf("blink plan does not apply: %w", err)
	}
	b.next++
	return true, nil
}
