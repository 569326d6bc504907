package preempt_test

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/blinksched/blink/topology"
)

// render draws the cluster as text, one line per host, grouped under its
// last-level domain: a letter per GPU for the job using it whole (A, B, …
// in job id order, per the names given), a lower-case letter for a
// fractional pod (the first of its sharers), '.' for a free GPU, '~' for a
// nominated GPU no pod uses, 'x' for a failed GPU. A draining or failed host
// says so.
func render(s *topology.State, letters map[topology.JobID]byte) string {
	t := s.Tree()
	var b strings.Builder
	last := topology.DomainID(-1)
	for h := range topology.HostID(t.NumHosts()) {
		if d := t.HostParent(h); d != last {
			last = d
			fmt.Fprintf(&b, "%s\n", t.DomainPath(d))
		}
		lo, hi := t.HostGPUs(h)
		cells := make([]byte, hi-lo)
		for i := range cells {
			cells[i] = '.'
		}
		nom := s.HostNominatedMask(h)
		for m := nom; m != 0; m &= m - 1 {
			cells[bits.TrailingZeros64(m)] = '~'
		}
		for _, p := range s.AppendHostPods(nil, h) {
			c := letters[p.Job]
			if p.Milli > 0 {
				c += 'a' - 'A'
			}
			for m := p.GPUs; m != 0; m &= m - 1 {
				if i := bits.TrailingZeros64(m); cells[i] == '.' || cells[i] == '~' {
					cells[i] = c
				}
			}
		}
		for m := s.HostFailedMask(h); m != 0; m &= m - 1 {
			cells[bits.TrailingZeros64(m)] = 'x'
		}
		name := t.HostName(h)
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		}
		fmt.Fprintf(&b, "  %-7s %s", name, spaced(cells))
		if hh := s.HostHealth(h); hh != topology.Healthy {
			fmt.Fprintf(&b, "  (%s)", hh)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func spaced(cells []byte) string {
	var b strings.Builder
	for i, c := range cells {
		if i > 0 && i%8 == 0 {
			b.WriteByte(' ')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// legend lists the jobs by letter: priority, preemptibility, GPUs.
func legend(s *topology.State, letters map[topology.JobID]byte) string {
	var b strings.Builder
	for j := range s.JobIDBound() {
		info, ok := s.JobInfo(j)
		if !ok {
			continue
		}
		pre := "preemptible"
		if !info.Preemptible {
			pre = "not preemptible"
		}
		fmt.Fprintf(&b, "  %c job %d: priority %d, %s, %d milli-GPU\n", letters[j], j, info.Priority, pre, s.JobMilliGPU(j))
	}
	return b.String()
}
