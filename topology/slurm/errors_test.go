package slurm

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/blinksched/blink/topology"
)

// errorCases are malformed inputs with a fragment of the error each must
// give: the line and what is wrong.
var errorCases = []struct {
	name, file, data, want string
}{
	{"unknown switch", "c.conf", "SwitchName=top Switches=s[1-2]\nSwitchName=s1 Nodes=n1\n",
		"line 1: switch top: unknown switch s2 in Switches"},
	{"cycle", "c.conf", "SwitchName=a Switches=b\nSwitchName=b Switches=c\nSwitchName=c Switches=a\nSwitchName=d Nodes=n1\n",
		"line 3: switch cycle: a → b → c → a"},
	{"self cycle", "c.conf", "SwitchName=a Switches=a,b\nSwitchName=b Nodes=n1\n", "line 1: switch cycle: a lists itself"},
	{"node on two switches", "c.conf", "SwitchName=s1 Nodes=n[1-3]\nSwitchName=s2 Nodes=n[3-4]\n",
		"line 2: node n3 is in switch s1 (line 1) and in switch s2"},
	{"node in two blocks", "c.conf", "BlockName=b1 Nodes=n[1-2]\n\nBlockName=b2 Nodes=n2,n3\n",
		"line 3: node n2 is in block b1 (line 1) and in block b2"},
	{"backwards range", "c.conf", "SwitchName=s Nodes=n[5-3]\n", `line 1: Nodes: hostlist "n[5-3]": range "5-3" in [5-3] runs backwards`},
	{"malformed range", "c.conf", "SwitchName=s Nodes=n[1-x]\n", `line 1: Nodes: hostlist "n[1-x]": malformed range "1-x"`},
	{"open bracket", "c.conf", "SwitchName=s Nodes=n[1-2\n", `'[' without ']'`},
	{"empty brackets", "c.conf", "SwitchName=s Nodes=n[]\n", "empty brackets"},
	{"empty element", "c.conf", "SwitchName=s Nodes=a,,b\n", "empty name"},
	{"duplicate switch", "c.conf", "SwitchName=s Nodes=a\nSwitchName=s Nodes=b\n", "line 2: switch s already defined on line 1"},
	{"nodes and switches", "c.conf", "SwitchName=s Nodes=a Switches=t\n", "line 1: switch s has both Nodes and Switches"},
	{"mixed forms", "c.conf", "SwitchName=s Nodes=a\nBlockName=b Nodes=c\n", "line 2: a block line in a tree topology"},
	{"unknown key", "c.conf", "SwitchName=s Nodez=a\n", `line 1: SwitchName line: unexpected key "nodez"`},
	{"unknown record", "c.conf", "# c\nNodeName=a CPUs=4\n", `line 2: unknown key "nodename"`},
	{"not a pair", "c.conf", "SwitchName=s Nodes=a oops\n", `line 1: expected Key=Value, got "oops"`},
	{"key twice", "c.conf", "SwitchName=s Nodes=a Nodes=b\n", "line 1: Nodes given twice"},
	{"bad link speed", "c.conf", "SwitchName=s Nodes=a LinkSpeed=fast\n", `LinkSpeed="fast" is not a number`},
	{"ring", "c.conf", "RingName=r Nodes=a[1-4]\n", "line 1: RingName"},
	{"include", "c.conf", "Include /etc/slurm/x.conf\n", "line 1: expected Key=Value"},
	{"empty", "c.conf", "# nothing\n\n", "no SwitchName or BlockName line"},
	{"no nodes at all", "c.conf", "SwitchName=s\n", "no switch has nodes"},
	{"block without nodes", "c.conf", "BlockName=b\n", "line 1: block b has no Nodes"},
	{"small block", "c.conf", "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-7]\nBlockSizes=4,8\n",
		"line 2: block b2 has 3 nodes, fewer than the base block size 4"},
	{"sizes not power of two", "c.conf", "BlockName=b1 Nodes=n[1-4]\nBlockSizes=4,12\n",
		"line 2: BlockSizes: 12 is not a power-of-two multiple"},
	{"sizes not multiple", "c.conf", "BlockName=b1 Nodes=n[1-4]\nBlockSizes=4,6\n", "6 is not a multiple of the base block size 4"},
	{"sizes decreasing", "c.conf", "BlockName=b1 Nodes=n[1-4]\nBlockSizes=4,16,8\n", "BlockSizes must increase: 8 after 16"},
	{"sizes zero", "c.conf", "BlockName=b1 Nodes=n[1-4]\nBlockSizes=0\n", `BlockSizes: "0" is not a positive node count`},
	{"sizes twice", "c.conf", "BlockSizes=1\nBlockName=b1 Nodes=n[1-4]\nBlockSizes=2\n", "line 3: BlockSizes given twice (first on line 1)"},
	{"sizes alone", "c.conf", "BlockSizes=4\n", "BlockSizes without any BlockName line"},
	{"hostlist as name", "c.conf", "SwitchName=s[1-2] Nodes=a\n", "SwitchName=s[1-2]: a name, not a hostlist"},
	{"quote", "c.conf", "SwitchName=s Nodes=\"a\n", "unterminated quote"},
	{"too many nodes", "c.conf", "SwitchName=s Nodes=n[0-99999999]\n", "expands to too many names"},

	{"yaml tab", "t.yaml", "- topology: a\n\tflat: true\n", "line 2: YAML: a tab in the indentation"},
	{"yaml anchor", "t.yaml", "- topology: &x a\n  flat: true\n", "line 1: YAML: '&'"},
	{"yaml block scalar", "t.yaml", "- topology: a\n  tree:\n    switches: |\n      x\n", "line 3: YAML: '|'"},
	{"yaml flow map", "t.yaml", "- {topology: a, flat: true}\n", "line 1: YAML: flow mappings"},
	{"yaml two docs", "t.yaml", "---\n- topology: a\n  flat: true\n---\n- topology: b\n", "line 4: YAML: a second document"},
	{"yaml indentation", "t.yaml", "- topology: a\n    flat: true\n", "line 2: YAML: unexpected indentation"},
	{"yaml dup key", "t.yaml", "- topology: a\n  topology: b\n", `line 2: YAML: key "topology" repeated`},
	{"yaml not a list", "t.yaml", "topology: a\nflat: true\n", "want a sequence of topologies, got a mapping"},
	{"yaml empty", "t.yaml", "# nothing\n---\n", "topology.yaml is empty"},
	{"yaml no name", "t.yaml", "- flat: true\n", "line 1: topology entry without a name"},
	{"yaml dup name", "t.yaml", "- topology: a\n  flat: true\n- topology: a\n  flat: true\n", "line 3: topology a already defined on line 1"},
	{"yaml two types", "t.yaml", "- topology: a\n  flat: true\n  tree:\n    switches: []\n", "want exactly one of tree, block or flat, got 2 (flat, tree)"},
	{"yaml ring", "t.yaml", "- topology: r\n  ring:\n    rings: []\n", "line 2: topology r: the ring type is not supported"},
	{"yaml unknown key", "t.yaml", "- topology: a\n  tree:\n    switches:\n    - switch: s\n      node: n1\n", `line 5: switch s: unknown key "node"`},
	{"yaml unknown switch", "t.yaml", "- topology: a\n  tree:\n    switches:\n    - switch: s\n      children: t\n",
		"line 4: switch s: unknown switch t in Switches"},
	{"yaml bad range", "t.yaml", "- topology: a\n  block:\n    blocks:\n    - block: b\n      nodes: n[2-1]\n", "line 5: nodes: hostlist"},
	{"yaml bad size", "t.yaml", "- topology: a\n  block:\n    block_sizes: [2, x]\n    blocks:\n    - block: b\n      nodes: n[1-2]\n",
		`line 3: BlockSizes: "x" is not a positive node count`},
	{"yaml no blocks", "t.yaml", "- topology: a\n  block:\n    block_sizes: [2]\n", "line 2: topology a: no blocks"},
	{"yaml flat false", "t.yaml", "- topology: a\n  flat: false\n", "line 2: topology a: flat must be true"},
	{"yaml flat no nodes", "t.yaml", "- topology: a\n  flat: true\n", "a flat topology lists no nodes: set Options.Nodes"},
	{"yaml missing topology", "t.yaml", "- topology: a\n  flat: true\n", `no topology "zz" (the file has a)`},
	{"yaml bad default", "t.yaml", "- topology: a\n  cluster_default: maybe\n  flat: true\n", "line 2: topology a: cluster_default is not true or false"},
	{"yaml quoted", "t.yaml", "- topology: \"a\n  flat: true\n", "line 1: YAML: unterminated quoted string"},
	{"yaml trailing comma", "t.yaml", "- topology: a\n  block:\n    block_sizes: [2,]\n", "trailing comma"},
}

