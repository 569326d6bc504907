package slurm

import (
	"slices"
	"strings"
)

// ParseYAML imports one topology of a topology.yaml (Slurm 25.05+): the one
// Options.Topology names, else the first with cluster_default: true, else
// the first. Its type is tree, block or flat; other types are an error.
// Other entries are only checked for a name. The error, if any, wraps
// topology.ErrInvalid and names the line.
func ParseYAML(data []byte, opt Options) (*Result, error) {
	root, err := parseYAML(data)
	if err != nil {
		return nil, err
	}
	entry, name, err := pickTopology(root, opt.Topology)
	if err != nil {
		return nil, err
	}
	sp, err := yamlSpec(entry, name)
	if err != nil {
		return nil, err
	}
	return sp.build(&opt)
}

// pickTopology returns the entry to import and its name.
func pickTopology(root *ynode, want string) (*ynode, string, error) {
	if root == nil {
		return nil, "", errorf(0, "topology.yaml is empty")
	}
	if root.kind != ySeq {
		return nil, "", errorf(root.line, "topology.yaml: want a sequence of topologies, got %s", root.kind)
	}
	var names []string
	var chosen *ynode
	var chosenName string
	seen := map[string]int{}
	for _, e := range root.items {
		if e.kind != yMap {
			return nil, "", errorf(e.line, "a topology must be a mapping, got %s", e.kind)
		}
		n := e.get("topology")
		if n == nil || n.kind != yScalar || n.value == "" {
			return nil, "", errorf(e.line, "topology entry without a name (topology: NAME)")
		}
		if prev, dup := seen[n.value]; dup {
			return nil, "", errorf(n.line, "topology %s already defined on line %d", n.value, prev)
		}
		seen[n.value] = n.line
		names = append(names, n.value)
		switch {
		case want != "":
			if n.value == want {
				chosen, chosenName = e, n.value
			}
		case chosen == nil:
			chosen, chosenName = e, n.value
		default:
			if def := e.get("cluster_default"); def != nil {
				isDef, _ := yamlBool(def)
				if cur, _ := yamlBool(chosen.get("cluster_default")); isDef && !cur {
					chosen, chosenName = e, n.value
				}
			}
		}
	}
	if chosen == nil {
		if want != "" {
			return nil, "", errorf(0, "no topology %q (the file has %s)", want, strings.Join(names, ", "))
		}
		return nil, "", errorf(root.line, "topology.yaml lists no topology")
	}
	return chosen, chosenName, nil
}

// yamlBool reads a YAML 1.2 boolean; a nil node is false.
func yamlBool(n *ynode) (bool, bool) {
	if n == nil {
		return false, true
	}
	if n.kind == yScalar {
		switch n.value {
		case "true", "True", "TRUE":
			return true, true
		case "false", "False", "FALSE":
			return false, true
		}
	}
	return false, false
}

