package slurm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// maxNodes bounds the names one import may expand to (hostlists, node lists):
// far above any real cluster, low enough that a hostile "n[0-999999999]" is
// an error, not an allocation of gigabytes. Tests lower it.
var maxNodes = 1 << 22

// errTooMany is returned when an expansion exceeds maxNodes.
var errTooMany = errors.New("expands to too many names")

// ExpandHostlist expands a Slurm hostlist expression into names, in order:
// "gb200-[001-018,020]" is gb200-001 … gb200-018 and gb200-020. Elements are
// separated by commas outside brackets; a bracket holds comma-separated
// numbers and ranges lo-hi, zero-padded to the width of lo ("[08-10]" is 08,
// 09, 10); several bracket groups expand as a cartesian product, the first
// varying slowest ("r[1-2]n[1-2]" is r1n1 r1n2 r2n1 r2n2). Names keep their
// order and repeats. Errors (not wrapped) name the malformed part.
func ExpandHostlist(expr string) ([]string, error) {
	return expandHostlist(expr, nil, maxNodes)
}

// expandHostlist appends the expansion of expr to dst, failing beyond limit
// names in total.
func expandHostlist(expr string, dst []string, limit int) ([]string, error) {
	if strings.TrimSpace(expr) == "" {
		return dst, errors.New("empty hostlist")
	}
	for elem := range splitTop(expr) {
		if elem == "" {
			return dst, fmt.Errorf("hostlist %q: empty name", expr)
		}
		parts, n, err := parseElem(elem)
		if err != nil {
			return dst, fmt.Errorf("hostlist %q: %w", expr, err)
		}
		if n > limit-len(dst) {
			return dst, fmt.Errorf("hostlist %q: %w (more than %d)", expr, errTooMany, limit)
		}
		dst = expandParts(dst, parts, "")
	}
	return dst, nil
}

// splitTop yields the comma-separated elements of expr outside brackets
// (bracket balance is checked by parseElem).
func splitTop(expr string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		depth, start := 0, 0
		for i := 0; i < len(expr); i++ {
			switch expr[i] {
			case '[':
				depth++
			case ']':
				depth--
			case ',':
				if depth == 0 {
					if !yield(expr[start:i]) {
						return
					}
					start = i + 1
				}
			}
		}
		yield(expr[start:])
	}
}

// part is a literal (ranges nil) or a bracket group of ranges.
type part struct {
	lit    string
	ranges []numRange
}

type numRange struct {
	lo, hi uint64
	width  int
}

// parseElem splits one element into literals and bracket groups and returns
// the number of names it expands to (saturating above maxNodes).
func parseElem(elem string) ([]part, int, error) {
	var parts []part
	n := 1
	for len(elem) > 0 {
		open := strings.IndexAny(elem, "[]")
		if open < 0 {
			parts = append(parts, part{lit: elem})
			break
		}
		if elem[open] == ']' {
			return nil, 0, fmt.Errorf("%q: ']' without '['", elem)
		}
		if open > 0 {
			parts = append(parts, part{lit: elem[:open]})
		}
		end := strings.IndexAny(elem[open+1:], "[]")
		if end < 0 || elem[open+1+end] == '[' {
			return nil, 0, fmt.Errorf("%q: '[' without ']'", elem)
		}
		body := elem[open+1 : open+1+end]
		ranges, count, err := parseRanges(body)
		if err != nil {
			return nil, 0, err
		}
		parts = append(parts, part{ranges: ranges})
		n = satMul(n, count)
		elem = elem[open+2+end:]
	}
	for _, p := range parts {
		if p.ranges == nil {
			if err := checkName(p.lit); err != nil {
				return nil, 0, err
			}
		}
	}
	return parts, n, nil
}

// checkName rejects characters no node or switch name has.
func checkName(s string) error {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == '=' || c == '#' || c == '"' || c == '\'' || c == 0x7f {
			return fmt.Errorf("%q: character %q not allowed in a name", s, c)
		}
	}
	return nil
}

