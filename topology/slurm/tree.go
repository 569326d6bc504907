package slurm

import (
	"slices"
	"strconv"
	"strings"

	"github.com/blinksched/blink/topology"
)

// maxLevels is the most named levels a topology.Tree holds.
const maxLevels = 60

// switchGraph is the switch hierarchy of a tree topology, by switch index
// (file order).
type switchGraph struct {
	sw       []switchRec
	index    map[string]int
	children [][]int // every Switches= link, in listed order
	parent   []int   // the first switch listing it, -1 for none
	kids     [][]int // tree links: children whose parent this is
	hosts    []int   // nodes below, along tree links
	height   []int   // 0 for leaf switches
}

// buildTree derives levels from the switch hierarchy and lists the hosts.
func (sp *spec) buildTree(opt *Options, res *Result) ([]string, []topology.HostSpec, error) {
	g := &switchGraph{sw: sp.switches, index: make(map[string]int, len(sp.switches))}
	if err := g.resolve(); err != nil {
		return nil, nil, err
	}
	if err := g.checkCycles(); err != nil {
		return nil, nil, err
	}
	if err := g.claimNodes(opt, res); err != nil {
		return nil, nil, err
	}
	g.assignParents(res)
	roots := g.measure(res)
	if len(roots) == 0 {
		return nil, nil, errorf(0, "no switch has nodes")
	}
	H := 0
	for _, r := range roots {
		H = max(H, g.height[r])
	}
	if H+1 > maxLevels {
		return nil, nil, errorf(0, "the switch hierarchy is %d levels deep; a Tree holds at most %d", H+1, maxLevels)
	}
	if len(roots) > 1 {
		names := make([]string, len(roots))
		for i, r := range roots {
			names[i] = g.sw[r].name
		}
		res.warn(0, "%d top-level switches (%s) share no parent: the tree's root joins them, while Slurm runs no job "+
			"across them; require level switch%d to keep that rule", len(roots), RangedString(names), H)
	}
	levels := make([]string, H+1)
	for i := range levels {
		levels[i] = "switch" + strconv.Itoa(H-i)
	}
	hosts, err := g.hostSpecs(opt, roots, H)
	return levels, hosts, err
}

// hostSpecs lists the hosts under the roots, depth first, each labelled with
// its path of H+1 levels.
func (g *switchGraph) hostSpecs(opt *Options, roots []int, H int) ([]topology.HostSpec, error) {
	var hosts []topology.HostSpec
	var chain []int
	var walk func(s int) error
	walk = func(s int) error {
		chain = append(chain, s)
		defer func() { chain = chain[:len(chain)-1] }()
		if len(g.kids[s]) > 0 {
			for _, c := range g.kids[s] {
				if err := walk(c); err != nil {
					return err
				}
			}
			return nil
		}
		path := g.path(chain, H)
		for _, n := range g.sw[s].nodes {
			h, err := opt.hostSpec(g.sw[s].line, n, path)
			if err != nil {
				return err
			}
			hosts = append(hosts, h)
		}
		return nil
	}
	for _, r := range roots {
		if err := walk(r); err != nil {
			return nil, err
		}
	}
	return hosts, nil
}

// path labels a leaf switch's hosts from the chain of switches above it
// (root first): at height h, the highest switch of the chain at most that
// high. So where a switch sits more than one height below its parent, it
// also stands for the missing levels above it (the domain holds exactly its
// hosts), and a short top-level subtree is lifted to the full height.
func (g *switchGraph) path(chain []int, H int) []string {
	out := make([]string, H+1)
	j := 0
	for h := H; h >= 0; h-- {
		for g.height[chain[j]] > h {
			j++ // ends: the leaf switch has height 0
		}
		out[H-h] = g.sw[chain[j]].name
	}
	return out
}

// resolve indexes switch names and resolves Switches= links.
func (g *switchGraph) resolve() error {
	for i := range g.sw {
		s := &g.sw[i]
		if prev, dup := g.index[s.name]; dup {
			return errorf(s.line, "switch %s already defined on line %d", s.name, g.sw[prev].line)
		}
		g.index[s.name] = i
	}
	g.children = make([][]int, len(g.sw))
	for i := range g.sw {
		s := &g.sw[i]
		seen := map[int]bool{}
		for _, c := range s.children {
			j, ok := g.index[c]
			switch {
			case !ok:
				return errorf(s.line, "switch %s: unknown switch %s in Switches", s.name, c)
			case j == i:
				return errorf(s.line, "switch cycle: %s lists itself in Switches", s.name)
			case seen[j]:
				continue // a repeated link adds nothing
			}
			seen[j] = true
			g.children[i] = append(g.children[i], j)
		}
	}
	return nil
}

