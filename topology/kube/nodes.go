package kube

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/blinksched/blink/topology"
)

// HostnameLabel names the host level when it ends a Kueue Topology's levels.
const HostnameLabel = "kubernetes.io/hostname"

// Options name the resource and label the importer reads GPUs from.
type Options struct {
	// GPUResource is the allocatable resource counting a node's GPUs;
	// "" means "nvidia.com/gpu".
	GPUResource string
	// ModelLabel is the node label naming the GPU model; "" means
	// "nvidia.com/gpu.product".
	ModelLabel string
}

func (o *Options) fill() {
	if o.GPUResource == "" {
		o.GPUResource = "nvidia.com/gpu"
	}
	if o.ModelLabel == "" {
		o.ModelLabel = "nvidia.com/gpu.product"
	}
}

// Cause says why a host starts unhealthy.
type Cause uint8

const (
	// Unschedulable: spec.unschedulable is set (the node is cordoned); the
	// host is Draining: its pods stay, new ones go elsewhere.
	Unschedulable Cause = iota + 1
	// NotReady: the node's Ready condition is False, Unknown or absent; the
	// host is Failed. It takes precedence over Unschedulable.
	NotReady
)

func (c Cause) String() string {
	switch c {
	case Unschedulable:
		return "unschedulable"
	case NotReady:
		return "not ready"
	}
	return "cause(?)"
}

// HostHealth is a host to mark before placing anything.
type HostHealth struct {
	Host   topology.HostID
	Node   string
	Health topology.Health
	Cause  Cause
}

// Skipped is a node left out of the Tree: it lacks the label of a level (or
// the label is empty), so it has no place in the hierarchy.
type Skipped struct {
	Node  string
	Index int    // position in the list's items
	Label string // the missing label key
}

func (s Skipped) String() string {
	return fmt.Sprintf("node %s (items[%d]) has no label %s: left out", s.Node, s.Index, s.Label)
}

// Result is an imported node list.
type Result struct {
	Tree *topology.Tree
	// Health lists the cordoned and NotReady nodes, in input order, for the
	// caller to apply to its State (HealthDelta, NewState).
	Health []HostHealth
	// Skipped lists the nodes left out, in input order.
	Skipped []Skipped
}

// HealthDelta returns the Delta marking Health's hosts draining or failed.
func (r *Result) HealthDelta() topology.Delta {
	ops := make([]topology.Op, len(r.Health))
	for i, h := range r.Health {
		ops[i] = topology.SetHostHealth(h.Host, h.Health)
	}
	return topology.Delta{Ops: ops}
}

// NewState returns an empty State of the Tree with HealthDelta applied.
func (r *Result) NewState() (*topology.State, error) {
	s := topology.NewState(r.Tree)
	if err := s.Apply(r.HealthDelta()); err != nil {
		return nil, err
	}
	return s, nil
}

// node holds the fields of a Node the importer reads.
type node struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Unschedulable bool `json:"unschedulable"`
	} `json:"spec"`
	Status struct {
		Allocatable map[string]json.RawMessage `json:"allocatable"`
		Conditions  []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

// ParseNodeList imports the JSON of a node list (`kubectl get nodes -o
// json`, a NodeList, or a single Node) under levels: label keys root-first,
// one per domain level, as a Kueue Topology lists them; a trailing
// kubernetes.io/hostname names the implicit host level and is dropped. Level
// names are the label keys, domain labels their values, host names the
// nodes' metadata.name. See the package documentation for resources and
// node states. The error, if any, wraps topology.ErrInvalid and names the
// node.
func ParseNodeList(data []byte, levels []string, opt Options) (*Result, error) {
	opt.fill()
	lv, err := domainLevels(levels)
	if err != nil {
		return nil, err
	}
	items, err := decodeItems(data)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	hosts := make([]topology.HostSpec, 0, len(items))
	type pending struct {
		name   string
		health topology.Health
		cause  Cause
	}
	var marks []pending
	seen := make(map[string]int, len(items))
	for i, raw := range items {
		var n node
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, fmt.Errorf("%w: items[%d]%s: %v", topology.ErrInvalid, i, nameHint(raw), err)
		}
		name := n.Metadata.Name
		if name == "" {
			return nil, fmt.Errorf("%w: items[%d]: node has no metadata.name", topology.ErrInvalid, i)
		}
		if prev, dup := seen[name]; dup {
			return nil, fmt.Errorf("%w: node %s (items[%d]): name already at items[%d]", topology.ErrInvalid, name, i, prev)
		}
		seen[name] = i
		h, missing, err := n.hostSpec(lv, &opt)
		if err != nil {
			return nil, fmt.Errorf("%w: node %s (items[%d]): %v", topology.ErrInvalid, name, i, err)
		}
		if missing != "" {
			res.Skipped = append(res.Skipped, Skipped{Node: name, Index: i, Label: missing})
			continue
		}
		hosts = append(hosts, h)
		if health, cause := n.health(); cause != 0 {
			marks = append(marks, pending{name, health, cause})
		}
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("%w: no node to import (%d items, %d without the level labels)",
			topology.ErrInvalid, len(items), len(res.Skipped))
	}
	if res.Tree, err = topology.BuildHosts(lv, hosts); err != nil {
		return nil, err
	}
	for _, m := range marks {
		id, _ := res.Tree.HostByName(m.name)
		res.Health = append(res.Health, HostHealth{Host: id, Node: m.name, Health: m.health, Cause: m.cause})
	}
	return res, nil
}

