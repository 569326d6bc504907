// Package slurm imports a Slurm network topology as a topology.Tree: the
// topology.conf file (ParseConf) in tree or block form, and topology.yaml
// (ParseYAML) with tree, block and flat topologies. It is pure: the caller
// reads the file and passes its bytes; the package opens nothing.
//
// Topology files name nodes but not their resources, so Options.Host (or
// Options.Default) supplies each node's GPUs, GPU model, CPU and memory, e.g.
// from slurm.conf's NodeName lines or `scontrol show nodes`.
//
// # Tree form
//
//	SwitchName=core  Switches=spine[1-2]
//	SwitchName=spine1 Switches=leaf[1-2]  LinkSpeed=100
//	SwitchName=leaf1 Nodes=gpu-[001-018,020]
//
// Hostlists are Slurm's (see ExpandHostlist); LinkSpeed is ignored. Levels
// follow Slurm's switch levels: a leaf switch (one with Nodes) has height 0,
// any other switch one more than its highest child, and the Tree's levels are
// named by height root-first, "switch2", "switch1", "switch0" (rename them
// with Options.Levels). Hosts are laid out depth-first: top-level switches in
// file order, children in the order Switches lists them, nodes in hostlist
// order.
//
// Unbalanced trees keep leaf switches at the leaf level. Where a switch sits
// more than one height below its parent, its domain also fills the levels in
// between (a leaf switch directly under a height-2 switch is both the
// switch1 and the switch0 domain of its hosts: one domain per level, holding
// the same hosts); a top-level switch lower than the highest is lifted the
// same way. Such pass-through domains add no placement freedom: they hold
// exactly the hosts their one child holds.
//
// The hierarchy must be acyclic, every Switches name defined, and a node on
// one switch only: these are errors. A switch listed by several parents (as
// in Slurm's example of four spine switches over the same leaves) stays under
// the first in file order; the other links are ignored with a Warning, and
// switches left with no nodes below them are dropped with a Warning. Several
// top-level switches become children of the Tree's root, which lets a job span
// them where Slurm would not (a Warning says so, and which level to require to
// keep Slurm's rule).
//
// # Block form
//
//	BlockName=nvl1 Nodes=gb200-[001-018]
//	BlockName=nvl2 Nodes=gb200-[019-036]
//	BlockSizes=18,36,72
//
// Blocks are the lowest level, "block". BlockSizes lists the base block size
// in nodes and larger sizes, each a power-of-two multiple of it; as in Slurm,
// a level of size 2^k·base aggregates 2^k consecutive blocks in file order,
// and levels stop at the first that covers every block. Without BlockSizes,
// the base is the first block's node count and the levels aggregate 1, 2, 4,
// 8 and 16 blocks. Aggregate levels are named "block" followed by their size
// in nodes ("block72", "block36"), root-first, and each aggregate is labelled
// with its blocks as a hostlist ("nvl[1-4]"). A trailing group too small
// for its level (which Slurm leaves out) is a domain holding the same
// blocks as the group below it, so it adds no placement freedom. Errors: a
// node in two blocks, a block with fewer nodes than the base size, sizes
// that are not increasing power-of-two multiples of the base.
//
// # topology.yaml
//
// A sequence of topologies, each with a name (topology), an optional
// cluster_default, and one of tree (switches: switch, children, nodes),
// block (block_sizes, blocks: block, nodes) or flat: true, built as above.
// A flat topology names no nodes: Options.Nodes lists them and the Tree has no
// named level. The YAML reader handles the subset these files use (block
// mappings and sequences, one-line scalars, flow lists of numbers, comments)
// and rejects the rest (anchors, tags, multi-line scalars) with the line.
//
// # Errors and warnings
//
// Every error wraps topology.ErrInvalid and names the line and what is wrong:
// an unknown key or switch, a malformed hostlist range, a cycle, a node in
// two switches or blocks. What Slurm accepts but a Tree cannot hold exactly
// is adjusted and reported in Result.Warnings, never silently dropped.
package slurm
