package defrag_test

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/blinksched/blink/defrag"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// render draws s as ASCII, one line per last-level domain, one bracket per
// host, one character per GPU:
//
//	.  free            a…z A…Z  the job with id 0…51 (whole GPUs)
//	x  failed GPU      +        shared by fractional pods
//	n  nominated       #        a job with a larger id
//
// A draining host is prefixed ~, a failed one !.
func render(s *topology.State) string {
	t := s.Tree()
	var b strings.Builder
	l := t.HostLevel() - 1
	lo, hi := t.LevelDomains(l)
	var holders []topology.JobID
	for d := lo; d < hi; d++ {
		name := t.DomainPath(d)
		if name == "" {
			name = "/"
		}
		fmt.Fprintf(&b, "%-8s", name)
		hlo, hhi := t.Hosts(d)
		for h := hlo; h < hhi; h++ {
			b.WriteByte(' ')
			switch s.HostHealth(h) {
			case topology.Draining:
				b.WriteByte('~')
			case topology.Failed:
				b.WriteByte('!')
			}
			b.WriteByte('[')
			glo, ghi := t.HostGPUs(h)
			for g := glo; g < ghi; g++ {
				holders = s.GPUHolders(holders[:0], g)
				switch {
				case s.GPUFailed(g):
					b.WriteByte('x')
				case len(holders) == 0 && s.HostNominatedMask(h)&(1<<uint(g-glo)) != 0:
					b.WriteByte('n')
				case len(holders) == 0:
					b.WriteByte('.')
				case s.GPUMilli(g) > 0 || len(holders) > 1:
					b.WriteByte('+')
				default:
					b.WriteByte(jobChar(holders[0]))
				}
			}
			b.WriteByte(']')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func jobChar(j topology.JobID) byte {
	switch {
	case j < 26:
		return byte('a' + j)
	case j < 52:
		return byte('A' + j - 26)
	}
	return '#'
}

// describeJobs lists the jobs: id, character, attributes, pods.
func describeJobs(s *topology.State) string {
	t := s.Tree()
	var b strings.Builder
	for j := range s.JobIDBound() {
		info, ok := s.JobInfo(j)
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "  %c job %d prio %d", jobChar(j), j, info.Priority)
		if info.Movable && info.Preemptible {
			b.WriteString(" movable")
		}
		if info.Required > 0 {
			fmt.Fprintf(&b, " required %s", t.LevelName(info.Required))
		}
		for _, set := range info.Sets {
			fmt.Fprintf(&b, " set{%d×%d", set.Count, set.GPUs)
			if set.SliceSize > 0 {
				fmt.Fprintf(&b, " slice %d/%s", set.SliceSize, t.LevelName(set.SliceLevel))
			}
			b.WriteString("}")
		}
		b.WriteString(":")
		for _, p := range s.AppendJobPods(nil, j) {
			b.WriteString(" " + podString(t, p))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func podString(t *topology.Tree, p topology.Pod) string {
	var g []string
	for m := p.GPUs; m != 0; m &= m - 1 {
		g = append(g, fmt.Sprint(bits.TrailingZeros64(m)))
	}
	s := t.HostName(p.Host) + "[" + strings.Join(g, ",") + "]"
	if p.Milli > 0 {
		s += fmt.Sprintf("%dm", p.Milli)
	}
	if p.CPUMilli > 0 {
		s += fmt.Sprintf("c%d", p.CPUMilli)
	}
	return s
}

func requestString(t *topology.Tree, r *placement.Request) string {
	var b strings.Builder
	for _, set := range r.Sets {
		fmt.Fprintf(&b, "%d pods × %d GPUs", set.Pods, set.GPUs)
		if set.Milli > 0 {
			fmt.Fprintf(&b, " (%d milli)", set.Milli)
		}
		if set.CPUMilli > 0 {
			fmt.Fprintf(&b, " cpu %d", set.CPUMilli)
		}
	}
	if r.Required > 0 {
		fmt.Fprintf(&b, ", required %s", t.LevelName(r.Required))
	}
	return b.String()
}

// picture renders an instance and its plan: the cluster before, the jobs,
// the request, the moves, and the cluster after the moves and the request.
func picture(s *topology.State, r *placement.Request, plan *defrag.Plan) string {
	t := s.Tree()
	var b strings.Builder
	b.WriteString("before:\n" + render(s) + describeJobs(s))
	if r != nil {
		b.WriteString("request: " + requestString(t, r) + "\n")
	}
	after := s.Clone()
	for i, mv := range plan.Moves {
		fmt.Fprintf(&b, "move %d: %c →", i+1, jobChar(mv.Job))
		for _, p := range mv.Pods {
			b.WriteString(" " + podString(t, p))
		}
		b.WriteByte('\n')
		if err := after.Apply(topology.Delta{Ops: []topology.Op{topology.MoveJob(mv.Job, mv.Pods...)}}); err != nil {
			fmt.Fprintf(&b, "  does not apply: %v\n", err)
			return b.String()
		}
	}
	if r != nil && len(plan.Request.Pods) > 0 {
		b.WriteString("request →")
		for _, p := range plan.Request.Pods {
			b.WriteString(" " + podString(t, p))
		}
		b.WriteByte('\n')
		if err := after.Apply(plan.Request.Delta()); err != nil {
			fmt.Fprintf(&b, "  does not apply: %v\n", err)
			return b.String()
		}
	}
	b.WriteString("after:\n" + render(after))
	return b.String()
}
