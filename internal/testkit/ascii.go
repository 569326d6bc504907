// Package testkit holds test helpers shared by Blink's packages: ASCII
// pictures of a cluster's occupancy for scenario tests.
package testkit

import (
	"math/bits"
	"strings"

	"github.com/blinksched/blink/topology"
)

// Picture draws a State as text: one line per domain of Level, each host as
// its GPUs between bars — a job's letter on a used GPU, '.' free, '*'
// nominated and unused, 'x' failed (every GPU of a failed host), '~' unused
// on a draining host — followed by the host's Mark, if any:
//
//	rack0 |AAAA|AAAA|B...|....s
//	rack1 |CC*.|xxxx|....|....s
type Picture struct {
	// Level: one line per domain of this level; 0 means the last named level.
	Level topology.Level
	// Name returns a job's letter; nil: 'A' + id mod 26.
	Name func(topology.JobID) byte
	// Mark, if not nil, returns a byte written after host h (0: none), such
	// as 's' for a spare.
	Mark func(topology.HostID) byte
}

// Render returns the picture of s, one line per domain, each ending in a
// newline.
func (p Picture) Render(s *topology.State) string {
	t := s.Tree()
	l := p.Level
	if l <= 0 {
		l = t.HostLevel() - 1
	}
	name := p.Name
	if name == nil {
		name = func(id topology.JobID) byte { return byte('A' + id%26) }
	}
	lo, hi := t.LevelDomains(l)
	width := 0
	for d := lo; d < hi; d++ {
		width = max(width, len(t.DomainPath(d)))
	}
	var b strings.Builder
	var pods []topology.HostPod
	for d := lo; d < hi; d++ {
		path := t.DomainPath(d)
		b.WriteString(path)
		b.WriteString(strings.Repeat(" ", width-len(path)+1))
		hl, hh := t.Hosts(d)
		for h := hl; h < hh; h++ {
			b.WriteByte('|')
			n := t.HostGPUCount(h)
			cells := make([]byte, n)
			health := s.HostHealth(h)
			failed, nominated := s.HostFailedMask(h), s.HostNominatedMask(h)
			for i := range cells {
				bit := uint64(1) << uint(i)
				switch {
				case health == topology.Failed || failed&bit != 0:
					cells[i] = 'x'
				case nominated&bit != 0:
					cells[i] = '*'
				case health == topology.Draining:
					cells[i] = '~'
				default:
					cells[i] = '.'
				}
			}
			pods = s.AppendHostPods(pods[:0], h)
			for _, hp := range pods {
				for m := hp.GPUs; m != 0; m &= m - 1 {
					i := bits.TrailingZeros64(m)
					if cells[i] != 'x' {
						cells[i] = name(hp.Job)
					}
				}
			}
			b.Write(cells)
			if p.Mark != nil {
				if c := p.Mark(h); c != 0 {
					b.WriteByte(c)
				}
			}
		}
		b.WriteString("|\n")
	}
	return b.String()
}
