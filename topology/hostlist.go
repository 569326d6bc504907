package topology

import (
	"fmt"
	"strings"
)

// HostSpec describes one host for BuildHosts, as a Kubernetes node with its
// topology labels would: one path value per domain level, root-first.
type HostSpec struct {
	Name  string
	Path  []string // one label per level, e.g. {"b0", "r3"}
	GPUs  int      // 0…64
	Model string   // GPU model; "" for none
	// CPUMilli and MemoryMiB are the host's capacity, 0…Unlimited (use
	// Unlimited for a host that declares none).
	CPUMilli, MemoryMiB int64
}

// BuildHosts builds a Tree from a host list under the given domain levels.
// Domains are identified by their full path and numbered depth-first in order
// of first appearance; hosts keep input order within their domain (so host ids
// may differ from input positions: use HostByName). Host names must be unique.
func BuildHosts(levels []string, hosts []HostSpec) (*Tree, error) {
	if err := validateLevels(levels); err != nil {
		return nil, err
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("%w: no hosts", ErrInvalid)
	}
	b := trieBuilder{sk: newSkeleton(append([]string(nil), levels...)), L: len(levels)}
	b.nodes = make([][]trieNode, len(levels)+1)
	b.nodes[0] = []trieNode{{}}
	b.index = map[trieKey]int32{}
	names := make(map[string]HostID, len(hosts))
	for i := range hosts {
		if err := b.add(i, &hosts[i], names); err != nil {
			return nil, err
		}
	}
	order := b.fillHosts(b.layout(), hosts)
	remapped := make(map[string]HostID, len(hosts))
	for newID, in := range order {
		remapped[hosts[in].Name] = HostID(newID)
	}
	return b.sk.finalize(remapped)
}

type trieKey struct {
	level, parent int32
	label         string
}

type trieNode struct {
	label    int32
	children []int32 // child nodes (next level) or input host positions (last level)
}

type trieBuilder struct {
	sk    *skeleton
	L     int
	nodes [][]trieNode // [level][node]; level 0 is the root
	index map[trieKey]int32
}

func (b *trieBuilder) add(i int, h *HostSpec, names map[string]HostID) error {
	where := fmt.Sprintf("host %d (%q)", i, h.Name)
	switch {
	case h.Name == "":
		return fmt.Errorf("%w: host %d has no name", ErrInvalid, i)
	case len(h.Path) != b.L:
		return fmt.Errorf("%w: %s: path has %d labels, want %d (%s)",
			ErrInvalid, where, len(h.Path), b.L, strings.Join(b.sk.levels, ", "))
	}
	if prev, dup := names[h.Name]; dup {
		return fmt.Errorf("%w: %s: duplicate host name (first at host %d)", ErrInvalid, where, prev)
	}
	names[h.Name] = HostID(i)
	if err := validateHost(where, h.GPUs, h.CPUMilli, h.MemoryMiB); err != nil {
		return err
	}
	parent := int32(0)
	for l, label := range h.Path {
		if label == "" {
			return fmt.Errorf("%w: %s: empty label at level %s", ErrInvalid, where, b.sk.levels[l])
		}
		k := trieKey{int32(l + 1), parent, label}
		id, ok := b.index[k]
		if !ok {
			id = int32(len(b.nodes[l+1]))
			b.index[k] = id
			b.nodes[l+1] = append(b.nodes[l+1], trieNode{label: b.sk.label(label)})
			b.nodes[l][parent].children = append(b.nodes[l][parent].children, id)
		}
		parent = id
	}
	b.nodes[b.L][parent].children = append(b.nodes[b.L][parent].children, int32(i))
	b.sk.label(h.Name)
	return nil
}

// layout numbers the trie level by level in depth-first order (children in
// order of first appearance) and fills the skeleton's domains; it returns the
// leaf domains (trie nodes of the last level) in final order.
func (b *trieBuilder) layout() []int32 {
	order := []int32{0} // final order of the current level's nodes
	for l := 1; l <= b.L; l++ {
		var next []int32
		for pos, n := range order {
			for _, c := range b.nodes[l-1][n].children {
				next = append(next, c)
				b.sk.domParent[l-1] = append(b.sk.domParent[l-1], int32(pos))
				b.sk.domLabel[l-1] = append(b.sk.domLabel[l-1], b.nodes[l][c].label)
			}
		}
		order = next
	}
	return order
}

// fillHosts appends the hosts to the skeleton in final order (leaf domains in
// their final order, hosts in input order inside each) and returns the input
// position of each host in that order.
func (b *trieBuilder) fillHosts(leaves []int32, hosts []HostSpec) []int {
	sk := b.sk
	out := make([]int, 0, len(hosts))
	for pos, n := range leaves {
		for _, in := range b.nodes[b.L][n].children {
			h := &hosts[in]
			out = append(out, int(in))
			sk.hostParent = append(sk.hostParent, int32(pos))
			sk.hostLabel = append(sk.hostLabel, sk.labelIDs[h.Name])
			sk.hostGPUs = append(sk.hostGPUs, int32(h.GPUs))
			sk.hostModel = append(sk.hostModel, sk.model(h.Model))
			sk.hostCPU = append(sk.hostCPU, int32(h.CPUMilli))
			sk.hostMem = append(sk.hostMem, int32(h.MemoryMiB))
		}
	}
	return out
}