// checkKeys rejects keys of mapping n not in allowed.
func checkKeys(n *ynode, what string, allowed ...string) error {
	for i, k := range n.keys {
		if !slices.Contains(allowed, k) {
			return errorf(n.kline[i], "%s: unknown key %q (want %s)", what, k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// yamlSpec converts one topology entry into a spec.
func yamlSpec(e *ynode, name string) (*spec, error) {
	sp := &spec{name: name}
	what := "topology " + name
	if err := checkKeys(e, what, "topology", "cluster_default", "tree", "block", "flat", "ring", "torus3d"); err != nil {
		return nil, err
	}
	if _, ok := yamlBool(e.get("cluster_default")); !ok {
		return nil, errorf(e.get("cluster_default").line, "%s: cluster_default is not true or false", what)
	}
	var kinds []string
	for _, k := range e.keys {
		if k != "topology" && k != "cluster_default" {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) != 1 {
		return nil, errorf(e.line, "%s: want exactly one of tree, block or flat, got %d (%s)", what, len(kinds), strings.Join(kinds, ", "))
	}
	body := e.get(kinds[0])
	body.line = e.keyLine(kinds[0]) // errors about the body name its key's line
	switch kinds[0] {
	case "tree":
		return sp, sp.yamlTree(body, what)
	case "block":
		return sp, sp.yamlBlock(body, what)
	case "flat":
		if v, ok := yamlBool(body); !ok || !v {
			return nil, errorf(body.line, "%s: flat must be true", what)
		}
		sp.form = FormFlat
		return sp, nil
	}
	return nil, errorf(body.line, "%s: the %s type is not supported (tree, block and flat are)", what, kinds[0])
}

// listOf returns the mappings of a sequence under key (required).
func listOf(parent *ynode, key, what string) ([]*ynode, error) {
	n := parent.get(key)
	if n == nil {
		return nil, errorf(parent.line, "%s: no %s", what, key)
	}
	if n.null() {
		return nil, errorf(n.line, "%s: %s is empty", what, key)
	}
	if n.kind != ySeq {
		return nil, errorf(n.line, "%s: %s must be a sequence, got %s", what, key, n.kind)
	}
	for _, it := range n.items {
		if it.kind != yMap {
			return nil, errorf(it.line, "%s: each of %s must be a mapping, got %s", what, key, it.kind)
		}
	}
	return n.items, nil
}

// scalarOf returns a required, non-empty scalar.
func scalarOf(n *ynode, key, what string) (string, int, error) {
	v := n.get(key)
	if v == nil || v.null() {
		return "", n.line, errorf(n.line, "%s: no %s", what, key)
	}
	if v.kind != yScalar {
		return "", v.line, errorf(v.line, "%s: %s must be a scalar, got %s", what, key, v.kind)
	}
	return v.value, v.line, nil
}

// hostlistOf expands a hostlist given as a scalar expression or a sequence of
// them; ok is false when key is absent.
func (sp *spec) hostlistOf(n *ynode, key, what string) (names []string, ok bool, err error) {
	v := n.get(key)
	if v == nil {
		return nil, false, nil
	}
	exprs := []*ynode{v}
	if v.kind == ySeq {
		exprs = v.items
	}
	for _, x := range exprs {
		if x.kind != yScalar {
			return nil, true, errorf(x.line, "%s: %s must be a hostlist or a list of them, got %s", what, key, x.kind)
		}
		got, err := sp.expand(x.line, key, x.value)
		if err != nil {
			return nil, true, err
		}
		names = append(names, got...)
	}
	return names, true, nil
}

func (sp *spec) yamlTree(body *ynode, what string) error {
	sp.form = FormTree
	if body.kind != yMap {
		return errorf(body.line, "%s: tree must be a mapping with switches", what)
	}
	if err := checkKeys(body, what+": tree", "switches"); err != nil {
		return err
	}
	items, err := listOf(body, "switches", what)
	if err != nil {
		return err
	}
	for _, it := range items {
		name, line, err := scalarOf(it, "switch", what+": switch")
		if err != nil {
			return err
		}
		if err := checkKeys(it, "switch "+name, "switch", "children", "nodes"); err != nil {
			return err
		}
		if err := validName(line, "switch", name); err != nil {
			return err
		}
		rec := switchRec{name: name, line: line}
		children, hasChildren, err := sp.hostlistOf(it, "children", "switch "+name)
		if err != nil {
			return err
		}
		nodes, hasNodes, err := sp.hostlistOf(it, "nodes", "switch "+name)
		if err != nil {
			return err
		}
		if hasChildren && hasNodes {
			return errorf(line, "switch %s has both nodes and children", name)
		}
		rec.children, rec.nodes, rec.hasNodes = children, nodes, hasNodes
		sp.switches = append(sp.switches, rec)
	}
	return nil
}

func (sp *spec) yamlBlock(body *ynode, what string) error {
	sp.form = FormBlock
	if body.kind != yMap {
		return errorf(body.line, "%s: block must be a mapping with blocks and block_sizes", what)
	}
	if err := checkKeys(body, what+": block", "block_sizes", "blocks"); err != nil {
		return err
	}
	if bs := body.get("block_sizes"); bs != nil && !bs.null() {
		var items []string
		switch bs.kind {
		case ySeq:
			for _, it := range bs.items {
				if it.kind != yScalar {
					return errorf(it.line, "%s: block_sizes must hold numbers", what)
				}
				items = append(items, it.value)
			}
		case yScalar:
			items = strings.Split(bs.value, ",")
		default:
			return errorf(bs.line, "%s: block_sizes must be a list of numbers", what)
		}
		sizes, err := parseSizes(bs.line, items)
		if err != nil {
			return err
		}
		sp.sizes, sp.hasSizes, sp.sizesLine = sizes, true, bs.line
	}
	items, err := listOf(body, "blocks", what)
	if err != nil {
		return err
	}
	for _, it := range items {
		name, line, err := scalarOf(it, "block", what+": block")
		if err != nil {
			return err
		}
		if err := checkKeys(it, "block "+name, "block", "nodes"); err != nil {
			return err
		}
		if err := validName(line, "block", name); err != nil {
			return err
		}
		nodes, ok, err := sp.hostlistOf(it, "nodes", "block "+name)
		if err != nil {
			return err
		}
		if !ok || len(nodes) == 0 {
			return errorf(line, "block %s has no nodes", name)
		}
		sp.blocks = append(sp.blocks, blockRec{name: name, line: line, nodes: nodes})
	}
	return nil
}
