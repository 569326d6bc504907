package testkit

import (
	"testing"

	"github.com/blinksched/blink/topology"
)

func TestPicture(t *testing.T) {
	tree, err := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{2, 2}, GPUsPerHost: 4})
	if err != nil {
		t.Fatal(err)
	}
	s := topology.NewState(tree)
	job := topology.Job{Required: topology.NoLevel, Preferred: topology.NoLevel}
	ops := []topology.Op{
		topology.AddJob(0, job, topology.Pod{Host: 0, GPUs: 0b0011}),
		topology.AddJob(27, job, topology.Pod{Host: 0, GPUs: 0b0100, Milli: 500}),
		topology.Nominate(topology.Nomination{Job: 3, Priority: 1, GPUs: []topology.GPUID{4, 5}}),
		topology.SetGPUHealth(7, topology.Failed),
		topology.SetHostHealth(2, topology.Draining),
		topology.SetHostHealth(3, topology.Failed),
	}
	if err := s.Apply(topology.Delta{Ops: ops}); err != nil {
		t.Fatal(err)
	}
	got := Picture{Mark: func(h topology.HostID) byte {
		if h == 1 {
			return 's'
		}
		return 0
	}}.Render(s)
	want := "rack0 |AAB.|**.xs|\nrack1 |~~~~|xxxx|\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