// parseRanges parses the inside of a bracket: "001-018,020".
func parseRanges(body string) ([]numRange, int, error) {
	if body == "" {
		return nil, 0, errors.New("empty brackets []")
	}
	var out []numRange
	total := 0
	for item := range strings.SplitSeq(body, ",") {
		loS, hiS, isRange := strings.Cut(item, "-")
		if !isRange {
			hiS = loS
		}
		lo, err1 := parseNum(loS)
		hi, err2 := parseNum(hiS)
		switch {
		case err1 != nil || err2 != nil:
			return nil, 0, fmt.Errorf("malformed range %q in [%s]", item, body)
		case hi < lo:
			return nil, 0, fmt.Errorf("range %q in [%s] runs backwards", item, body)
		}
		out = append(out, numRange{lo: lo, hi: hi, width: len(loS)})
		if d := hi - lo; d >= uint64(maxNodes) {
			total = maxNodes + 1
		} else {
			total = satAdd(total, int(d)+1)
		}
	}
	return out, total, nil
}

// parseNum parses a non-empty decimal of at most 18 digits.
func parseNum(s string) (uint64, error) {
	if s == "" || len(s) > 18 {
		return 0, errors.New("bad number")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New("bad number")
		}
	}
	return strconv.ParseUint(s, 10, 64)
}

func satAdd(a, b int) int {
	if a > maxNodes || b > maxNodes || a+b > maxNodes {
		return maxNodes + 1
	}
	return a + b
}

func satMul(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > maxNodes || b > maxNodes || a > (maxNodes+1)/b {
		return maxNodes + 1
	}
	return a * b
}

// expandParts appends prefix followed by every expansion of parts to dst.
func expandParts(dst []string, parts []part, prefix string) []string {
	if len(parts) == 0 {
		return append(dst, prefix)
	}
	p := parts[0]
	if p.ranges == nil {
		return expandParts(dst, parts[1:], prefix+p.lit)
	}
	var buf []byte
	for _, r := range p.ranges {
		for v := r.lo; ; v++ {
			buf = appendPadded(append(buf[:0], prefix...), v, r.width)
			dst = expandParts(dst, parts[1:], string(buf))
			if v == r.hi {
				break
			}
		}
	}
	return dst
}

// appendPadded appends v in decimal, left-padded with zeros to width digits.
func appendPadded(dst []byte, v uint64, width int) []byte {
	var tmp [20]byte
	s := strconv.AppendUint(tmp[:0], v, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// RangedString compresses names into a hostlist expression, the inverse of
// ExpandHostlist for names ending in digits: runs of neighbours sharing a
// prefix and a zero-padding width become one bracket ("b1 b2 b3 c" is
// "b[1-3],c"). Order is kept; nothing is sorted.
func RangedString(names []string) string {
	var b strings.Builder
	var cur rangeRun
	for _, name := range names {
		prefix, digits := splitDigits(name)
		v, err := parseNum(digits)
		if err != nil || strings.ContainsAny(prefix, "[],") {
			cur.flush(&b)
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(name)
			continue
		}
		if len(cur.ranges) > 0 && prefix == cur.prefix && string(appendPadded(nil, v, cur.width)) == digits {
			if last := &cur.ranges[len(cur.ranges)-1]; last.hi+1 == v {
				last.hi = v
			} else {
				cur.ranges = append(cur.ranges, numRange{lo: v, hi: v})
			}
			continue
		}
		cur.flush(&b)
		cur.prefix, cur.width = prefix, 0
		if len(digits) > 1 && digits[0] == '0' {
			cur.width = len(digits)
		}
		cur.ranges = append(cur.ranges, numRange{lo: v, hi: v})
	}
	cur.flush(&b)
	return b.String()
}

// rangeRun is a run of names sharing a prefix and a padding width, as
// ranges of their numbers.
type rangeRun struct {
	prefix string
	width  int // 0: unpadded
	ranges []numRange
}

// flush writes the run to b ("p[1-3,5]", or "p7" for one name) after a
// comma if b holds anything, and empties it.
func (cur *rangeRun) flush(b *strings.Builder) {
	if len(cur.ranges) == 0 {
		return
	}
	if b.Len() > 0 {
		b.WriteByte(',')
	}
	b.WriteString(cur.prefix)
	one := len(cur.ranges) == 1 && cur.ranges[0].lo == cur.ranges[0].hi
	if !one {
		b.WriteByte('[')
	}
	for i, r := range cur.ranges {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(appendPadded(nil, r.lo, cur.width))
		if r.hi != r.lo {
			b.WriteByte('-')
			b.Write(appendPadded(nil, r.hi, cur.width))
		}
	}
	if !one {
		b.WriteByte(']')
	}
	cur.ranges = cur.ranges[:0]
}

// splitDigits splits name into a prefix and its trailing decimal digits.
func splitDigits(name string) (prefix, digits string) {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	return name[:i], name[i:]
}