// checkCycles rejects a cycle among Switches= links (Slurm: "not a tree"),
// naming the switches around it.
func (g *switchGraph) checkCycles() error {
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, len(g.sw))
	var stack []int
	var visit func(i int) error
	visit = func(i int) error {
		color[i] = grey
		stack = append(stack, i)
		for _, c := range g.children[i] {
			switch color[c] {
			case grey:
				k := len(stack) - 1
				for stack[k] != c {
					k--
				}
				names := make([]string, 0, len(stack)-k+1)
				for _, s := range stack[k:] {
					names = append(names, g.sw[s].name)
				}
				names = append(names, g.sw[c].name)
				return errorf(g.sw[i].line, "switch cycle: %s", strings.Join(names, " → "))
			case white:
				if err := visit(c); err != nil {
					return err
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
		return nil
	}
	for i := range g.sw {
		if color[i] == white {
			if err := visit(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// claimNodes checks every node is on one leaf switch and applies
// Options.Nodes.
func (g *switchGraph) claimNodes(opt *Options, res *Result) error {
	owners := map[string]owner{}
	filter := newNodeFilter(opt.Nodes)
	for i := range g.sw {
		s := &g.sw[i]
		if !s.hasNodes {
			continue
		}
		s.nodes = filter.keep(res, s.line, "switch "+s.name, s.nodes)
		for _, n := range s.nodes {
			if err := claim(owners, n, "switch", owner{s.name, s.line}); err != nil {
				return err
			}
		}
	}
	filter.unplaced(res, "switch")
	return nil
}

// assignParents gives every switch one parent: the first switch (in file
// order) listing it. Other links to it are reported and ignored, since a
// Tree is a tree; Slurm's own example of four spine switches over the same
// four leaf switches thus keeps the first spine.
func (g *switchGraph) assignParents(res *Result) {
	g.parent = make([]int, len(g.sw))
	for i := range g.parent {
		g.parent[i] = -1
	}
	g.kids = make([][]int, len(g.sw))
	for i := range g.sw {
		var ignored, others []string
		for _, c := range g.children[i] {
			if p := g.parent[c]; p >= 0 {
				ignored = append(ignored, g.sw[c].name)
				if !slices.Contains(others, g.sw[p].name) {
					others = append(others, g.sw[p].name)
				}
				continue
			}
			g.parent[c] = i
			g.kids[i] = append(g.kids[i], c)
		}
		if len(ignored) > 0 {
			res.warn(g.sw[i].line, "switch %s lists %s, already under %s: links ignored (a switch has one parent)",
				g.sw[i].name, RangedString(ignored), RangedString(others))
		}
	}
}

// measure counts hosts and heights along tree links, drops switches with no
// hosts (a warning each) and returns the top-level switches in file order.
// The graph is acyclic, so the recursion ends.
func (g *switchGraph) measure(res *Result) []int {
	n := len(g.sw)
	g.hosts = make([]int, n)
	g.height = make([]int, n)
	done := make([]bool, n)
	var visit func(i int)
	visit = func(i int) {
		if done[i] {
			return
		}
		done[i] = true
		g.hosts[i] = len(g.sw[i].nodes)
		kept := g.kids[i][:0]
		for _, c := range g.kids[i] {
			visit(c)
			if g.hosts[c] > 0 {
				kept = append(kept, c)
				g.hosts[i] += g.hosts[c]
				g.height[i] = max(g.height[i], g.height[c]+1)
			}
		}
		g.kids[i] = kept
	}
	var roots []int
	for i := range g.sw {
		visit(i)
	}
	for i := range g.sw {
		switch {
		case g.hosts[i] == 0:
			res.warn(g.sw[i].line, "switch %s has no nodes below it: left out", g.sw[i].name)
		case g.parent[i] < 0:
			roots = append(roots, i)
		}
	}
	return roots
}
