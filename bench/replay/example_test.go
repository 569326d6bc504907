package replay_test

import (
	"fmt"
	"path/filepath"

	"github.com/blinksched/blink/bench/openb"
	"github.com/blinksched/blink/bench/replay"
)

// ExampleRun replays a 9-pod test trace on two 1-GPU nodes: pods wait when
// both GPUs are taken and run when one frees.
func ExampleRun() {
	nodes, err := openb.LoadNodes(filepath.Join("testdata", "nodes.csv"))
	if err != nil {
		panic(err)
	}
	pods, err := openb.LoadPods(filepath.Join("testdata", "pods.csv"))
	if err != nil {
		panic(err)
	}
	c, err := openb.NewCluster(nodes, openb.Flat)
	if err != nil {
		panic(err)
	}
	r, err := replay.Run(c, pods, replay.Config{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("placed %d at arrival, %d after waiting (waits %v s), %d gave up\n",
		r.PlacedAtArrival, r.PlacedAfterWait, r.Waits, r.GaveUp)
	fmt.Printf("allocation %.2f%% time-weighted, peak %d waiting\n", r.AllocMean, r.WaitingMax)
	// Output:
	// placed 4 at arrival, 2 after waiting (waits [5 8] s), 3 gave up
	// allocation 95.19% time-weighted, peak 2 waiting
}
