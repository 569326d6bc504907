package slurm

import (
	"strings"
)

// A minimal YAML reader for the subset topology.yaml uses: one document of
// block mappings and block sequences by indentation (sequences may sit at
// their key's indentation), plain, single- and double-quoted scalars on one
// line, flow sequences of scalars ("[4, 16]") and comments. Anchors, aliases,
// tags, flow mappings, multi-line and block scalars (| and >) and several
// documents are rejected with the line, not misread. The engine packages may
// import no YAML library, hence this.

type ykind uint8

const (
	yScalar ykind = iota
	ySeq
	yMap
)

func (k ykind) String() string {
	return [...]string{"a scalar", "a sequence", "a mapping"}[k]
}

// ynode is a parsed YAML node. An absent value ("key:" with nothing below)
// is an empty, unquoted scalar.
type ynode struct {
	kind  ykind
	line  int
	value string   // scalar
	items []*ynode // sequence
	keys  []string // mapping, in order
	vals  []*ynode
	kline []int // line of each key
}

// get returns the value of key in a mapping, or nil.
func (n *ynode) get(key string) *ynode {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// keyLine returns the line of key in a mapping, or the mapping's line.
func (n *ynode) keyLine(key string) int {
	for i, k := range n.keys {
		if k == key {
			return n.kline[i]
		}
	}
	return n.line
}

// null reports whether n is an absent value.
func (n *ynode) null() bool { return n.kind == yScalar && n.value == "" }

type yline struct {
	indent int
	text   string
	num    int
}

type yparser struct {
	lines []yline
	pos   int
}

// parseYAML parses one document; an empty document is nil.
func parseYAML(data []byte) (*ynode, error) {
	p := &yparser{}
	if err := p.split(string(data)); err != nil {
		return nil, err
	}
	if len(p.lines) == 0 {
		return nil, nil
	}
	first := p.lines[0]
	if first.indent != 0 {
		return nil, errorf(first.num, "YAML: the document starts indented")
	}
	n, err := p.block(0)
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.lines) {
		return nil, errorf(p.lines[p.pos].num, "YAML: unexpected indentation")
	}
	return n, nil
}

// split cuts the text into significant lines: comments and blank lines
// dropped, "---" accepted before the content, "..." ending it.
func (p *yparser) split(text string) error {
	started := false
	for i, raw := range strings.Split(text, "\n") {
		num := i + 1
		raw = strings.TrimSuffix(raw, "\r")
		body := strings.TrimLeft(raw, " ")
		indent := len(raw) - len(body)
		if strings.HasPrefix(body, "\t") {
			return errorf(num, "YAML: a tab in the indentation")
		}
		body, err := stripComment(num, body)
		if err != nil {
			return err
		}
		body = strings.TrimRight(body, " \t")
		switch {
		case body == "":
			continue
		case indent == 0 && body == "---":
			if started {
				return errorf(num, "YAML: a second document (only one is read)")
			}
			started = true
			continue
		case indent == 0 && body == "...":
			return nil
		case indent == 0 && strings.HasPrefix(body, "%"):
			return errorf(num, "YAML: directives are not supported")
		}
		started = true
		p.lines = append(p.lines, yline{indent, body, num})
	}
	return nil
}

// stripComment removes a comment: '#' at the start or after a blank,
// outside quotes.
func stripComment(num int, s string) (string, error) {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '"' && c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			if i == 0 || strings.IndexByte(" \t[,:-", s[i-1]) >= 0 {
				quote = c
			}
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i], nil
		}
	}
	if quote != 0 {
		return "", errorf(num, "YAML: unterminated quoted string (a quoted scalar must fit on one line)")
	}
	return s, nil
}

func isSeqItem(text string) bool { return text == "-" || strings.HasPrefix(text, "- ") }

