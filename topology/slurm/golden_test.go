package slurm

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blinksched/blink/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// goldenCases import every testdata file; each renders to testdata/NAME.golden.
var goldenCases = []struct {
	name, file string
	opt        Options
}{
	{"tree_fattree", "tree_fattree.conf", Options{Default: topology.HostSpec{GPUs: 4, Model: "GB200"}}},
	{"tree_unbalanced", "tree_unbalanced.conf", Options{Default: topology.HostSpec{GPUs: 8}}},
	{"tree_multiparent", "tree_multiparent.conf", Options{Default: topology.HostSpec{GPUs: 8}}},
	{"tree_hostlists", "tree_hostlists.conf", Options{Default: topology.HostSpec{GPUs: 1}}},
	{"tree_renamed", "tree_fattree.conf", Options{Default: topology.HostSpec{GPUs: 4},
		Levels: []string{"core", "spine", "leaf"}}},
	{"tree_nodes", "tree_fattree.conf", Options{Default: topology.HostSpec{GPUs: 4},
		Nodes: mustExpand("gb200-[002-012,017-018]")}},
	{"block_sizes", "block_sizes.conf", Options{Default: topology.HostSpec{GPUs: 4, Model: "GB200"}}},
	{"block_default", "block_default.conf", Options{Default: topology.HostSpec{GPUs: 8}}},
	{"block_oversized", "block_oversized.conf", Options{Default: topology.HostSpec{GPUs: 8}}},
	{"yaml_default", "topologies.yaml", Options{Default: topology.HostSpec{GPUs: 8}}},
	{"yaml_fabric", "topologies.yaml", Options{Default: topology.HostSpec{GPUs: 8}, Topology: "fabric"}},
	{"yaml_flat", "topologies.yaml", Options{Default: topology.HostSpec{GPUs: 8}, Topology: "none",
		Nodes: mustExpand("gpu[01-03]")}},
}

func mustExpand(expr string) []string {
	names, err := ExpandHostlist(expr)
	if err != nil {
		panic(err)
	}
	return names
}

// parseFile imports a file by its extension.
func parseFile(file string, data []byte, opt Options) (*Result, error) {
	if strings.HasSuffix(file, ".yaml") {
		return ParseYAML(data, opt)
	}
	return ParseConf(data, opt)
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			res, err := parseFile(c.file, data, c.opt)
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

// checkResult checks what every import guarantees: a valid tree whose hosts
// are found by name, and a State that passes Check.
func checkResult(t testing.TB, res *Result) {
	t.Helper()
	tr := res.Tree
	if tr == nil || tr.NumHosts() == 0 {
		t.Fatal("no tree or no hosts")
	}
	for h := range topology.HostID(tr.NumHosts()) {
		if got, ok := tr.HostByName(tr.HostName(h)); !ok || got != h {
			t.Fatalf("host %d (%s): HostByName = %d, %v", h, tr.HostName(h), got, ok)
		}
	}
	if err := topology.NewState(tr).Check(); err != nil {
		t.Fatal(err)
	}
}
