package topology

import (
	"reflect"
	"testing"
)

// TestMemoryBytesCountsEverySlice walks the State's fields by reflection, so a
// per-GPU, per-host or per-domain array added later cannot be left out of
// MemoryBytes unnoticed.
func TestMemoryBytesCountsEverySlice(t *testing.T) {
	tr, err := BuildShape(NVL72(1))
	if err != nil {
		t.Fatal(err)
	}
	s := NewState(tr)
	for i := range 40 {
		pod := Pod{Host: HostID(2 * i), GPUs: 0b11}
		if i%3 == 0 {
			pod = Pod{Host: HostID(2 * i), GPUs: 0b100, Milli: 300}
		}
		job := Job{Priority: int32(i), Preemptible: i%2 == 0, Sets: []PodSet{{Count: 1, GPUs: int32(pod.NumGPUs()), Milli: pod.Milli}}}
		if err := s.Apply(Delta{Ops: []Op{AddJob(JobID(i), job, pod)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Apply(Delta{Ops: []Op{Nominate(Nomination{Job: 99, Priority: 5, GPUs: []GPUID{500, 501}})}}); err != nil {
		t.Fatal(err)
	}

	records := map[string]bool{"jobs": true, "pods": true, "noms": true, "jobPrio": true, "jobPods": true, "jobMilli": true, "jobSizes": true, "jobHost0": true, "jobPre": true, "preClassW": true}
	var topo, jobs int
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := range v.NumField() {
			f, name := v.Field(i), v.Type().Field(i).Name
			switch {
			case name == "jr" || name == "idle": // undo scratch; bitset headers over idleW
			case name == "setRoom": // the records own what was carved from it
				jobs += (f.Cap() - f.Len()) * int(f.Type().Elem().Size())
			case f.Kind() == reflect.Struct:
				walk(f)
			case f.Kind() == reflect.Slice && records[name]:
				jobs += f.Cap() * int(f.Type().Elem().Size())
			case f.Kind() == reflect.Array && f.Type().Elem().Kind() == reflect.Slice && records[name]:
				for j := range f.Len() {
					jobs += f.Index(j).Cap() * int(f.Type().Elem().Elem().Size())
				}
			case f.Kind() == reflect.Array && f.Type().Elem().Kind() == reflect.Slice:
				t.Fatalf("field %s: an array of slices the walk does not count", name)
			case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Slice:
				for j := range f.Len() {
					topo += f.Index(j).Cap() * int(f.Type().Elem().Elem().Size())
				}
			case f.Kind() == reflect.Slice:
				topo += f.Cap() * int(f.Type().Elem().Size())
			}
		}
	}
	walk(reflect.ValueOf(s).Elem())
	for i := range s.jobs {
		jobs += bytesOf(s.jobs[i].info.Sets)
	}
	for i := range s.noms {
		jobs += bytesOf(s.noms[i].GPUs)
	}

	gotTopo, gotJobs := s.MemoryBytes()
	if gotTopo != topo || gotJobs != jobs {
		t.Errorf("MemoryBytes = %d, %d; the State's slices hold %d, %d", gotTopo, gotJobs, topo, jobs)
	}
	if perGPU := float64(gotTopo) / float64(tr.NumGPUs()); perGPU < 2 || perGPU > 64 {
		t.Errorf("%.1f bytes/GPU: implausible", perGPU)
	}
}
