package bench

import (
	"bytes"
	"fmt"
	"github.com/blinksched/blink/internal/testkit"
	"math"
	"testing"

	"github.com/blinksched/blink/topology"
)

// testSeed returns the seed of randomized tests: BLINK_SEED if set, else 1.
func testSeed(t *testing.T) uint64 { return testkit.Seed(t, 1) }

func TestFillLoads(t *testing.T) {
	seed := testSeed(t)
	for _, shape := range Shapes {
		tree, err := Cluster(shape, "16k")
		if err != nil {
			t.Fatal(err)
		}
		for _, load := range []float64{0, 0.1, 0.25, 0.5, 0.7, 0.9, 0.99, 1} {
			t.Run(fmt.Sprintf("shape=%s/load=%v", shape, load), func(t *testing.T) {
				s := topology.NewState(tree)
				st, err := Fill(s, load, seed)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Check(); err != nil {
					t.Fatal(err)
				}
				if math.Abs(st.Load-load) > 0.003 {
					t.Errorf("load %.4f, want %.2f ± 0.003 (%+v)", st.Load, load, st)
				}
				if st.Jobs != s.NumJobs() || st.Pods != s.NumPods() {
					t.Errorf("stats say %d jobs, %d pods; State has %d, %d", st.Jobs, st.Pods, s.NumJobs(), s.NumPods())
				}
				checkKinds(t, s, st)
			})
		}
	}
}

// checkKinds recounts the last-level domains by kind from the State.
func checkKinds(t *testing.T, s *topology.State, st FillStats) {
	t.Helper()
	tree := s.Tree()
	lo, hi := tree.LevelDomains(tree.HostLevel() - 1)
	var full, free, partial int
	for d := lo; d < hi; d++ {
		switch s.Free(d) {
		case 0:
			full++
		case tree.DomainGPUs(d):
			free++
		default:
			partial++
		}
	}
	// A planned partly used domain may end entirely free (a zero target) but
	// never entirely used (capped at 85%).
	if full != st.Full || partial > st.Partial || free < st.Free || full+partial+free != int(hi-lo) {
		t.Errorf("State has %d full, %d partial, %d free domains; Fill planned %d, %d, %d",
			full, partial, free, st.Full, st.Partial, st.Free)
	}
}

