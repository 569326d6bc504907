package slurm

import (
	"fmt"
	"strings"

	"github.com/blinksched/blink/topology"
)

// render draws an import as text: form, levels, counts, warnings, then the
// domains indented by level with their hosts as a hostlist.
func render(res *Result) string {
	t := res.Tree
	var b strings.Builder
	var levels []string
	for l := 1; l < t.Levels(); l++ {
		levels = append(levels, t.LevelName(topology.Level(l)))
	}
	levels = append(levels, "host")
	fmt.Fprintf(&b, "form %s", res.Form)
	if res.Name != "" {
		fmt.Fprintf(&b, " (topology %s)", res.Name)
	}
	fmt.Fprintf(&b, "\nlevels %s\n%d domains, %d hosts, %d GPUs\n", strings.Join(levels, " / "),
		t.NumDomains()-1, t.NumHosts(), t.NumGPUs())
	for _, w := range res.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	var walk func(d topology.DomainID, depth int)
	walk = func(d topology.DomainID, depth int) {
		lo, hi := t.Children(d)
		if d != 0 {
			fmt.Fprintf(&b, "%s%s", strings.Repeat("  ", depth-1), t.DomainLabel(d))
			if lo == hi {
				hl, hh := t.Hosts(d)
				var names []string
				for h := hl; h < hh; h++ {
					names = append(names, t.HostName(h))
				}
				fmt.Fprintf(&b, ": %s", RangedString(names))
			}
			b.WriteByte('\n')
		} else if lo == hi {
			hl, hh := t.Hosts(d)
			var names []string
			for h := hl; h < hh; h++ {
				names = append(names, t.HostName(h))
			}
			fmt.Fprintf(&b, "%s\n", RangedString(names))
		}
		for c := lo; c < hi; c++ {
			walk(c, depth+1)
		}
	}
	walk(0, 0)
	return b.String()
}