// block parses the node whose first line is the current one, at indent.
func (p *yparser) block(indent int) (*ynode, error) {
	l := p.lines[p.pos]
	if isSeqItem(l.text) {
		return p.seq(indent)
	}
	if _, _, ok, err := splitKey(l); err != nil {
		return nil, err
	} else if ok {
		return p.mapping(indent)
	}
	p.pos++
	return parseScalar(l.num, l.text)
}

// seq parses a block sequence whose items start at indent.
func (p *yparser) seq(indent int) (*ynode, error) {
	n := &ynode{kind: ySeq, line: p.lines[p.pos].num}
	for p.pos < len(p.lines) {
		l := p.lines[p.pos]
		if l.indent != indent || !isSeqItem(l.text) {
			if l.indent > indent {
				return nil, errorf(l.num, "YAML: unexpected indentation")
			}
			break
		}
		rest := strings.TrimLeft(l.text[1:], " ")
		var item *ynode
		var err error
		if rest == "" {
			p.pos++
			if p.pos < len(p.lines) && p.lines[p.pos].indent > indent {
				item, err = p.block(p.lines[p.pos].indent)
			} else {
				item = &ynode{kind: yScalar, line: l.num}
			}
		} else {
			// The item's content starts on this line: parse it as if it
			// were a line of its own at its column.
			col := indent + len(l.text) - len(rest)
			p.lines[p.pos] = yline{col, rest, l.num}
			item, err = p.block(col)
		}
		if err != nil {
			return nil, err
		}
		n.items = append(n.items, item)
	}
	return n, nil
}

// mapping parses a block mapping whose keys start at indent.
func (p *yparser) mapping(indent int) (*ynode, error) {
	n := &ynode{kind: yMap, line: p.lines[p.pos].num}
	for p.pos < len(p.lines) {
		l := p.lines[p.pos]
		if l.indent != indent {
			if l.indent > indent {
				return nil, errorf(l.num, "YAML: unexpected indentation")
			}
			break
		}
		if isSeqItem(l.text) {
			return nil, errorf(l.num, "YAML: a sequence item where a key was expected")
		}
		key, rest, ok, err := splitKey(l)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errorf(l.num, "YAML: expected \"key: value\", got %q", l.text)
		}
		if n.get(key) != nil {
			return nil, errorf(l.num, "YAML: key %q repeated", key)
		}
		p.pos++
		var val *ynode
		switch {
		case rest != "":
			val, err = parseScalar(l.num, rest)
		case p.pos < len(p.lines) && p.lines[p.pos].indent > indent:
			val, err = p.block(p.lines[p.pos].indent)
		case p.pos < len(p.lines) && p.lines[p.pos].indent == indent && isSeqItem(p.lines[p.pos].text):
			val, err = p.seq(indent)
		default:
			val = &ynode{kind: yScalar, line: l.num}
		}
		if err != nil {
			return nil, err
		}
		n.keys, n.vals, n.kline = append(n.keys, key), append(n.vals, val), append(n.kline, l.num)
	}
	return n, nil
}

// splitKey splits "key: rest" (rest may be empty); ok is false when the
// line is no mapping entry.
func splitKey(l yline) (key, rest string, ok bool, err error) {
	t := l.text
	if t[0] == '"' || t[0] == '\'' {
		end := closingQuote(t)
		if end < 0 {
			return "", "", false, errorf(l.num, "YAML: unterminated quoted string")
		}
		after := t[end+1:]
		if after != ":" && !strings.HasPrefix(after, ": ") {
			return "", "", false, nil
		}
		k, err := parseScalar(l.num, t[:end+1])
		if err != nil {
			return "", "", false, err
		}
		return k.value, strings.TrimSpace(after[1:]), true, nil
	}
	if t[0] == '[' || t[0] == '{' {
		return "", "", false, nil
	}
	for i := 0; i < len(t); i++ {
		if t[i] == ':' && (i+1 == len(t) || t[i+1] == ' ') {
			return strings.TrimSpace(t[:i]), strings.TrimSpace(t[i+1:]), true, nil
		}
	}
	return "", "", false, nil
}

