package openb

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/blinksched/blink/topology"
)

func TestLoadNodes(t *testing.T) {
	nodes, err := LoadNodes(filepath.Join("testdata", "nodes.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Node{
		{"n0", 16000, 65536, 2, "T4"},
		{"n1", 32000, 131072, 4, "V100"},
		{"n2", 8000, 32768, 1, "T4"},
		{"n3", 64000, 262144, 0, ""},
	}
	if !reflect.DeepEqual(nodes, want) {
		t.Errorf("nodes\n got %+v\nwant %+v", nodes, want)
	}
}

func TestLoadPods(t *testing.T) {
	pods, err := LoadPods(filepath.Join("testdata", "pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 6 {
		t.Fatalf("%d pods, want 6", len(pods))
	}
	p1 := Pod{Name: "p1", CPUMilli: 2000, MemoryMiB: 4096, NumGPU: 1, GPUMilli: 500, QoS: "BE", Phase: "Succeeded",
		Creation: 10}
	if !reflect.DeepEqual(pods[1], p1) {
		t.Errorf("p1\n got %+v\nwant %+v", pods[1], p1)
	}
	if got := pods[4].Models; !reflect.DeepEqual(got, []string{"T4", "A100"}) {
		t.Errorf("p4 models %q", got)
	}
	if !pods[0].HasDeletion || pods[0].Deletion != 100 || !pods[0].HasScheduled || pods[3].HasScheduled {
		t.Errorf("times: %+v %+v", pods[0], pods[3])
	}
	for i, want := range []int64{1000, 500, 2000, 0, 250, 1000} {
		if got := pods[i].MilliGPU(); got != want {
			t.Errorf("pod %d MilliGPU %d, want %d", i, got, want)
		}
	}
}

func TestReadErrors(t *testing.T) {
	const head = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\n"
	for _, tc := range []struct{ in, want string }{
		{"", "empty file"},
		{"name,cpu_milli,memory_mib,num_gpu\n", `no column "gpu_milli"`},
		{"name,name,cpu_milli,memory_mib,num_gpu,gpu_milli\n", `column "name" twice`},
		{head + "a,x,1,1,1000,0,1\n", `line 2: cpu_milli "x" is not an integer`},
		{head + "a,1,1,65,1000,0,1\n", "num_gpu 65, want 0…64"},
		{head + "a,1,1,2,500,0,1\n", "a fraction of a GPU (gpu_milli 500) with num_gpu 2"},
		{head + "a,1,1,1,0,0,1\n", "num_gpu 1 with gpu_milli 0"},
		{head + "a,1,1,1,1001,0,1\n", "gpu_milli 1001, want 0…1000"},
		{head + "a,1,1,1,1000,5,4\n", "deletion_time 4 before creation_time 5"},
		{head + ",1,1,1,1000,0,1\n", "name is empty"},
		{head + "a,1,1,1,1000,0,1\nb,1,1,1,1000,-1,1\n", "line 3: creation_time -1"},
	} {
		_, err := ReadPods(strings.NewReader(tc.in))
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadPods(%q): %v, want ErrFormat with %q", tc.in, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"sn,cpu_milli,memory_mib,gpu\n", `no column "model"`},
		{"sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,65,T4\n", "gpu 65, want 0…64"},
		{"sn,cpu_milli,memory_mib,gpu,model\n,1,1,1,T4\n", "sn is empty"},
		{"sn,cpu_milli,memory_mib,gpu,model\nn0,-1,1,1,T4\n", "cpu_milli -1"},
	} {
		_, err := ReadNodes(strings.NewReader(tc.in))
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadNodes(%q): %v, want ErrFormat with %q", tc.in, err, tc.want)
		}
	}
}

// TestReadPodsColumns: columns are found by name, in any order; a CPU-only
// pod's gpu_milli is ignored; optional columns may be missing.
func TestReadPodsColumns(t *testing.T) {
	pods, err := ReadPods(strings.NewReader("gpu_milli,num_gpu,memory_mib,cpu_milli,name,extra\n300,0,2,1,a,x\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Pod{Name: "a", CPUMilli: 1, MemoryMiB: 2}
	if !reflect.DeepEqual(pods, []Pod{want}) {
		t.Errorf("got %+v, want %+v", pods, want)
	}
}

func testCluster(t *testing.T, tree string) (*Cluster, []Pod) {
	t.Helper()
	nodes, err := LoadNodes(filepath.Join("testdata", "nodes.csv"))
	if err != nil {
		t.Fatal(err)
	}
	pods, err := LoadPods(filepath.Join("testdata", "pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCluster(nodes, tree)
	if err != nil {
		t.Fatal(err)
	}
	return c, pods
}

func TestCluster(t *testing.T) {
	for _, tree := range Trees {
		c, _ := testCluster(t, tree)
		if c.GPUs != 7 || c.CapacityMilli() != 7000 || c.Tree.NumHosts() != 4 {
			t.Errorf("%s: %d GPUs, %d hosts", tree, c.GPUs, c.Tree.NumHosts())
		}
		for h, n := range c.Nodes {
			id := topology.HostID(h)
			if c.Tree.HostName(id) != n.Name || c.Tree.HostGPUCount(id) != n.GPUs ||
				c.Tree.ModelName(c.Tree.HostModel(id)) != n.Model || int64(c.Tree.HostCPU(id)) != n.CPUMilli ||
				int64(c.Tree.HostMemory(id)) != n.MemoryMiB {
				t.Errorf("%s: host %d is %s, node %+v", tree, h, c.Tree.HostName(id), n)
			}
		}
	}
	c, _ := testCluster(t, Pool)
	// n0 and n2 are both T4 but of different instance types: four pools.
	if lo, hi := c.Tree.LevelDomains(1); hi-lo != 4 {
		t.Errorf("pool tree: %d pools, want 4", hi-lo)
	}
	if _, err := NewCluster([]Node{{Name: "a"}, {Name: "a"}}, Flat); err == nil {
		t.Error("duplicate node names: no error")
	}
	if _, err := NewCluster(nil, "rack"); err == nil {
		t.Error("unknown tree: no error")
	}
}

func TestShapes(t *testing.T) {
	c, pods := testCluster(t, Flat)
	shapes := c.Shapes(pods)
	v100, _ := c.Tree.ModelByName("V100")
	t4, _ := c.Tree.ModelByName("T4")
	want := []Shape{
		{GPUs: 1, CPUMilli: 4000, MemoryMiB: 8192},
		{GPUs: 1, Milli: 500, CPUMilli: 2000, MemoryMiB: 4096},
		{GPUs: 2, CPUMilli: 8000, MemoryMiB: 16384, Models: []int{v100}},
		{CPUMilli: 1000, MemoryMiB: 1024},
		{GPUs: 1, Milli: 250, CPUMilli: 1000, MemoryMiB: 1024, Models: []int{t4}}, // A100: no node has it
		{GPUs: 1, CPUMilli: 1000, MemoryMiB: 1024, Models: []int{}, NoModel: true},
	}
	if !reflect.DeepEqual(shapes, want) {
		t.Errorf("shapes\n got %+v\nwant %+v", shapes, want)
	}
	for i, w := range []int64{1000, 500, 2000, 0, 250, 1000} {
		if shapes[i].MilliGPU() != w {
			t.Errorf("shape %d MilliGPU %d, want %d", i, shapes[i].MilliGPU(), w)
		}
	}
	if !shapes[0].Accepts(v100) || shapes[2].Accepts(t4) || !shapes[2].Accepts(v100) || shapes[5].Accepts(t4) {
		t.Error("Accepts")
	}
	req := shapes[1].Request(7)
	if err := req.Validate(c.Tree); err != nil || req.Job != 7 || req.Sets[0].Milli != 500 || req.Sets[0].Pods != 1 {
		t.Errorf("Request: %+v, %v", req, err)
	}
}

// FuzzReadPods: the parser never panics, and what it accepts keeps the
// documented invariants.
func FuzzReadPods(f *testing.F) {
	f.Add("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time\na,1,2,1,500,T4|V100,0,5\n")
	f.Add("name,cpu_milli,memory_mib,num_gpu,gpu_milli\nb,0,0,8,1000\nc,1,1,0,0\n")
	f.Add("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n\"x\ny\",1,1,1,1\n")
	f.Fuzz(func(t *testing.T, in string) {
		pods, err := ReadPods(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		for _, p := range pods {
			ok := p.Name != "" && p.NumGPU >= 0 && p.NumGPU <= topology.MaxHostGPUs &&
				(p.NumGPU == 0) == (p.GPUMilli == 0) && p.GPUMilli <= topology.FullGPU &&
				(p.GPUMilli == topology.FullGPU || p.NumGPU <= 1) && (!p.HasDeletion || p.Deletion >= p.Creation)
			if !ok {
				t.Fatalf("accepted %+v", p)
			}
		}
	})
}
