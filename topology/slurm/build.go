package slurm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/blinksched/blink/topology"
)

// spec is a parsed topology, from topology.conf or one topology.yaml entry,
// with every hostlist expanded. Lines are the file's, for errors.
type spec struct {
	form      Form
	name      string
	switches  []switchRec
	blocks    []blockRec
	sizes     []int // BlockSizes, node counts
	hasSizes  bool
	sizesLine int
	expanded  int // names expanded so far, bounded by maxNodes
}

type switchRec struct {
	name     string
	line     int
	children []string
	nodes    []string
	hasNodes bool
}

type blockRec struct {
	name  string
	line  int
	nodes []string
}

// setForm records the form a line implies; forms may not mix.
func (sp *spec) setForm(line int, f Form) error {
	if sp.form != 0 && sp.form != f {
		return errorf(line, "a %s line in a %s topology: the forms do not mix", f, sp.form)
	}
	sp.form = f
	return nil
}

// expand expands a hostlist value of key.
func (sp *spec) expand(line int, key, expr string) ([]string, error) {
	names, err := expandHostlist(expr, nil, maxNodes-sp.expanded)
	if err != nil {
		return nil, errorf(line, "%s: %v", key, err)
	}
	sp.expanded += len(names)
	return names, nil
}

// build turns the spec into a Tree.
func (sp *spec) build(opt *Options) (*Result, error) {
	res := &Result{Form: sp.form, Name: sp.name}
	var lv []string
	var hosts []topology.HostSpec
	var err error
	switch sp.form {
	case FormTree:
		lv, hosts, err = sp.buildTree(opt, res)
	case FormBlock:
		lv, hosts, err = sp.buildBlocks(opt, res)
	case FormFlat:
		hosts, err = sp.buildFlat(opt)
	}
	if err != nil {
		return nil, err
	}
	if opt.Levels != nil {
		if len(opt.Levels) != len(lv) {
			return nil, fmt.Errorf("%w: Options.Levels has %d names, the %s topology has %d levels (%s)",
				topology.ErrInvalid, len(opt.Levels), sp.form, len(lv), strings.Join(lv, ", "))
		}
		lv = opt.Levels
	}
	if len(hosts) == 0 {
		return nil, errorf(0, "no nodes left to import")
	}
	if res.Tree, err = topology.BuildHosts(lv, hosts); err != nil {
		return nil, err
	}
	return res, nil
}

// nodeFilter applies Options.Nodes: known reports whether a name is a
// cluster node; placed records the names the topology places.
type nodeFilter struct {
	all    []string
	known  map[string]bool
	placed map[string]bool
}

func newNodeFilter(nodes []string) *nodeFilter {
	if nodes == nil {
		return nil
	}
	f := &nodeFilter{all: nodes, known: make(map[string]bool, len(nodes)), placed: map[string]bool{}}
	for _, n := range nodes {
		f.known[n] = true
	}
	return f
}

// keep filters one record's nodes in place: drops repeats (a warning) and,
// with a filter, names not in Options.Nodes (a warning).
func (f *nodeFilter) keep(res *Result, line int, what string, nodes []string) []string {
	seen := make(map[string]bool, len(nodes))
	var dups, unknown []string
	out := nodes[:0]
	for _, n := range nodes {
		switch {
		case seen[n]:
			dups = append(dups, n)
		case f != nil && !f.known[n]:
			unknown = append(unknown, n)
			seen[n] = true
		default:
			seen[n] = true
			out = append(out, n)
			if f != nil {
				f.placed[n] = true
			}
		}
	}
	if len(dups) > 0 {
		res.warn(line, "%s lists %s more than once: counted once", what, RangedString(dups))
	}
	if len(unknown) > 0 {
		res.warn(line, "%s: %s not in Options.Nodes: left out", what, RangedString(unknown))
	}
	return out
}

// unplaced warns about Options.Nodes the topology does not place.
func (f *nodeFilter) unplaced(res *Result, where string) {
	if f == nil {
		return
	}
	var missing []string
	for _, n := range f.all {
		if !f.placed[n] {
			missing = append(missing, n)
			f.placed[n] = true // report repeats once
		}
	}
	if len(missing) > 0 {
		res.warn(0, "%d of Options.Nodes on no %s, left out: %s", len(missing), where, RangedString(missing))
	}
}

// owner records which record holds a node, to report a node in two.
type owner struct {
	name string
	line int
}

func claim(owners map[string]owner, node, kind string, o owner) error {
	if prev, ok := owners[node]; ok {
		return errorf(o.line, "node %s is in %s %s (line %d) and in %s %s", node, kind, prev.name, prev.line, kind, o.name)
	}
	owners[node] = o
	return nil
}

