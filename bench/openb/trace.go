package openb

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/blinksched/blink/topology"
)

// ErrFormat is wrapped by every error about a malformed trace file.
var ErrFormat = errors.New("openb: bad trace")

// Node is one row of a node list: a host with its capacity.
type Node struct {
	Name      string // sn
	CPUMilli  int64  // cpu_milli
	MemoryMiB int64  // memory_mib
	GPUs      int    // gpu, 0…topology.MaxHostGPUs
	Model     string // model; "" for a node without GPUs
}

// Pod is one row of a pod list.
type Pod struct {
	Name      string
	CPUMilli  int64
	MemoryMiB int64
	NumGPU    int      // 0…topology.MaxHostGPUs
	GPUMilli  int      // per GPU: 1000 whole, 1…999 a fraction of one GPU; 0 when NumGPU is 0
	Models    []string // gpu_spec split on "|"; empty: any model
	QoS       string
	Phase     string
	// Creation, Deletion and Scheduled are seconds from the trace's start;
	// Deletion and Scheduled are meaningful only when HasDeletion and
	// HasScheduled are set.
	Creation, Deletion, Scheduled int64
	HasDeletion, HasScheduled     bool
}

// MilliGPU is the pod's GPU request in milli-GPU: NumGPU × GPUMilli.
func (p *Pod) MilliGPU() int64 { return int64(p.NumGPU) * int64(p.GPUMilli) }

// LoadNodes reads the node list at path (see ReadNodes).
func LoadNodes(path string) ([]Node, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	nodes, err := ReadNodes(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return nodes, nil
}

// LoadPods reads the pod list at path (see ReadPods).
func LoadPods(path string) ([]Pod, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pods, err := ReadPods(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pods, nil
}

// ReadNodes parses a node list (columns sn, cpu_milli, memory_mib, gpu,
// model). Errors wrap ErrFormat and name the line.
func ReadNodes(r io.Reader) ([]Node, error) {
	t, err := newTable(r, "sn", "cpu_milli", "memory_mib", "gpu", "model")
	if err != nil {
		return nil, err
	}
	var nodes []Node
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nodes, nil
		}
		n := Node{Name: t.str("sn"), Model: t.str("model")}
		n.CPUMilli = t.int("cpu_milli", 0, topology.Unlimited)
		n.MemoryMiB = t.int("memory_mib", 0, topology.Unlimited)
		n.GPUs = int(t.int("gpu", 0, topology.MaxHostGPUs))
		if t.err == nil && n.Name == "" {
			t.fail("sn is empty")
		}
		if t.err != nil {
			return nil, t.err
		}
		nodes = append(nodes, n)
	}
}

// ReadPods parses a pod list. Required columns: name, cpu_milli, memory_mib,
// num_gpu, gpu_milli; optional: gpu_spec, qos, pod_phase, creation_time,
// deletion_time, scheduled_time (a missing or empty time is 0 for creation,
// absent for the others). Errors wrap ErrFormat and name the line.
func ReadPods(r io.Reader) ([]Pod, error) {
	t, err := newTable(r, "name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
	if err != nil {
		return nil, err
	}
	var pods []Pod
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return pods, nil
		}
		p := Pod{Name: t.str("name"), QoS: t.str("qos"), Phase: t.str("pod_phase")}
		p.CPUMilli = t.int("cpu_milli", 0, topology.Unlimited)
		p.MemoryMiB = t.int("memory_mib", 0, topology.Unlimited)
		p.NumGPU = int(t.int("num_gpu", 0, topology.MaxHostGPUs))
		p.GPUMilli = int(t.int("gpu_milli", 0, topology.FullGPU))
		if spec := t.str("gpu_spec"); spec != "" {
			p.Models = strings.Split(spec, "|")
		}
		p.Creation, _ = t.optInt("creation_time")
		p.Deletion, p.HasDeletion = t.optInt("deletion_time")
		p.Scheduled, p.HasScheduled = t.optInt("scheduled_time")
		switch {
		case t.err != nil:
		case p.Name == "":
			t.fail("name is empty")
		case p.NumGPU == 0:
			p.GPUMilli = 0
		case p.GPUMilli == 0:
			t.fail("num_gpu %d with gpu_milli 0", p.NumGPU)
		case p.GPUMilli < topology.FullGPU && p.NumGPU != 1:
			t.fail("a fraction of a GPU (gpu_milli %d) with num_gpu %d, want 1", p.GPUMilli, p.NumGPU)
		case p.HasDeletion && p.Deletion < p.Creation:
			t.fail("deletion_time %d before creation_time %d", p.Deletion, p.Creation)
		}
		if t.err != nil {
			return nil, t.err
		}
		pods = append(pods, p)
	}
}

// table reads a CSV file with a header row, by column name.
type table struct {
	r    *csv.Reader
	col  map[string]int
	row  []string
	line int
	err  error // the first error of the current row
}

func newTable(r io.Reader, required ...string) (*table, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%w: empty file, want a header row", ErrFormat)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	t := &table{r: cr, col: make(map[string]int, len(head)), line: 1}
	for i, name := range head {
		name = strings.TrimSpace(strings.TrimPrefix(name, "\ufeff"))
		if _, dup := t.col[name]; dup {
			return nil, fmt.Errorf("%w: line 1: column %q twice", ErrFormat, name)
		}
		t.col[name] = i
	}
	for _, name := range required {
		if _, ok := t.col[name]; !ok {
			return nil, fmt.Errorf("%w: line 1: no column %q", ErrFormat, name)
		}
	}
	return t, nil
}

// next reads the next row; false at the end of the file.
func (t *table) next() (bool, error) {
	row, err := t.r.Read()
	if err == io.EOF {
		return false, nil
	}
	t.line++
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	t.row, t.err = row, nil
	return true, nil
}

func (t *table) fail(format string, args ...any) {
	if t.err == nil {
		t.err = fmt.Errorf("%w: line %d: %s", ErrFormat, t.line, fmt.Sprintf(format, args...))
	}
}

// str returns the trimmed value of a column ("" when the column or the field
// is missing).
func (t *table) str(name string) string {
	i, ok := t.col[name]
	if !ok || i >= len(t.row) {
		return ""
	}
	return strings.TrimSpace(t.row[i])
}

// int parses a required integer column in [lo, hi].
func (t *table) int(name string, lo, hi int64) int64 {
	s := t.str(name)
	v, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil:
		t.fail("%s %q is not an integer", name, s)
	case v < lo || v > hi:
		t.fail("%s %d, want %d…%d", name, v, lo, hi)
	}
	return v
}

// optInt parses an optional non-negative integer column: false when it is
// missing or empty.
func (t *table) optInt(name string) (int64, bool) {
	if t.str(name) == "" {
		return 0, false
	}
	return t.int(name, 0, 1<<62), true
}
