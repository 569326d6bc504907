package slurm

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/blinksched/blink/topology"
)

// ParseConf imports a topology.conf in tree form (SwitchName lines) or block
// form (BlockName lines and an optional BlockSizes line); see the package
// documentation for how levels are derived. data is the file's content. The
// error, if any, wraps topology.ErrInvalid and names the line.
func ParseConf(data []byte, opt Options) (*Result, error) {
	sp, err := parseConf(data)
	if err != nil {
		return nil, err
	}
	return sp.build(&opt)
}

// errorf returns an error wrapping topology.ErrInvalid about a line (0: the
// whole file).
func errorf(line int, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		return fmt.Errorf("%w: line %d: %s", topology.ErrInvalid, line, msg)
	}
	return fmt.Errorf("%w: %s", topology.ErrInvalid, msg)
}

// kv is one Key=Value pair of a line; key is lower-case.
type kv struct{ key, val string }

// logicalLines yields the logical lines of a Slurm configuration file —
// comments stripped, backslash continuations joined — with the number of
// their first physical line. Blank lines are skipped.
func logicalLines(data []byte) func(yield func(int, string) bool) {
	return func(yield func(int, string) bool) {
		var acc strings.Builder
		start := 0
		lines := strings.Split(string(data), "\n")
		for i, raw := range lines {
			raw = strings.TrimSuffix(raw, "\r")
			if j := strings.IndexByte(raw, '#'); j >= 0 {
				raw = raw[:j]
			}
			if acc.Len() == 0 {
				start = i + 1
			}
			if t := strings.TrimRight(raw, " \t"); strings.HasSuffix(t, "\\") && i+1 < len(lines) {
				acc.WriteString(strings.TrimSuffix(t, "\\"))
				acc.WriteByte(' ')
				continue
			}
			acc.WriteString(raw)
			s := strings.TrimSpace(acc.String())
			acc.Reset()
			if s != "" && !yield(start, s) {
				return
			}
		}
	}
}

// splitPairs splits a logical line into Key=Value pairs; a value may be
// double-quoted to hold spaces.
func splitPairs(line int, s string) ([]kv, error) {
	var out []kv
	for s != "" {
		eq := strings.IndexByte(s, '=')
		sp := strings.IndexAny(s, " \t")
		if eq < 0 || (sp >= 0 && sp < eq) {
			tok := s
			if sp >= 0 {
				tok = s[:sp]
			}
			return nil, errorf(line, "expected Key=Value, got %q", tok)
		}
		key := strings.ToLower(s[:eq])
		s = s[eq+1:]
		var val string
		if strings.HasPrefix(s, "\"") {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				return nil, errorf(line, "%s: unterminated quote", s)
			}
			val, s = s[1:1+end], s[2+end:]
			if s != "" && s[0] != ' ' && s[0] != '\t' {
				return nil, errorf(line, "text after a closing quote: %q", s)
			}
		} else {
			end := strings.IndexAny(s, " \t")
			if end < 0 {
				end = len(s)
			}
			val, s = s[:end], s[end:]
		}
		for _, p := range out {
			if p.key == key {
				return nil, errorf(line, "%s given twice", keyName(key))
			}
		}
		out = append(out, kv{key, val})
		s = strings.TrimLeft(s, " \t")
	}
	return out, nil
}

// keyName spells a lower-case key as the documentation does.
func keyName(key string) string {
	switch key {
	case "switchname":
		return "SwitchName"
	case "switches":
		return "Switches"
	case "nodes":
		return "Nodes"
	case "linkspeed":
		return "LinkSpeed"
	case "blockname":
		return "BlockName"
	case "blocksizes":
		return "BlockSizes"
	}
	return key
}

// parseConf reads topology.conf into a spec.
func parseConf(data []byte) (*spec, error) {
	sp := &spec{}
	for line, text := range logicalLines(data) {
		pairs, err := splitPairs(line, text)
		if err != nil {
			return nil, err
		}
		if err := sp.confRecord(line, pairs); err != nil {
			return nil, err
		}
	}
	if len(sp.switches) == 0 && len(sp.blocks) == 0 {
		if sp.hasSizes {
			return nil, errorf(sp.sizesLine, "BlockSizes without any BlockName line")
		}
		return nil, errorf(0, "no SwitchName or BlockName line")
	}
	return sp, nil
}

