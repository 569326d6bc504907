package slurm_test

import (
	"fmt"
	"strings"

	"github.com/blinksched/blink/topology"
	"github.com/blinksched/blink/topology/slurm"
)

// A two-level switch tree: levels come from the switch heights, nodes from
// hostlists, and each node's resources from Options.
func ExampleParseConf() {
	conf := `
SwitchName=spine Switches=leaf[1-2]
SwitchName=leaf1 Nodes=gpu-[01-02]
SwitchName=leaf2 Nodes=gpu-[03-04] LinkSpeed=400
`
	res, err := slurm.ParseConf([]byte(conf), slurm.Options{
		Default: topology.HostSpec{GPUs: 8, Model: "H100", CPUMilli: 96000, MemoryMiB: 1 << 20},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	t := res.Tree
	fmt.Println(res.Form, t.LevelName(1), t.LevelName(2), t.NumHosts(), "hosts", t.NumGPUs(), "GPUs")
	h, _ := t.HostByName("gpu-03")
	fmt.Println(t.DomainPath(t.HostParent(h)))

	_, err = slurm.ParseConf([]byte("SwitchName=s Nodes=gpu-[04-01]\n"), slurm.Options{})
	fmt.Println(err)
	// Output:
	// tree switch1 switch0 4 hosts 32 GPUs
	// spine/leaf2
	// topology: invalid: line 1: Nodes: hostlist "gpu-[04-01]": range "04-01" in [04-01] runs backwards
}

// Blocks of GB200 NVL72 racks aggregate into pairs, as BlockSizes says.
func ExampleParseYAML() {
	yaml := `
- topology: nvl
  cluster_default: true
  block:
    block_sizes: [18, 36]
    blocks:
      - block: rack1
        nodes: gb200-[001-018]
      - block: rack2
        nodes: gb200-[019-036]
`
	res, err := slurm.ParseYAML([]byte(yaml), slurm.Options{Default: topology.HostSpec{GPUs: 4, Model: "GB200"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	t := res.Tree
	lo, hi := t.LevelDomains(1)
	for d := lo; d < hi; d++ {
		fmt.Println(t.LevelName(1), t.DomainLabel(d), t.DomainGPUs(d), "GPUs")
	}
	// Output:
	// block36 rack[1-2] 144 GPUs
}

func ExampleExpandHostlist() {
	names, _ := slurm.ExpandHostlist("gb200-[001-003,010],r[1-2]n[1-2]")
	fmt.Println(strings.Join(names, " "))
	fmt.Println(slurm.RangedString(names))
	// Output:
	// gb200-001 gb200-002 gb200-003 gb200-010 r1n1 r1n2 r2n1 r2n2
	// gb200-[001-003,010],r1n[1-2],r2n[1-2]
}
