// Hero: a 1M-GPU GB200 NVL72 cluster (109 blocks × 16 SUs × 8 racks × 18
// hosts × 4 GPUs), two spare hosts per rack, a 200,000-GPU training job placed
// with block preference, a rack-bound inference gang, and then a host failure
// under each, repaired from spares — with the wall-clock time of every step.
// The inference gang requires its rack, so its replacement is a spare of that
// rack; the training job requires no level, so any spare will do.
//
//	go run ./examples/hero
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

func main() {
	if err := run(os.Stdout, 109); err != nil {
		fmt.Fprintln(os.Stderr, "hero:", err)
		os.Exit(1)
	}
}

// step times f and prints what it says, with the time it took.
func step(w io.Writer, what string, f func() (string, error)) error {
	start := time.Now()
	msg, err := f()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	fmt.Fprintf(w, "%-44s %10v  %s\n", what, time.Since(start).Round(time.Microsecond), msg)
	return nil
}

func run(w io.Writer, blocks int) error {
	var (
		tree       *topology.Tree
		e          *blink.Engine
		block, rak topology.Level
		train, inf blink.JobID
		trainPods  []topology.Pod
		infPods    []topology.Pod
	)
	steps := []struct {
		what string
		f    func() (string, error)
	}{
		{"build the cluster", func() (string, error) {
			var err error
			tree, err = topology.BuildShape(topology.NVL72(blocks))
			if err != nil {
				return "", err
			}
			block, _ = tree.LevelByName("block")
			rak, _ = tree.LevelByName("rack")
			return fmt.Sprintf("%d GPUs, %d hosts", tree.NumGPUs(), tree.NumHosts()), nil
		}},
		{"start the engine, 2 spares per rack", func() (string, error) {
			var err error
			e, err = blink.New(topology.NewState(tree), blink.Config{Spares: []blink.SparePolicy{{Level: rak, Hosts: 2}}})
			return fmt.Sprintf("%d racks", tree.NumHosts()/18), err
		}},
		{"submit: 200,000 GPUs, prefer one block", func() (string, error) {
			var err error
			train, err = e.Submit(0, blink.JobSpec{Sets: []placement.PodSet{{Pods: 50000, GPUs: 4}}, Preferred: block, Priority: 100})
			if err != nil {
				return "", err
			}
			inf, err = e.Submit(0, blink.JobSpec{Sets: []placement.PodSet{{Pods: 16, GPUs: 4}}, Required: rak, Priority: 90})
			return "and 64 GPUs of inference, one rack", err
		}},
		{"cycle: place both", func() (string, error) {
			d := e.Cycle(1)
			if len(d.Binds) != 2 {
				return "", fmt.Errorf("%d binds, pending %v", len(d.Binds), d.Pending)
			}
			trainPods = append(trainPods, d.Binds[0].Pods...)
			infPods = append(infPods, d.Binds[1].Pods...)
			return fmt.Sprintf("training over %d blocks (%s…), inference in %s",
				countDomains(tree, trainPods, block), tree.DomainPath(tree.HostDomain(trainPods[0].Host, block)),
				tree.DomainPath(tree.HostDomain(infPods[0].Host, rak))), nil
		}},
		{"report both bound", func() (string, error) {
			if err := e.Bound(train); err != nil {
				return "", err
			}
			return "", e.Bound(inf)
		}},
		{"fail a host under each job", func() (string, error) {
			if err := e.HostFailed(trainPods[12345].Host); err != nil {
				return "", err
			}
			h := infPods[3].Host
			return fmt.Sprintf("%s and %s", tree.HostName(trainPods[12345].Host), tree.HostName(h)), e.HostFailed(h)
		}},
		{"cycle: repair", func() (string, error) {
			d := e.Cycle(2)
			var msg []string
			for _, r := range d.Repairs {
				if r.Requeued {
					return "", fmt.Errorf("job %v requeued", r.Job)
				}
				for _, rank := range r.Ranks { // the replaced pods; Pods is the job's whole new list
					msg = append(msg, fmt.Sprintf("%s rank %d → %s (%v)", jobName(r.Job, train), rank, tree.HostName(r.Pods[rank].Host), r.Source))
				}
			}
			return strings.Join(msg, "; "), nil
		}},
		{"check every invariant", func() (string, error) { return "engine and State consistent", e.Check() }},
	}
	for _, s := range steps {
		if err := step(w, s.what, s.f); err != nil {
			return err
		}
	}
	return nil
}

func jobName(id, train blink.JobID) string {
	if id == train {
		return "training"
	}
	return "inference"
}

// countDomains counts the domains of level l that pods touch.
func countDomains(t *topology.Tree, pods []topology.Pod, l topology.Level) int {
	n, last := 0, topology.DomainID(-1)
	for _, p := range pods {
		if d := t.HostDomain(p.Host, l); d != last {
			n, last = n+1, d
		}
	}
	return n
}