// confRecord adds one line's record to the spec.
func (sp *spec) confRecord(line int, pairs []kv) error {
	first := pairs[0]
	rest, ok := recordKeys(first.key)
	if !ok {
		switch first.key {
		case "ringname":
			return errorf(line, "RingName: the topology/ring plugin is not supported")
		case "include":
			return errorf(line, "Include: the importer reads one file; inline the included one")
		}
		return errorf(line, "unknown key %q (want SwitchName, BlockName or BlockSizes first)", first.key)
	}
	for _, p := range pairs[1:] {
		if !slices.Contains(rest, p.key) {
			return errorf(line, "%s line: unexpected key %q", keyName(first.key), p.key)
		}
	}
	switch first.key {
	case "switchname":
		return sp.switchRecord(line, pairs)
	case "blockname":
		return sp.blockRecord(line, pairs)
	case "blocksizes":
		return sp.sizesRecord(line, first.val)
	}
	return nil
}

// lookup returns the value of key among a line's pairs.
func lookup(pairs []kv, key string) (string, bool) {
	for _, p := range pairs {
		if p.key == key {
			return p.val, true
		}
	}
	return "", false
}

// switchRecord adds a SwitchName line: a switch over nodes or over other
// switches (topology/tree).
func (sp *spec) switchRecord(line int, pairs []kv) error {
	rec := switchRec{name: pairs[0].val, line: line}
	if err := sp.setForm(line, FormTree); err != nil {
		return err
	}
	if err := validName(line, "SwitchName", rec.name); err != nil {
		return err
	}
	if v, ok := lookup(pairs, "linkspeed"); ok {
		if _, err := strconv.ParseUint(v, 10, 32); err != nil {
			return errorf(line, "LinkSpeed=%q is not a number", v)
		}
	}
	nodes, hasNodes := lookup(pairs, "nodes")
	children, hasChildren := lookup(pairs, "switches")
	if hasNodes && hasChildren {
		return errorf(line, "switch %s has both Nodes and Switches", rec.name)
	}
	var err error
	if hasNodes {
		rec.hasNodes = true
		rec.nodes, err = sp.expand(line, "Nodes", nodes)
	} else if hasChildren {
		rec.children, err = sp.expand(line, "Switches", children)
	}
	if err != nil {
		return err
	}
	sp.switches = append(sp.switches, rec)
	return nil
}

// blockRecord adds a BlockName line: a block of nodes (topology/block).
func (sp *spec) blockRecord(line int, pairs []kv) error {
	rec := blockRec{name: pairs[0].val, line: line}
	if err := sp.setForm(line, FormBlock); err != nil {
		return err
	}
	if err := validName(line, "BlockName", rec.name); err != nil {
		return err
	}
	nodes, ok := lookup(pairs, "nodes")
	if !ok {
		return errorf(line, "block %s has no Nodes", rec.name)
	}
	var err error
	if rec.nodes, err = sp.expand(line, "Nodes", nodes); err != nil {
		return err
	}
	sp.blocks = append(sp.blocks, rec)
	return nil
}

// sizesRecord reads a BlockSizes line (topology/block), at most one.
func (sp *spec) sizesRecord(line int, val string) error {
	if err := sp.setForm(line, FormBlock); err != nil {
		return err
	}
	if sp.hasSizes {
		return errorf(line, "BlockSizes given twice (first on line %d)", sp.sizesLine)
	}
	sizes, err := parseSizes(line, strings.Split(val, ","))
	if err != nil {
		return err
	}
	sp.sizes, sp.hasSizes, sp.sizesLine = sizes, true, line
	return nil
}

// recordKeys returns the keys a line starting with key may hold besides it.
func recordKeys(key string) ([]string, bool) {
	switch key {
	case "switchname":
		return []string{"switches", "nodes", "linkspeed"}, true
	case "blockname":
		return []string{"nodes"}, true
	case "blocksizes":
		return nil, true
	}
	return nil, false
}

// validName checks a switch or block name.
func validName(line int, what, name string) error {
	if name == "" {
		return errorf(line, "%s is empty", what)
	}
	if err := checkName(name); err != nil {
		return errorf(line, "%s: %v", what, err)
	}
	if strings.ContainsAny(name, "[],") {
		return errorf(line, "%s=%s: a name, not a hostlist", what, name)
	}
	return nil
}

// parseSizes parses BlockSizes values (node counts).
func parseSizes(line int, items []string) ([]int, error) {
	var sizes []int
	for _, item := range items {
		item = strings.TrimSpace(item)
		v, err := strconv.ParseUint(item, 10, 31)
		if err != nil || v == 0 {
			return nil, errorf(line, "BlockSizes: %q is not a positive node count", item)
		}
		sizes = append(sizes, int(v))
	}
	return sizes, nil
}
