package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/blinksched/blink/bench/fgd"
	"github.com/blinksched/blink/bench/openb"
)

// OpenbEnv names the environment variable holding the folder of the openb
// trace (openb_node_list_gpu_node.csv, openb_pod_list_default.csv); .ci/run
// sets it when ../shared/traces/openb exists.
const OpenbEnv = "BLINK_OPENB"

// BenchmarkFGD times the FGD paper's protocol on the openb trace (bench/fgd):
// one op is one seed's run, about 10,800 pods placed one at a time on the
// 1,213 GPU nodes from empty, for Blink's placement and the two reproduced
// baselines. The workload (seed 42) is drawn before the timer; each op
// resets the cluster. Reports pods/s over the placement loop and the GPU
// allocation (%) at 100% and 130% arrived of the checked first run. Skips
// without BLINK_OPENB.
func BenchmarkFGD(b *testing.B) {
	dir := os.Getenv(OpenbEnv)
	if dir == "" {
		b.Skipf("%s is not set (the folder of the openb trace)", OpenbEnv)
	}
	if _, err := os.Stat(dir); err != nil && !filepath.IsAbs(dir) {
		dir = filepath.Join("..", dir) // relative to the repository root, as .ci/run and README give it
	}
	c, shapes, err := fgd.Load(filepath.Join(dir, "openb_node_list_gpu_node.csv"),
		filepath.Join(dir, "openb_pod_list_default.csv"), openb.Flat)
	if err != nil {
		b.Fatal(err)
	}
	const seed = 42
	work, err := fgd.Draw(shapes, c.CapacityMilli(), seed)
	if err != nil {
		b.Fatal(err)
	}
	for _, policy := range fgd.Policies {
		b.Run("policy="+policy, func(b *testing.B) {
			p, err := fgd.NewPlacer(policy, c, shapes)
			if err != nil {
				b.Fatal(err)
			}
			p.Reset(seed)
			first, err := fgd.Run(p, shapes, work, c.CapacityMilli())
			if err != nil {
				b.Fatal(err)
			}
			var pods, ns float64
			b.ReportAllocs()
			for b.Loop() {
				p.Reset(seed)
				r, err := fgd.Run(p, shapes, work, c.CapacityMilli())
				if err != nil || r.Curve != first.Curve {
					b.Fatalf("run differs from the first (%v)", err)
				}
				pods += float64(r.Pods)
				ns += float64(r.Elapsed.Nanoseconds())
			}
			b.ReportMetric(pods/ns*1e9, "pods/s")
			b.ReportMetric(first.Curve[100], "alloc100%")
			b.ReportMetric(first.Curve[130], "alloc130%")
		})
	}
}