// domainLevels validates the level keys and drops a trailing hostname key.
func domainLevels(levels []string) ([]string, error) {
	lv := levels
	if n := len(lv); n > 0 && lv[n-1] == HostnameLabel {
		lv = lv[:n-1]
	}
	seen := map[string]bool{}
	for i, k := range lv {
		switch {
		case k == "":
			return nil, fmt.Errorf("%w: level %d: empty label key", topology.ErrInvalid, i)
		case k == HostnameLabel:
			return nil, fmt.Errorf("%w: level %d: %s names the host level and must come last", topology.ErrInvalid, i, k)
		case seen[k]:
			return nil, fmt.Errorf("%w: level %d: label key %s repeated", topology.ErrInvalid, i, k)
		}
		seen[k] = true
	}
	return append([]string(nil), lv...), nil
}

// decodeItems returns the nodes of a list (or the one Node).
func decodeItems(data []byte) ([]json.RawMessage, error) {
	var top struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%w: node list: %s", topology.ErrInvalid, jsonError(data, err))
	}
	switch {
	case top.Items != nil:
		return top.Items, nil
	case top.Kind == "Node":
		return []json.RawMessage{data}, nil
	}
	return nil, fmt.Errorf("%w: not a node list: no items (kind %q)", topology.ErrInvalid, top.Kind)
}

// jsonError adds the line to a JSON syntax or type error.
func jsonError(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	off := int64(-1)
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return err.Error()
	}
	return fmt.Sprintf("line %d: %v", 1+bytes.Count(data[:off], []byte("\n")), err)
}

// nameHint returns ` (name)` when a malformed item still has a readable
// metadata.name.
func nameHint(raw []byte) string {
	var n struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if json.Unmarshal(raw, &n) != nil || n.Metadata.Name == "" {
		return ""
	}
	return " (node " + n.Metadata.Name + ")"
}

// hostSpec reads the node's path and resources; missing is the first level
// label it lacks.
func (n *node) hostSpec(levels []string, opt *Options) (h topology.HostSpec, missing string, err error) {
	h.Name = n.Metadata.Name
	h.Path = make([]string, len(levels))
	for i, k := range levels {
		v := n.Metadata.Labels[k]
		if v == "" {
			return h, k, nil
		}
		h.Path[i] = v
	}
	h.Model = n.Metadata.Labels[opt.ModelLabel]
	alloc := n.Status.Allocatable
	if raw, ok := alloc[opt.GPUResource]; ok {
		q, err := quantity(raw)
		if err != nil {
			return h, "", fmt.Errorf("allocatable %s: %v", opt.GPUResource, err)
		}
		if !q.IsInt() || q.Sign() < 0 || !q.Num().IsInt64() || q.Num().Int64() > topology.MaxHostGPUs {
			return h, "", fmt.Errorf("allocatable %s: %s, want a whole number 0…%d", opt.GPUResource, raw, topology.MaxHostGPUs)
		}
		h.GPUs = int(q.Num().Int64())
	}
	h.CPUMilli, err = capacity(alloc, "cpu", 1000, 1)
	if err != nil {
		return h, "", err
	}
	h.MemoryMiB, err = capacity(alloc, "memory", 1, 1<<20)
	return h, "", err
}

// capacity reads an allocatable quantity scaled by num/den and rounded
// down (a host never looks bigger than it is); absent, it is Unlimited.
func capacity(alloc map[string]json.RawMessage, key string, num, den int64) (int64, error) {
	raw, ok := alloc[key]
	if !ok {
		return topology.Unlimited, nil
	}
	q, err := quantity(raw)
	if err != nil {
		return 0, fmt.Errorf("allocatable %s: %v", key, err)
	}
	v, err := floorScaled(q, num, den, topology.Unlimited)
	if err != nil {
		unit := "milli-cores"
		if key == "memory" {
			unit = "MiB"
		}
		return 0, fmt.Errorf("allocatable %s: %s is %v (0…%d %s)", key, raw, err, topology.Unlimited, unit)
	}
	return v, nil
}

// quantity parses a JSON quantity: a string, or a bare number.
func quantity(raw json.RawMessage) (*big.Rat, error) {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 0 && s[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
	}
	return ParseQuantity(s)
}

// health returns the node's starting health and why it is not Healthy.
func (n *node) health() (topology.Health, Cause) {
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == "Ready" {
			ready = c.Status == "True"
		}
	}
	switch {
	case !ready:
		return topology.Failed, NotReady
	case n.Spec.Unschedulable:
		return topology.Draining, Unschedulable
	}
	return topology.Healthy, 0
}
