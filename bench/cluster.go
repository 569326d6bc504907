package bench

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/blinksched/blink/topology"
)

// Sizes are the nominal cluster sizes of the benchmark grid, smallest first.
// The last, 8M, runs only when Full() is true.
var Sizes = []string{"16k", "131k", "1M", "8M"}

// Shapes are the cluster shapes of the benchmark grid.
var Shapes = []string{"nvl72", "hgx"}

// DefaultSeed is the seed benchmarks fill clusters with.
const DefaultSeed uint64 = 1

// FullEnv is the environment variable that enables the 8M-GPU benchmarks.
const FullEnv = "BLINK_BENCH_FULL"

// Full reports whether BLINK_BENCH_FULL=1: run the whole grid, 8M included.
func Full() bool { return os.Getenv(FullEnv) == "1" }

// SkipUnlessFull skips tb at size 8M unless Full().
func SkipUnlessFull(tb testing.TB, gpus string) {
	tb.Helper()
	if gpus == "8M" && !Full() {
		tb.Skipf("gpus=8M runs only with %s=1", FullEnv)
	}
}

// units per size: NVL72 blocks of 9,216 GPUs, HGX pods of 4,096 GPUs.
var sizeUnits = map[string][2]int{
	"16k":  {2, 4},
	"131k": {14, 32},
	"1M":   {109, 256},
	"8M":   {868, 2048},
}

// Shape returns the topology.Shape of a grid cluster: shape "nvl72" or "hgx",
// gpus one of Sizes.
func Shape(shape, gpus string) (topology.Shape, error) {
	u, ok := sizeUnits[gpus]
	if !ok {
		return topology.Shape{}, fmt.Errorf("bench: unknown size %q (want one of %v)", gpus, Sizes)
	}
	switch shape {
	case "nvl72":
		return topology.NVL72(u[0]), nil
	case "hgx":
		return topology.HGX(u[1]), nil
	}
	return topology.Shape{}, fmt.Errorf("bench: unknown shape %q (want one of %v)", shape, Shapes)
}

type clusterKey struct{ shape, gpus string }

type stateKey struct {
	clusterKey
	load float64
	seed uint64
}

type loaded struct {
	s     *topology.State
	stats FillStats
}

var cache struct {
	sync.Mutex
	trees  map[clusterKey]*topology.Tree
	states map[stateKey]loaded
}

// Cluster returns the Tree of a grid cluster (see Shape), built on first use
// and shared for the rest of the process. Trees are immutable.
func Cluster(shape, gpus string) (*topology.Tree, error) {
	cache.Lock()
	defer cache.Unlock()
	return clusterLocked(clusterKey{shape, gpus})
}

func clusterLocked(k clusterKey) (*topology.Tree, error) {
	if t, ok := cache.trees[k]; ok {
		return t, nil
	}
	sh, err := Shape(k.shape, k.gpus)
	if err != nil {
		return nil, err
	}
	t, err := topology.BuildShape(sh)
	if err != nil {
		return nil, fmt.Errorf("bench: %s/%s: %w", k.shape, k.gpus, err)
	}
	if cache.trees == nil {
		cache.trees = map[clusterKey]*topology.Tree{}
	}
	cache.trees[k] = t
	return t, nil
}

// Loaded returns a State of the grid cluster filled by Fill(load, seed),
// built on first use and shared for the rest of the process: treat it as
// read-only, and Clone it before applying anything.
func Loaded(shape, gpus string, load float64, seed uint64) (*topology.State, FillStats, error) {
	cache.Lock()
	defer cache.Unlock()
	k := stateKey{clusterKey{shape, gpus}, load, seed}
	if l, ok := cache.states[k]; ok {
		return l.s, l.stats, nil
	}
	t, err := clusterLocked(k.clusterKey)
	if err != nil {
		return nil, FillStats{}, err
	}
	s := topology.NewState(t)
	st, err := Fill(s, load, seed)
	if err != nil {
		return nil, FillStats{}, fmt.Errorf("bench: %s/%s: %w", shape, gpus, err)
	}
	if cache.states == nil {
		cache.states = map[stateKey]loaded{}
	}
	cache.states[k] = loaded{s, st}
	return s, st, nil
}
