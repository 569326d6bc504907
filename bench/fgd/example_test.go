package fgd_test

import (
	"fmt"
	"path/filepath"

	"github.com/blinksched/blink/bench/fgd"
	"github.com/blinksched/blink/bench/openb"
)

// ExampleMeasure runs the protocol on a 7-GPU test trace with the paper's
// two reproducible baselines over three seeds.
func ExampleMeasure() {
	c, shapes, err := fgd.Load(filepath.Join("testdata", "nodes.csv"), filepath.Join("testdata", "pods.csv"), openb.Flat)
	if err != nil {
		panic(err)
	}
	sums, err := fgd.Measure(c, shapes, []string{"bestfit", "random"}, []uint64{42, 43, 44}, nil)
	if err != nil {
		panic(err)
	}
	for _, s := range sums {
		fmt.Printf("%-8s allocation at 100%% arrived: %.2f%%, at 130%%: %.2f%%\n", s.Policy, s.Curve[100], s.Curve[130])
	}
	// Output:
	// bestfit  allocation at 100% arrived: 82.14%, at 130%: 90.48%
	// random   allocation at 100% arrived: 77.38%, at 130%: 88.10%
}