// closingQuote returns the index of the quote closing the quoted scalar at
// the start of t, or -1.
func closingQuote(t string) int {
	q := t[0]
	for i := 1; i < len(t); i++ {
		switch {
		case q == '"' && t[i] == '\\':
			i++
		case t[i] == q && q == '\'' && i+1 < len(t) && t[i+1] == '\'':
			i++
		case t[i] == q:
			return i
		}
	}
	return -1
}

// parseScalar parses a one-line scalar or a flow sequence of scalars.
func parseScalar(num int, t string) (*ynode, error) {
	switch t[0] {
	case '[':
		return parseFlowSeq(num, t)
	case '{':
		return nil, errorf(num, "YAML: flow mappings {…} are not supported")
	case '&', '*', '!', '|', '>', '@', '`', '%':
		return nil, errorf(num, "YAML: %q (anchors, aliases, tags, block scalars) is not supported", t[0])
	case '"', '\'':
		end := closingQuote(t)
		if end < 0 {
			return nil, errorf(num, "YAML: unterminated quoted string")
		}
		if end != len(t)-1 {
			return nil, errorf(num, "YAML: text after a quoted string: %q", t[end+1:])
		}
		v, err := unquote(num, t)
		if err != nil {
			return nil, err
		}
		return &ynode{kind: yScalar, line: num, value: v}, nil
	}
	if t == "-" || strings.HasPrefix(t, "- ") {
		return nil, errorf(num, "YAML: a sequence item cannot follow a key on its line")
	}
	if strings.Contains(t, ": ") || strings.HasSuffix(t, ":") {
		return nil, errorf(num, "YAML: a mapping cannot follow a key on its line")
	}
	return &ynode{kind: yScalar, line: num, value: t}, nil
}

// unquote decodes a quoted scalar (closing quote last).
func unquote(num int, t string) (string, error) {
	body := t[1 : len(t)-1]
	if t[0] == '\'' {
		return strings.ReplaceAll(body, "''", "'"), nil
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++ // body cannot end in a lone backslash: closingQuote skipped it
		switch body[i] {
		case '\\', '"', '/':
			b.WriteByte(body[i])
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case ' ':
			b.WriteByte(' ')
		default:
			return "", errorf(num, "YAML: escape \\%c is not supported", body[i])
		}
	}
	return b.String(), nil
}

// parseFlowSeq parses "[a, b, 'c']": scalars only.
func parseFlowSeq(num int, t string) (*ynode, error) {
	if !strings.HasSuffix(t, "]") {
		return nil, errorf(num, "YAML: a flow sequence must end its line with ']'")
	}
	n := &ynode{kind: ySeq, line: num}
	body := strings.TrimSpace(t[1 : len(t)-1])
	for body != "" {
		var item string
		if body[0] == '"' || body[0] == '\'' {
			end := closingQuote(body)
			if end < 0 {
				return nil, errorf(num, "YAML: unterminated quoted string")
			}
			item, body = body[:end+1], strings.TrimSpace(body[end+1:])
			if body != "" && body[0] != ',' {
				return nil, errorf(num, "YAML: text after a quoted string: %q", body)
			}
		} else {
			end := strings.IndexByte(body, ',')
			if end < 0 {
				end = len(body)
			}
			item, body = strings.TrimSpace(body[:end]), body[end:]
		}
		if item == "" {
			return nil, errorf(num, "YAML: empty item in a flow sequence")
		}
		if strings.ContainsAny(item[:1], "[]{}") {
			return nil, errorf(num, "YAML: nested flow collections are not supported")
		}
		v, err := parseScalar(num, item)
		if err != nil {
			return nil, err
		}
		n.items = append(n.items, v)
		if body != "" {
			body = strings.TrimSpace(body[1:]) // the comma
			if body == "" {
				return nil, errorf(num, "YAML: trailing comma in a flow sequence")
			}
		}
	}
	return n, nil
}
