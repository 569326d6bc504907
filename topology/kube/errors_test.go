package kube

import (
	"errors"
	"strings"
	"testing"

	"github.com/blinksched/blink/topology"
)

// nodeJSON is a minimal ready node with the given labels and allocatable
// (both JSON object bodies).
func nodeJSON(name, labels, alloc string) string {
	return `{"metadata": {"name": "` + name + `", "labels": {` + labels + `}}, "status": {"allocatable": {` + alloc +
		`}, "conditions": [{"type": "Ready", "status": "True"}]}}`
}

func list(items ...string) []byte {
	return []byte(`{"kind": "List", "items": [` + strings.Join(items, ",\n") + `]}`)
}

var errorCases = []struct {
	name   string
	data   []byte
	levels []string
	want   string
}{
	{"bad cpu", list(nodeJSON("n1", `"rack": "r1"`, `"cpu": "12x"`)), []string{"rack"},
		`node n1 (items[0]): allocatable cpu: quantity "12x": unknown suffix "x"`},
	{"bad memory", list(nodeJSON("n1", `"rack": "r1"`, `"cpu": "1"`), nodeJSON("n2", `"rack": "r1"`, `"memory": "1 Gi"`)), []string{"rack"},
		`node n2 (items[1]): allocatable memory: quantity "1 Gi"`},
	{"negative memory", list(nodeJSON("n1", `"rack": "r1"`, `"memory": "-1Gi"`)), []string{"rack"},
		`node n1 (items[0]): allocatable memory: "-1Gi" is negative`},
	{"huge cpu", list(nodeJSON("n1", `"rack": "r1"`, `"cpu": "3M"`)), []string{"rack"},
		`node n1 (items[0]): allocatable cpu: "3M" is out of range (0…2147483647 milli-cores)`},
	{"fractional GPUs", list(nodeJSON("n1", `"rack": "r1"`, `"nvidia.com/gpu": "1500m"`)), []string{"rack"},
		`node n1 (items[0]): allocatable nvidia.com/gpu: "1500m", want a whole number 0…64`},
	{"too many GPUs", list(nodeJSON("n1", `"rack": "r1"`, `"nvidia.com/gpu": "72"`)), []string{"rack"},
		`allocatable nvidia.com/gpu: "72", want a whole number 0…64`},
	{"bad GPU quantity", list(nodeJSON("n1", `"rack": "r1"`, `"nvidia.com/gpu": true`)), []string{"rack"},
		`node n1 (items[0]): allocatable nvidia.com/gpu: quantity "true": no number`},
	{"duplicate", list(nodeJSON("n1", `"rack": "r1"`, ``), nodeJSON("n1", `"rack": "r2"`, ``)), []string{"rack"},
		`node n1 (items[1]): name already at items[0]`},
	{"no name", list(`{"metadata": {"labels": {}}}`), nil, `items[0]: node has no metadata.name`},
	{"bad labels", list(`{"metadata": {"name": "n7", "labels": {"rack": 3}}}`), nil, `items[0] (node n7): json: cannot unmarshal number`},
	{"syntax", []byte("{\"items\": [\n  {\"metadata\": {\"name\": \"n1\"}},\n  {oops}\n]}"), nil, "node list: line 3: invalid character 'o'"},
	{"not a list", []byte(`{"kind": "Pod", "metadata": {"name": "p"}}`), nil, `not a node list: no items (kind "Pod")`},
	{"array", []byte(`[]`), nil, "node list: line 1: json: cannot unmarshal array"},
	{"empty list", list(), nil, "no node to import (0 items, 0 without the level labels)"},
	{"all skipped", list(nodeJSON("n1", ``, ``)), []string{"rack"}, "no node to import (1 items, 1 without the level labels)"},
	{"hostname first", list(nodeJSON("n1", ``, ``)), []string{HostnameLabel, "rack"}, "level 0: kubernetes.io/hostname names the host level and must come last"},
	{"repeated key", list(nodeJSON("n1", ``, ``)), []string{"rack", "rack"}, "level 1: label key rack repeated"},
	{"empty key", list(nodeJSON("n1", ``, ``)), []string{""}, "level 0: empty label key"},
	{"reserved level", list(nodeJSON("n1", `"host": "x"`, ``)), []string{"host"}, `"host" is the implicit leaf level`},
}

func TestErrors(t *testing.T) {
	for _, c := range errorCases {
		t.Run(c.name, func(t *testing.T) {
			res, err := ParseNodeList(c.data, c.levels, Options{})
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

// Node states: what is left out, drained or failed, and the custom
// resource and label options.
func TestNodeStates(t *testing.T) {
	cordoned := `{"metadata": {"name": "c1", "labels": {"rack": "r1"}}, "spec": {"unschedulable": true},
		"status": {"conditions": [{"type": "Ready", "status": "True"}]}}`
	noStatus := `{"metadata": {"name": "u1", "labels": {"rack": "r1"}}}`
	amd := nodeJSON("a1", `"rack": "r2", "amd.com/gpu.product-name": "MI300X", "nvidia.com/gpu.product": "wrong"`,
		`"amd.com/gpu": "8", "nvidia.com/gpu": "2"`)
	res, err := ParseNodeList(list(cordoned, noStatus, amd), []string{"rack"},
		Options{GPUResource: "amd.com/gpu", ModelLabel: "amd.com/gpu.product-name"})
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, res)
	tr := res.Tree
	a, _ := tr.HostByName("a1")
	if tr.HostGPUCount(a) != 8 || tr.ModelName(tr.HostModel(a)) != "MI300X" {
		t.Errorf("a1: %d GPUs of %q", tr.HostGPUCount(a), tr.ModelName(tr.HostModel(a)))
	}
	if len(res.Health) != 2 || res.Health[0].Cause != Unschedulable || res.Health[0].Health != topology.Draining ||
		res.Health[1].Cause != NotReady || res.Health[1].Node != "u1" {
		t.Errorf("health %+v", res.Health)
	}
	u, _ := tr.HostByName("u1")
	if tr.HostCPU(u) != topology.Unlimited || tr.HostMemory(u) != topology.Unlimited || tr.HostGPUCount(u) != 0 {
		t.Error("a node without allocatable should have 0 GPUs and unlimited CPU and memory")
	}
	if d := res.HealthDelta(); len(d.Ops) != 2 || d.Ops[1].Kind != topology.OpSetHostHealth || d.Ops[1].Host != u {
		t.Errorf("HealthDelta %+v", d)
	}
}
