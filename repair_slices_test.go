package blink_test

import (
	"slices"
	"testing"

	"github.com/blinksched/blink"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// slicedLayout builds two racks of three 4-GPU hosts: a rack gang A on
// hosts 0 and 1, a one-pod filler B of 2 GPUs on host 2, and C, four pods
// of 2 GPUs in slices of two per rack, on hosts 3 (ranks 0 and 1) and 4
// (ranks 2 and 3); host 5 is free. Host 2, half free, is the tightest fit
// for one pod of C, and in the wrong rack for any of C's slices.
func slicedLayout(t *testing.T, cfg blink.Config) (*harness, blink.JobID, blink.JobID) {
	h := newHarness(t, racks(2, 3, 4), cfg)
	h.submit(0, h.rackGang(2, 5))
	B := h.submit(0, filler(1, 2, 1))
	h.confirmAll(h.cycle(0))
	C := h.submit(0, blink.JobSpec{Sets: []placement.PodSet{{Pods: 4, GPUs: 2, SliceSize: 2, SliceLevel: h.level("rack")}}, Priority: 10})
	h.confirmAll(h.cycle(1))
	return h, B, C
}

// wantSlices fails unless job id's pods keep its slices of two per rack.
func (h *harness) wantSlices(id blink.JobID) {
	h.t.Helper()
	pods := h.e.State().AppendJobPods(nil, id.Slot())
	rack := h.level("rack")
	for i := 0; i+1 < len(pods); i += 2 {
		if a, b := tDomain(h.tree, pods[i].Host, rack), tDomain(h.tree, pods[i+1].Host, rack); a != b {
			h.t.Fatalf("slice %d of job %v spans racks %d and %d: %+v", i/2, id, a, b, pods)
		}
	}
}

func TestRepairKeepsSliceWithItsSurvivor(t *testing.T) {
	h, _, C := slicedLayout(t, blink.Config{})
	h.wantPic(`
		rack0 |AAAA|AAAA|BB..|
		rack1 |CCCC|CCCC|....|
	`)
	h.ok(h.e.GPUFailed(12)) // host 3's first GPU: rank 0 only; rank 1 stays in rack1
	r := oneRepair(t, h.cycle(2))
	if r.Job != C || r.Source != blink.FromFree || r.Pods[0].Host != 5 {
		t.Fatalf("repair %+v, want rank 0 on host 5, beside its slice", r)
	}
	h.wantSlices(C)
	h.check()
}

func TestRepairMovesWholeFaultedSliceTogether(t *testing.T) {
	h, _, C := slicedLayout(t, blink.Config{})
	h.ok(h.e.HostFailed(3)) // ranks 0 and 1: slice 0 faulted whole
	r := oneRepair(t, h.cycle(2))
	if r.Job != C || r.Source != blink.FromFree || r.Pods[0].Host != 5 || r.Pods[1].Host != 5 {
		t.Fatalf("repair %+v, want slice 0 on host 5", r)
	}
	h.wantPic(`
		rack0 |AAAA|AAAA|BB..|
		rack1 |xxxx|CCCC|CCCC|
	`)
	h.wantSlices(C)
}

func TestRepairSliceRequeuedWhenItsRackIsFull(t *testing.T) {
	h, _, C := slicedLayout(t, blink.Config{})
	h.submit(2, gang(1, 4, 20)) // D takes host 5, rack1's last room
	h.confirmAll(h.cycle(2))
	h.wantPic(`
		rack0 |AAAA|AAAA|BB..|
		rack1 |CCCC|CCCC|DDDD|
	`)
	h.ok(h.e.GPUFailed(12))
	d := h.cycle(3)
	if r := d.Repairs[0]; r.Job != C || !r.Requeued {
		t.Fatalf("repair %+v: rank 0 has no room beside rank 1 (host 2 is in rack0)", r)
	}
	h.wantSlices(C)
	h.check()
}

func TestRepairSliceFromSpareOfItsRack(t *testing.T) {
	h, B, C := slicedLayout(t, blink.Config{Spares: []blink.SparePolicy{{Level: 1, Hosts: 1}}})
	h.wantPic(`
		rack0 |AAAA|AAAA|BB..s|
		rack1 |CCCC|CCCC|....s|
	`)
	h.ok(h.e.GPUFailed(12))
	r := oneRepair(t, h.cycle(2))
	if r.Source != blink.FromSpare || r.Pods[0].Host != 5 || len(r.Victims) != 0 {
		t.Fatalf("repair %+v, want rank 0 on rack1's spare, B (%v) left alone", r, B)
	}
	h.wantSlices(C)
	h.check()
}

// wantKeepsDomains fails unless every job in the State keeps its required
// domain and the slices of its pod sets (binds, repairs and moves alike); the
// random loops and FuzzEngine call it after every event.
func wantKeepsDomains(t testing.TB, step int, s *topology.State) {
	t.Helper()
	for id := range s.JobIDBound() {
		if !keepsRequired(s, id) {
			info, _ := s.JobInfo(id)
			t.Fatalf("step %d: job %d leaves its required %s: pods %+v",
				step, id, s.Tree().LevelName(info.Required), s.AppendJobPods(nil, id))
		}
		if si, ok := keepsSlices(s, id); !ok {
			info, _ := s.JobInfo(id)
			t.Fatalf("step %d: job %d breaks the slices of its pod set %d: sets %+v, pods %+v",
				step, id, si, info.Sets, s.AppendJobPods(nil, id))
		}
	}
}

// wantModels fails unless every job of engine e with pods in the State has
// them on hosts of models its spec accepts (binds, repairs and moves alike).
func wantModels(t testing.TB, step int, e *blink.Engine) {
	t.Helper()
	s := e.State()
	for _, id := range e.AppendJobs(nil) {
		spec, err := e.Spec(id)
		if err != nil || len(spec.Models) == 0 {
			continue
		}
		for _, p := range s.AppendJobPods(nil, id.Slot()) {
			if m := s.Tree().HostModel(p.Host); !slices.Contains(spec.Models, m) {
				t.Fatalf("step %d: job %v has a pod on host %s of model %d, accepting %v", step, id, s.Tree().HostName(p.Host), m, spec.Models)
			}
		}
	}
}

// keepsRequired reports whether job id (if in s) has its pods in one domain
// of its required level (one host at the host level).
func keepsRequired(s *topology.State, id topology.JobID) bool {
	info, ok := s.JobInfo(id)
	if !ok || info.Required <= 0 {
		return true
	}
	pods := s.AppendJobPods(nil, id)
	for i := 1; i < len(pods); i++ {
		if tDomain(s.Tree(), pods[i].Host, info.Required) != tDomain(s.Tree(), pods[0].Host, info.Required) {
			return false
		}
	}
	return true
}

// keepsSlices reports whether job id (if in s) keeps its slices, or the
// first pod set whose slices it breaks.
func keepsSlices(s *topology.State, id topology.JobID) (int, bool) {
	info, ok := s.JobInfo(id)
	if !ok {
		return 0, true
	}
	pods := s.AppendJobPods(nil, id)
	t := s.Tree()
	start := 0
	for si, set := range info.Sets {
		if set.SliceSize > 0 && set.SliceLevel > 0 {
			for a := start; a < start+int(set.Count); a += int(set.SliceSize) {
				for r := a + 1; r < min(a+int(set.SliceSize), start+int(set.Count)); r++ {
					if tDomain(t, pods[r].Host, set.SliceLevel) != tDomain(t, pods[a].Host, set.SliceLevel) {
						return si, false
					}
				}
			}
		}
		start += int(set.Count)
	}
	return 0, true
}