func TestFillDeterministic(t *testing.T) {
	seed := testSeed(t)
	tree, err := Cluster("hgx", "16k")
	if err != nil {
		t.Fatal(err)
	}
	snap := func(seed uint64) []byte {
		s := topology.NewState(tree)
		if _, err := Fill(s, 0.6, seed); err != nil {
			t.Fatal(err)
		}
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b, c := snap(seed), snap(seed), snap(seed+1)
	if !bytes.Equal(a, b) {
		t.Error("the same seed gave different States")
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds gave the same State")
	}
}

func TestFillJobs(t *testing.T) {
	tree, err := Cluster("nvl72", "16k")
	if err != nil {
		t.Fatal(err)
	}
	s := topology.NewState(tree)
	st, err := Fill(s, 0.7, testSeed(t))
	if err != nil {
		t.Fatal(err)
	}
	prios := map[int32]int{}
	pre, multi, frac := 0, 0, 0
	var pods []topology.Pod
	for id := range topology.JobID(st.Jobs) {
		info, ok := s.JobInfo(id)
		if !ok {
			t.Fatalf("job %d missing", id)
		}
		prios[info.Priority]++
		if info.Preemptible {
			pre++
		}
		pods = s.AppendJobPods(pods[:0], id)
		if len(pods) > 1 {
			multi++
			if info.Movable || info.Required == topology.NoLevel {
				t.Errorf("multi-host job %d: %+v, want unmovable with a required level", id, info)
			}
		}
		for _, p := range pods {
			if p.Milli > 0 {
				frac++
			}
		}
	}
	if len(prios) != 4 || prios[1] == 0 || prios[10] == 0 || prios[100] == 0 || prios[1000] == 0 {
		t.Errorf("priorities %v, want 4 classes", prios)
	}
	if pre*2 < st.Jobs {
		t.Errorf("%d of %d jobs preemptible, want most", pre, st.Jobs)
	}
	if multi == 0 || frac == 0 {
		t.Errorf("%d multi-host jobs, %d fractional pods: want some of each", multi, frac)
	}
}

func TestFillErrors(t *testing.T) {
	tree, err := Cluster("nvl72", "16k")
	if err != nil {
		t.Fatal(err)
	}
	for _, load := range []float64{-0.1, 1.1, math.NaN()} {
		if _, err := Fill(topology.NewState(tree), load, 1); err == nil {
			t.Errorf("Fill(load %v): no error", load)
		}
	}
	s := topology.NewState(tree)
	if _, err := Fill(s, 0.3, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := Fill(s, 0.3, 1); err == nil {
		t.Error("Fill of a loaded State: no error")
	}
	if _, err := Cluster("dgx", "1M"); err == nil {
		t.Error("Cluster(dgx): no error")
	}
	if _, err := Cluster("nvl72", "2M"); err == nil {
		t.Error("Cluster(nvl72, 2M): no error")
	}
}

// Small irregular trees: Fill still reaches its load when few domains exist.
func TestFillSmallTrees(t *testing.T) {
	seed := testSeed(t)
	for _, sh := range []topology.Shape{
		{Levels: nil, FanOut: []int{5}, GPUsPerHost: 8},
		{Levels: []string{"rack"}, FanOut: []int{1, 3}, GPUsPerHost: 8},
		{Levels: []string{"rack"}, FanOut: []int{3, 5}, GPUsPerHost: 6},
		{Levels: []string{"zone", "rack"}, FanOut: []int{2, 2, 4}, GPUsPerHost: 1},
	} {
		tree, err := topology.BuildShape(sh)
		if err != nil {
			t.Fatal(err)
		}
		for _, load := range []float64{0.2, 0.5, 0.8} {
			s := topology.NewState(tree)
			st, err := Fill(s, load, seed)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Check(); err != nil {
				t.Fatal(err)
			}
			if tol := 8.0 / float64(tree.NumGPUs()); st.Load > load+tol || st.Load < load-0.25 {
				t.Errorf("%v GPUs/host × %v, load %v: got %.3f", sh.GPUsPerHost, sh.FanOut, load, st.Load)
			}
		}
	}
}

func TestLoadedCached(t *testing.T) {
	a, sa, err := Loaded("nvl72", "16k", 0.5, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	b, sb, err := Loaded("nvl72", "16k", 0.5, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	if a != b || sa != sb {
		t.Error("Loaded built the same key twice")
	}
	if ta, _ := Cluster("nvl72", "16k"); a.Tree() != ta {
		t.Error("Loaded State is not on the cached Tree")
	}
}

func ExampleFill() {
	tree, err := Cluster("nvl72", "16k")
	if err != nil {
		panic(err)
	}
	s := topology.NewState(tree)
	st, err := Fill(s, 0.5, 1)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d GPUs, racks: %d full, %d partly used, %d free\n", tree.NumGPUs(), st.Full, st.Partial, st.Free)
	fmt.Printf("load %.3f\n", st.Load)
	// Output:
	// 18432 GPUs, racks: 77 full, 102 partly used, 77 free
	// load 0.500
}

// The figures Fill's doc comment quotes (1M NVL72 GPUs, seed 1).
func TestFillDocFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 1M GPUs")
	}
	tree, err := Cluster("nvl72", "1M")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		load        float64
		blocks, sus uint
	}{{0.25, 34, 1051}, {0.5, 10, 497}, {0.9, 2, 78}} {
		s := topology.NewState(tree)
		if _, err := Fill(s, c.load, 1); err != nil {
			t.Fatal(err)
		}
		blocks, sus := s.IdleDomains(1).Count(), s.IdleDomains(2).Count()
		if blocks != c.blocks || sus != c.sus {
			t.Errorf("load %v: %d free blocks, %d free SUs; the doc says %d, %d", c.load, blocks, sus, c.blocks, c.sus)
		}
	}
}