func TestErrors(t *testing.T) {
	for _, c := range errorCases {
		t.Run(c.name, func(t *testing.T) {
			opt := Options{Default: topology.HostSpec{GPUs: 4}}
			if c.name == "yaml missing topology" {
				opt.Topology = "zz"
			}
			res, err := parseFile(c.file, []byte(c.data), opt)
			if err == nil {
				t.Fatalf("no error; got\n%s", render(res))
			}
			if !errors.Is(err, topology.ErrInvalid) {
				t.Errorf("%v does not wrap topology.ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q lacks %q", err, c.want)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	conf := []byte("SwitchName=top Switches=l[1-2]\nSwitchName=l1 Nodes=gpu[1-2]\nSwitchName=l2 Nodes=cpu[1-2]\n")
	byName := func(name string) (topology.HostSpec, error) {
		switch {
		case strings.HasPrefix(name, "gpu"):
			return topology.HostSpec{GPUs: 8, Model: "H100", CPUMilli: 96000, MemoryMiB: 1 << 20}, nil
		case name == "cpu2":
			return topology.HostSpec{}, errors.New("not in slurm.conf")
		}
		return topology.HostSpec{}, nil
	}
	_, err := ParseConf(conf, Options{Host: byName})
	if err == nil || !errors.Is(err, topology.ErrInvalid) || !strings.Contains(err.Error(), "line 3: node cpu2: not in slurm.conf") {
		t.Fatalf("Host error: got %v", err)
	}
	res, err := ParseConf(conf, Options{Host: byName, Nodes: []string{"gpu1", "gpu2", "cpu1"}})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Tree
	g, _ := tr.HostByName("gpu2")
	c, _ := tr.HostByName("cpu1")
	if tr.HostGPUCount(g) != 8 || tr.ModelName(tr.HostModel(g)) != "H100" || tr.HostCPU(g) != 96000 || tr.HostMemory(g) != 1<<20 {
		t.Errorf("gpu2: %d GPUs %q, cpu %d, mem %d", tr.HostGPUCount(g), tr.ModelName(tr.HostModel(g)), tr.HostCPU(g), tr.HostMemory(g))
	}
	if tr.HostGPUCount(c) != 0 || tr.HostCPU(c) != topology.Unlimited || tr.HostMemory(c) != topology.Unlimited {
		t.Errorf("cpu1: zero resources should mean 0 GPUs and unlimited CPU and memory")
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].String(), "line 3: switch l2: cpu2 not in Options.Nodes") {
		t.Errorf("warnings %v", res.Warnings)
	}
	for _, bad := range []topology.HostSpec{{GPUs: 65}, {GPUs: -1}, {CPUMilli: -5}, {MemoryMiB: 1 << 40}} {
		_, err := ParseConf(conf, Options{Default: bad})
		if !errors.Is(err, topology.ErrInvalid) || !strings.Contains(err.Error(), "line 2: node gpu1") {
			t.Errorf("Default %+v: got %v", bad, err)
		}
	}
	if _, err := ParseConf(conf, Options{Levels: []string{"only"}}); err == nil ||
		!strings.Contains(err.Error(), "Options.Levels has 1 names, the tree topology has 2 levels (switch1, switch0)") {
		t.Errorf("Levels: got %v", err)
	}
	if _, err := ParseConf(conf, Options{Nodes: []string{"other"}}); err == nil || !strings.Contains(err.Error(), "no switch has nodes") {
		t.Errorf("no node left: got %v", err)
	}
}

// A deep chain of switches exceeds a Tree's level limit with an error.
func TestDeepHierarchy(t *testing.T) {
	var b strings.Builder
	for i := range 70 {
		b.WriteString("SwitchName=s" + strconv.Itoa(i) + " Switches=s" + strconv.Itoa(i+1) + "\n")
	}
	b.WriteString("SwitchName=s70 Nodes=n1\n")
	_, err := ParseConf([]byte(b.String()), Options{})
	if err == nil || !strings.Contains(err.Error(), "71 levels deep") {
		t.Fatalf("got %v", err)
	}
}
