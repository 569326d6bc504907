package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blinksched/blink/bench/openb"
	"github.com/blinksched/blink/placement"
)

func loadTest(t *testing.T) (*openb.Cluster, []openb.Node, []openb.Pod) {
	t.Helper()
	nodes, err := openb.LoadNodes(filepath.Join("testdata", "nodes.csv"))
	if err != nil {
		t.Fatal(err)
	}
	pods, err := openb.LoadPods(filepath.Join("testdata", "pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := openb.NewCluster(nodes, openb.Flat)
	if err != nil {
		t.Fatal(err)
	}
	return c, nodes, pods
}

// TestReplayScenario replays testdata/pods.csv on two 1-GPU nodes, where
// every step of the queueing rule can be checked by hand (see
// testdata/events.golden for the event order):
//
//	p1, p2 take both GPUs at 0; p3 (5) and p4 (6) wait; p4 gives up at 8;
//	p1 leaves at 10 and the retry places p3 (waited 5); p5 (half a GPU,
//	12) waits; p6 arrives and leaves at 15 while waiting; p2 leaves at 20
//	and p5 runs (waited 8); p7 (half) and p8 (CPU-only) fit at 25; p9 asks
//	for a model no node has and gives up at 27.
func TestReplayScenario(t *testing.T) {
	c, nodes, pods := loadTest(t)
	var log bytes.Buffer
	r, err := Run(c, pods, Config{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	got := renderEvents(t, log.Bytes())
	want, err := os.ReadFile(filepath.Join("testdata", "events.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(log.String(), fmt.Sprintf(`"job":"p9","code":%d`, placement.NoModel)) {
		t.Error("p9's wait does not say NoModel")
	}
	// Allocation over [0, 26]: 100% for 20 s, 75% for 5 s, 100% for 1 s.
	// Waiting: 1+2·2+1·2+1·3+1·5 pod-seconds. Fragmentation: 100% of the
	// free GPU (b's half) for 5 s; 0 while nothing is free.
	checks := []struct {
		name      string
		got, want float64
	}{
		{"AllocMean", r.AllocMean, 2475.0 / 26},
		{"AllocMax", r.AllocMax, 100},
		{"WaitingMean", r.WaitingMean, 15.0 / 26},
		{"FragMean", r.FragMean, 500.0 / 26},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if r.PlacedAtArrival != 4 || r.PlacedAfterWait != 2 || r.GaveUp != 3 || r.StillWaiting != 0 ||
		r.WaitingMax != 2 || !slices.Equal(r.Waits, []int64{5, 8}) || len(r.Latencies) != 10 ||
		r.Start != 0 || r.LastArrival != 26 || r.End != 50 || r.FragGPUs != 1 || r.FragMilli != 0 {
		t.Errorf("result %+v", r)
	}
	if n := len(r.Series.T); n != 14 || r.Series.T[n-1] != 50 || r.Series.Alloc[n-1] != 0 {
		t.Errorf("series %+v", r.Series)
	}
	check(t, nodes, pods, log.Bytes(), r)
}

// renderEvents prints the log one event per line, without hosts.
func renderEvents(t *testing.T, log []byte) string {
	var b strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(log))
	for sc.Scan() {
		var e LogEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%d %s", e.T, e.Kind)
		if e.Job != "" {
			fmt.Fprintf(&b, " %s", e.Job)
		}
		if e.Waited != nil {
			fmt.Fprintf(&b, " waited %d", *e.Waited)
		}
		if e.Waiting != nil {
			fmt.Fprintf(&b, " waiting %d", *e.Waiting)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestReplayRandom replays random traces on a small mixed cluster and
// re-checks every decision of the log with the independent model of
// check. The seed is logged; set REPLAY_SEED to replay one.
func TestReplayRandom(t *testing.T) {
	seed := uint64(rand.Int64())
	if s := os.Getenv("REPLAY_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("REPLAY_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	nodes := []openb.Node{
		{Name: "g8", CPUMilli: 32000, MemoryMiB: 131072, GPUs: 8, Model: "G2"},
		{Name: "t4a", CPUMilli: 16000, MemoryMiB: 65536, GPUs: 2, Model: "T4"},
		{Name: "t4b", CPUMilli: 16000, MemoryMiB: 65536, GPUs: 2, Model: "T4"},
		{Name: "v1", CPUMilli: 8000, MemoryMiB: 32768, GPUs: 1, Model: "V100"},
		{Name: "cpu", CPUMilli: 64000, MemoryMiB: 262144},
	}
	c, err := openb.NewCluster(nodes, openb.Flat)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 30 {
		pods := make([]openb.Pod, 40+rng.IntN(40))
		for i := range pods {
			p := &pods[i]
			p.Name = fmt.Sprintf("r%d", i)
			p.CPUMilli, p.MemoryMiB = int64(rng.IntN(8))*1000, int64(rng.IntN(16))*2048
			switch rng.IntN(6) {
			case 0:
				p.NumGPU = 0
			case 1, 2:
				p.NumGPU, p.GPUMilli = 1, 100*(1+rng.IntN(9))
			case 3:
				p.NumGPU, p.GPUMilli = []int{2, 4, 8}[rng.IntN(3)], 1000
			default:
				p.NumGPU, p.GPUMilli = 1, 1000
			}
			if p.NumGPU > 0 && rng.IntN(8) == 0 {
				p.Models = [][]string{{"T4"}, {"V100", "G2"}, {"A100"}}[rng.IntN(3)]
			}
			p.Creation = int64(rng.IntN(100))
			if rng.IntN(10) > 0 {
				p.Deletion, p.HasDeletion = p.Creation+int64(rng.IntN(60)), true
			}
		}
		var log bytes.Buffer
		r, err := Run(c, pods, Config{Log: &log})
		if err != nil {
			t.Fatal(err)
		}
		if r.PlacedAtArrival+r.PlacedAfterWait+r.GaveUp+r.StillWaiting != len(pods) {
			t.Fatalf("round %d: %d+%d+%d+%d pods of %d", round, r.PlacedAtArrival, r.PlacedAfterWait, r.GaveUp,
				r.StillWaiting, len(pods))
		}
		check(t, nodes, pods, log.Bytes(), r)
	}
}

// check re-checks a replay log against an independent model of the
// cluster (per node: free CPU, memory and milli per GPU): every placement
// fits and matches its request, every wait is a true no-fit, every pod
// still waiting after a retry pass does not fit, a pass places pods in
// queue order, pods leave and give up at their deletion times, and the
// time-weighted allocation recomputed from the log equals r.AllocMean.
func check(t *testing.T, nodes []openb.Node, pods []openb.Pod, log []byte, r *Result) {
	t.Helper()
	type node struct {
		cpu, mem int64
		milli    []int64
		model    string
	}
	ns := map[string]*node{}
	var order []*node
	for _, n := range nodes {
		x := &node{cpu: n.CPUMilli, mem: n.MemoryMiB, milli: make([]int64, n.GPUs), model: n.Model}
		for g := range x.milli {
			x.milli[g] = 1000
		}
		ns[n.Name] = x
		order = append(order, x)
	}
	byName := map[string]*openb.Pod{}
	for i := range pods {
		byName[pods[i].Name] = &pods[i]
	}
	type job struct {
		req     LogRequest
		arrived int64
		state   string // "waiting", "running", "done"
		pods    []LogPod
	}
	jobs := map[string]*job{}
	fitsOn := func(n *node, q LogRequest) bool {
		if n.cpu < int64(q.CPUMilli) || n.mem < int64(q.MemoryMiB) {
			return false
		}
		if q.GPUs == 0 {
			return true
		}
		if len(q.Models) > 0 && !slices.Contains(q.Models, n.model) {
			return false
		}
		need, free := int64(1000), 0
		if q.Milli > 0 {
			need = int64(q.Milli)
		}
		for _, m := range n.milli {
			if m >= need {
				free++
			}
		}
		return q.Milli > 0 && free > 0 || q.Milli == 0 && free >= int(q.GPUs)
	}
	fitsAnywhere := func(q LogRequest) bool {
		for _, n := range order {
			if fitsOn(n, q) {
				return true
			}
		}
		return false
	}
	var queue []string
	var alloc, integral int64
	last := r.Start
	inPass, passPos := false, -1
	endPass := func(at string) {
		if !inPass {
			return
		}
		inPass = false
		for _, name := range queue {
			if fitsAnywhere(jobs[name].req) {
				t.Fatalf("%s: %s still waits after the retry pass but fits", at, name)
			}
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(log))
	for line := 1; sc.Scan(); line++ {
		var e LogEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		at := fmt.Sprintf("line %d (%s)", line, sc.Text())
		if e.T < last {
			t.Fatalf("%s: time goes back", at)
		}
		seg := min(e.T, r.LastArrival)
		if seg > last {
			integral += alloc * (seg - last)
			last = seg
		}
		if e.Kind != KindPlace {
			endPass(at)
		}
		j := jobs[e.Job]
		switch e.Kind {
		case KindArrive:
			if j != nil || byName[e.Job] == nil || byName[e.Job].Creation != e.T {
				t.Fatalf("%s: unexpected arrival", at)
			}
			jobs[e.Job] = &job{req: *e.Request, arrived: e.T}
		case KindPlace:
			if j == nil || j.state == "running" || j.state == "done" || len(e.Pods) != 1 || *e.Waited != e.T-j.arrived {
				t.Fatalf("%s: unexpected placement", at)
			}
			if j.state == "waiting" { // placed by a retry pass: in queue order
				i := slices.Index(queue, e.Job)
				if !inPass || i < passPos {
					t.Fatalf("%s: placed out of a pass or out of queue order", at)
				}
				passPos = i
				queue = slices.Delete(queue, i, i+1)
			}
			p, n := e.Pods[0], ns[e.Pods[0].Host]
			if n == nil || !fitsOn(n, j.req) || p.CPUMilli != j.req.CPUMilli || p.MemoryMiB != j.req.MemoryMiB ||
				p.Milli != j.req.Milli || p.Milli > 0 && (len(p.GPUs) != 1 || j.req.GPUs != 1) ||
				p.Milli == 0 && len(p.GPUs) != int(j.req.GPUs) {
				t.Fatalf("%s: does not fit or does not match the request %+v", at, j.req)
			}
			n.cpu -= int64(p.CPUMilli)
			n.mem -= int64(p.MemoryMiB)
			for _, g := range p.GPUs {
				take := int64(1000)
				if p.Milli > 0 {
					take = int64(p.Milli)
				}
				if g < 0 || g >= len(n.milli) || n.milli[g] < take {
					t.Fatalf("%s: GPU %d is not free enough", at, g)
				}
				n.milli[g] -= take
				alloc += take
			}
			j.state, j.pods = "running", e.Pods
		case KindWait:
			if j == nil || j.state != "" || e.T != j.arrived || fitsAnywhere(j.req) {
				t.Fatalf("%s: waits, but it fits or did not just arrive", at)
			}
			j.state = "waiting"
			queue = append(queue, e.Job)
			if *e.Waiting != len(queue) {
				t.Fatalf("%s: queue length %d", at, len(queue))
			}
		case KindRetry:
			if *e.Waiting != len(queue) || len(queue) == 0 {
				t.Fatalf("%s: queue length %d", at, len(queue))
			}
			inPass, passPos = true, 0
		case KindLeave:
			if j == nil || j.state != "running" || byName[e.Job].Deletion != e.T {
				t.Fatalf("%s: unexpected departure", at)
			}
			for _, p := range j.pods {
				n := ns[p.Host]
				n.cpu += int64(p.CPUMilli)
				n.mem += int64(p.MemoryMiB)
				for _, g := range p.GPUs {
					give := int64(1000)
					if p.Milli > 0 {
						give = int64(p.Milli)
					}
					n.milli[g] += give
					alloc -= give
				}
			}
			j.state = "done"
		case KindGiveUp:
			if j == nil || j.state != "waiting" || byName[e.Job].Deletion != e.T || *e.Waited != e.T-j.arrived {
				t.Fatalf("%s: unexpected give-up", at)
			}
			queue = slices.DeleteFunc(queue, func(q string) bool { return q == e.Job })
			j.state = "done"
		default:
			t.Fatalf("%s: unknown kind", at)
		}
	}
	endPass("end")
	if len(queue) != r.StillWaiting {
		t.Errorf("%d pods waiting at the end, result says %d", len(queue), r.StillWaiting)
	}
	if span := r.LastArrival - r.Start; span > 0 {
		got := float64(integral) * 100 / float64(span) / float64(1000*r.GPUs)
		if math.Abs(got-r.AllocMean) > 1e-9 {
			t.Errorf("time-weighted allocation from the log %v, result %v", got, r.AllocMean)
		}
	}
}

func TestPercentile(t *testing.T) {
	v := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for p, want := range map[float64]int64{0: 1, 10: 1, 50: 5, 51: 6, 99: 10, 100: 10} {
		if got := Percentile(v, p); got != want {
			t.Errorf("p%v = %d, want %d", p, got, want)
		}
	}
	if Percentile([]time.Duration(nil), 50) != 0 {
		t.Error("empty")
	}
}

// TestReplayOpenb replays the openb trace (BLINK_OPENB; skipped without it)
// compressed 50,000 times, so that pods queue, and re-checks every decision
// of its log with check.
func TestReplayOpenb(t *testing.T) {
	dir := os.Getenv("BLINK_OPENB")
	if dir == "" {
		t.Skip("BLINK_OPENB is not set")
	}
	nodes, err := openb.LoadNodes(filepath.Join(dir, "openb_node_list_gpu_node.csv"))
	if err != nil {
		t.Fatal(err)
	}
	pods, err := openb.LoadPods(filepath.Join(dir, "openb_pod_list_default.csv"))
	if err != nil {
		t.Fatal(err)
	}
	Compress(pods, 50000)
	c, err := openb.NewCluster(nodes, openb.Flat)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	r, err := Run(c, pods, Config{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if r.PlacedAfterWait == 0 || r.WaitingMax == 0 {
		t.Errorf("no pod waited: the check exercised no queueing (%+v)", r)
	}
	check(t, nodes, pods, log.Bytes(), r)
}
