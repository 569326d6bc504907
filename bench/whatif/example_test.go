package whatif_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/blinksched/blink/bench/whatif"
)

// A scenario in, an answer out: two racks, a running job on h0, and a
// request for two 4-GPU pods inside one rack.
func ExampleRun() {
	sc, err := whatif.Decode(strings.NewReader(`{
	  "levels": ["rack"],
	  "hosts": [{"name": "h0", "path": ["r0"], "gpus": 8, "model": "H100"},
	            {"name": "h1", "path": ["r1"], "gpus": 8, "model": "H100"}],
	  "jobs": [{"name": "train", "pods": [{"host": "h0", "gpus": [0, 1, 2, 3, 4, 5]}]}],
	  "request": {"name": "eval", "pods": 2, "gpus": 4, "requiredLevel": "rack"},
	  "mode": "place"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := whatif.Run(sc)
	if err != nil {
		fmt.Println(err)
		return
	}
	a.Encode(os.Stdout)
	// Output:
	// {
	//   "fits": true,
	//   "pods": [
	//     {"host":"h1","gpus":[0,1,2,3],"milli":0},
	//     {"host":"h1","gpus":[4,5,6,7],"milli":0}
	//   ],
	//   "victims": [],
	//   "moves": [],
	//   "reason": "",
	//   "exact": true
	// }
}

// Command is the whole `blink whatif` subcommand: a request that cannot fit
// is an answer (exit 0), a broken scenario an error (exit 2).
func ExampleCommand() {
	scenario := `{"hosts": [{"name": "h0", "gpus": 8}],
	  "request": {"pods": 1, "gpus": 16}, "mode": "place"}`
	code := whatif.Command(nil, strings.NewReader(scenario), os.Stdout, os.Stdout)
	fmt.Println("exit", code)

	broken := `{"hosts": [{"name": "h0", "gpus": 8}],
	  "jobs": [{"name": "j", "pods": [{"host": "h0", "gpus": [8]}]}],
	  "request": {"pods": 1, "gpus": 1}, "mode": "place"}`
	code = whatif.Command(nil, strings.NewReader(broken), os.Stdout, os.Stdout)
	fmt.Println("exit", code)
	// Output:
	// {
	//   "fits": false,
	//   "pods": [],
	//   "victims": [],
	//   "moves": [],
	//   "reason": "pod set 0: a pod needs 16 GPUs, the largest acceptable host has 8",
	//   "exact": true
	// }
	// exit 0
	// blink whatif: invalid scenario: jobs[0] ("j"): pod 0: GPU index 8 out of range: host "h0" has 8 GPUs (0…7)
	// exit 2
}
