package kube

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blinksched/blink/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

var (
	gkeLevels = []string{"cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-subblock",
		"cloud.google.com/gce-topology-host", HostnameLabel}
	awsLevels = []string{"topology.k8s.aws/network-node-layer-1", "topology.k8s.aws/network-node-layer-2",
		"topology.k8s.aws/network-node-layer-3", HostnameLabel}
)

var goldenCases = []struct {
	name, file string
	levels     []string
}{
	{"gke", "nodes_gke.json", gkeLevels},
	{"gke_blocks", "nodes_gke.json", gkeLevels[:1]},
	{"aws", "nodes_aws.json", awsLevels},
	{"single", "node_single.json", []string{"nvidia.com/gpu.clique", HostnameLabel}},
	{"flat", "nodes_aws.json", nil},
}

// render draws an import: levels, counts, health and skipped lists, then the
// domains indented by level with one line per host.
func render(res *Result) string {
	t := res.Tree
	var b strings.Builder
	var levels []string
	for l := 1; l < t.Levels(); l++ {
		levels = append(levels, t.LevelName(topology.Level(l)))
	}
	levels = append(levels, "host")
	fmt.Fprintf(&b, "levels %s\n%d domains, %d hosts, %d GPUs\n", strings.Join(levels, " / "),
		t.NumDomains()-1, t.NumHosts(), t.NumGPUs())
	for _, h := range res.Health {
		fmt.Fprintf(&b, "health: host %d %s %s (%s)\n", h.Host, h.Node, h.Health, h.Cause)
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(&b, "skipped: %s\n", s)
	}
	var walk func(d topology.DomainID, depth int)
	walk = func(d topology.DomainID, depth int) {
		if d != 0 {
			fmt.Fprintf(&b, "%s%s\n", strings.Repeat("  ", depth-1), t.DomainLabel(d))
		}
		lo, hi := t.Children(d)
		if lo == hi {
			hl, hh := t.Hosts(d)
			for h := hl; h < hh; h++ {
				fmt.Fprintf(&b, "%s%s: %d × %q, cpu %dm, mem %d MiB\n", strings.Repeat("  ", depth), t.HostName(h),
					t.HostGPUCount(h), t.ModelName(t.HostModel(h)), t.HostCPU(h), t.HostMemory(h))
			}
		}
		for c := lo; c < hi; c++ {
			walk(c, depth+1)
		}
	}
	walk(0, 0)
	return b.String()
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			res, err := ParseNodeList(data, c.levels, Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkResult(t, res)
			got := render(res)
			path := filepath.Join("testdata", c.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s:\n%s", c.file, path, got)
			}
		})
	}
}

// checkResult checks what every import guarantees: hosts found by name, the
// health list naming real hosts, and a State (with the health applied)
// that passes Check and shows the marks.
func checkResult(t testing.TB, res *Result) {
	t.Helper()
	tr := res.Tree
	for h := range topology.HostID(tr.NumHosts()) {
		if got, ok := tr.HostByName(tr.HostName(h)); !ok || got != h {
			t.Fatalf("host %d (%s): HostByName = %d, %v", h, tr.HostName(h), got, ok)
		}
	}
	s, err := res.NewState()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Health {
		if tr.HostName(h.Host) != h.Node || s.HostHealth(h.Host) != h.Health {
			t.Fatalf("health %+v: host %s is %s", h, tr.HostName(h.Host), s.HostHealth(h.Host))
		}
	}
}