// buildFlat lists Options.Nodes under the root.
func (sp *spec) buildFlat(opt *Options) ([]topology.HostSpec, error) {
	if len(opt.Nodes) == 0 {
		return nil, errorf(0, "a flat topology lists no nodes: set Options.Nodes")
	}
	hosts := make([]topology.HostSpec, 0, len(opt.Nodes))
	for _, n := range opt.Nodes {
		if n == "" {
			return nil, errorf(0, "Options.Nodes holds an empty name")
		}
		h, err := opt.hostSpec(0, n, nil)
		if err != nil {
			return nil, err
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}

// buildBlocks lays blocks out under their aggregated blocks.
func (sp *spec) buildBlocks(opt *Options, res *Result) ([]string, []topology.HostSpec, error) {
	bl := sp.blocks
	if len(bl) == 0 {
		return nil, nil, errorf(sp.sizesLine, "BlockSizes without any block")
	}
	if err := sp.claimBlocks(opt, res); err != nil {
		return nil, nil, err
	}
	factors, sizes, err := sp.blockLevels(res)
	if err != nil {
		return nil, nil, err
	}
	base := sizes[0]
	for i := range bl {
		if len(bl[i].nodes) < base {
			return nil, nil, errorf(bl[i].line, "block %s has %d nodes, fewer than the base block size %d",
				bl[i].name, len(bl[i].nodes), base)
		}
	}
	K := len(factors)
	levels := make([]string, 0, K)
	for k := K - 1; k >= 1; k-- {
		levels = append(levels, "block"+strconv.Itoa(sizes[k]))
	}
	levels = append(levels, "block")
	labels := sp.blockLabels(factors)
	var hosts []topology.HostSpec
	for i := range bl {
		path := make([]string, 0, K)
		for k := K - 1; k >= 1; k-- {
			path = append(path, labels[k][i/factors[k]])
		}
		path = append(path, bl[i].name)
		for _, n := range bl[i].nodes {
			h, err := opt.hostSpec(bl[i].line, n, path)
			if err != nil {
				return nil, nil, err
			}
			hosts = append(hosts, h)
		}
	}
	return levels, hosts, nil
}

// claimBlocks checks the blocks' names are distinct, keeps the nodes the
// options select, and claims each node for one block.
func (sp *spec) claimBlocks(opt *Options, res *Result) error {
	names := make(map[string]int, len(sp.blocks))
	owners := map[string]owner{}
	filter := newNodeFilter(opt.Nodes)
	for i := range sp.blocks {
		b := &sp.blocks[i]
		if prev, dup := names[b.name]; dup {
			return errorf(b.line, "block %s already defined on line %d", b.name, prev)
		}
		names[b.name] = b.line
		b.nodes = filter.keep(res, b.line, "block "+b.name, b.nodes)
		for _, n := range b.nodes {
			if err := claim(owners, n, "block", owner{b.name, b.line}); err != nil {
				return err
			}
		}
	}
	filter.unplaced(res, "block")
	return nil
}

// blockLabels names the aggregated blocks: [k][group] is the ranged names
// of the factors[k] blocks of a group at level k (k ≥ 1).
func (sp *spec) blockLabels(factors []int) [][]string {
	bl := sp.blocks
	labels := make([][]string, len(factors))
	for k := 1; k < len(factors); k++ {
		f := factors[k]
		for lo := 0; lo < len(bl); lo += f {
			group := make([]string, 0, f)
			for i := lo; i < min(lo+f, len(bl)); i++ {
				group = append(group, bl[i].name)
			}
			labels[k] = append(labels[k], RangedString(group))
		}
	}
	return labels
}

// blockLevels returns the block levels Slurm uses: per level the number of
// base blocks aggregated (1, then powers of two) and its size in nodes.
// Without BlockSizes the base size is the first block's node count and the
// levels aggregate 1, 2, 4, 8 and 16 blocks. Levels stop at the first that
// covers every block.
func (sp *spec) blockLevels(res *Result) (factors, sizes []int, err error) {
	nb := len(sp.blocks)
	if !sp.hasSizes {
		base := len(sp.blocks[0].nodes)
		for f := 1; f <= 16; f *= 2 {
			factors, sizes = append(factors, f), append(sizes, f*base)
			if f >= nb {
				break
			}
		}
		return factors, sizes, nil
	}
	base := sp.sizes[0]
	for i, s := range sp.sizes {
		f := s / base
		switch {
		case s%base != 0:
			return nil, nil, errorf(sp.sizesLine, "BlockSizes: %d is not a multiple of the base block size %d", s, base)
		case f&(f-1) != 0 || f > 1<<15:
			return nil, nil, errorf(sp.sizesLine, "BlockSizes: %d is not a power-of-two multiple (1 … 32768) of the base block size %d", s, base)
		case i > 0 && s <= sp.sizes[i-1]:
			return nil, nil, errorf(sp.sizesLine, "BlockSizes must increase: %d after %d", s, sp.sizes[i-1])
		}
		if len(factors) > 0 && factors[len(factors)-1] >= nb {
			res.warn(sp.sizesLine, "block size %d (%d blocks) exceeds the %d blocks: ignored, as Slurm does", s, f, nb)
			continue
		}
		factors, sizes = append(factors, f), append(sizes, s)
	}
	return factors, sizes, nil
}
