package blink_test

import (
	"fmt"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/internal/testkit"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// The embedder's loop: submit, cycle, act on the decisions, report back.
func Example() {
	tree, _ := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{2, 4}, GPUsPerHost: 4})
	rack, _ := tree.LevelByName("rack")
	e, _ := blink.New(topology.NewState(tree), blink.Config{})

	// 1. Submit: a training gang of three whole hosts in one rack, and a
	//    small inference job.
	train, _ := e.Submit(0, blink.JobSpec{Sets: []placement.PodSet{{Pods: 3, GPUs: 4}}, Required: rack, Priority: 10})
	infer, _ := e.Submit(0, blink.JobSpec{Sets: []placement.PodSet{{Pods: 1, GPUs: 1}}, Priority: 5})

	// 2. Cycle: the decisions are already recorded as assumed binds.
	d := e.Cycle(1)
	for _, b := range d.Binds {
		where := tree.DomainPath(b.Domain) // the root's path is ""
		if where == "" {
			where = "the cluster"
		}
		fmt.Printf("bind job %v: %d pods in %s\n", b.Job, len(b.Pods), where)
	}

	// 3. Act, then report: both binds succeeded; later the inference job ends.
	_ = e.Bound(train)
	_ = e.Bound(infer)
	_ = e.Finished(infer)
	st, _ := e.Status(train)
	fmt.Println("train is", st)
	fmt.Print(testkit.Picture{}.Render(e.State()))

	// A report that does not match is an error and changes nothing.
	fmt.Println(e.Finished(infer))
	// Output:
	// bind job 0: 3 pods in rack0
	// bind job 1: 1 pods in the cluster
	// train is running
	// rack0 |AAAA|AAAA|AAAA|....|
	// rack1 |....|....|....|....|
	// blink: unknown: job 1
}

// A host fails under a running gang: the next cycle repairs it in place
// from a spare host of the same rack, evicting the filler running there.
func ExampleEngine_HostFailed() {
	tree, _ := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{1, 4}, GPUsPerHost: 4})
	rack, _ := tree.LevelByName("rack")
	e, _ := blink.New(topology.NewState(tree), blink.Config{Spares: []blink.SparePolicy{{Level: rack, Hosts: 1}}})
	gang, _ := e.Submit(0, blink.JobSpec{Sets: []placement.PodSet{{Pods: 3, GPUs: 4}}, Required: rack, Priority: 10})
	filler, _ := e.Submit(0, blink.JobSpec{Sets: []placement.PodSet{{Pods: 1, GPUs: 4}}, Preemptible: true})
	e.Cycle(0)
	_, _ = e.Bound(gang), e.Bound(filler)
	fmt.Print(testkit.Picture{}.Render(e.State()))

	_ = e.HostFailed(1)
	d := e.Cycle(1)
	r := d.Repairs[0]
	fmt.Printf("repair job %v from %v: ranks %v now on hosts %d %d %d, evict %v\n",
		r.Job, r.Source, r.Ranks, r.Pods[0].Host, r.Pods[1].Host, r.Pods[2].Host, r.Victims)
	fmt.Print(testkit.Picture{}.Render(e.State()))
	// Output:
	// rack0 |AAAA|AAAA|AAAA|BBBB|
	// repair job 0 from spare: ranks [1] now on hosts 0 3 2, evict [1]
	// rack0 |AAAA|xxxx|AAAA|AAAA|
}

// Jobs that do not fit say why, with a small value formatted on demand.
func ExampleReason() {
	tree, _ := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{2, 2}, GPUsPerHost: 4})
	rack, _ := tree.LevelByName("rack")
	e, _ := blink.New(topology.NewState(tree), blink.Config{})
	e.Submit(0, blink.JobSpec{Sets: []placement.PodSet{{Pods: 3, GPUs: 4}}, Required: rack})
	d := e.Cycle(0)
	fmt.Println(d.Pending[0].Reason.Format(tree))
	// Output:
	// never fits: required rack: the largest rack has 8 healthy GPUs it may use, the job needs 12
}

// Sizing a spare pool: 18-host racks whose hosts fail with probability 1%
// over a repair window; two spares absorb a rack's failures 99.9% of the time.
func ExampleSparePool() {
	n, _ := blink.SparePool(18, 0.01, 0.999)
	fmt.Println(n, "spares per rack")
	fmt.Printf("P(absorbed) = %.4f\n", blink.AbsorbProbability(18, n, 0.01))
	// Output:
	// 2 spares per rack
	// P(absorbed) = 0.9993
}
