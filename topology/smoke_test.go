package topology

import "testing"

func TestSmoke(t *testing.T) {
	tr, err := BuildShape(NVL72(2))
	if err != nil {
		t.Fatal(err)
	}
	s := NewState(tr)
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	t.Log(tr.NumGPUs(), s.Free(0), s.IdleHosts(0))
	d := Delta{Ops: []Op{AddJob(3, Job{Priority: 5, Preemptible: true}, Pod{Host: 7, GPUs: 0b1011, CPUMilli: 10})}}
	if err := s.Apply(d); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(d); err == nil {
		t.Fatal("want error")
	} else {
		t.Log(err)
	}
	d2 := Delta{Ops: []Op{AddJob(4, Job{}, Pod{Host: 7, GPUs: 0b100, Milli: 300}, Pod{Host: 7, GPUs: 0b100, Milli: 700}, Pod{Host: 7, GPUs: 0b100, Milli: 1})}}
	if err := s.Apply(d2); err == nil {
		t.Fatal("want error")
	} else {
		t.Log(err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	b, _ := s.MarshalBinary()
	s2 := NewState(tr)
	if err := s2.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	b2, _ := s2.MarshalBinary()
	if string(b) != string(b2) {
		t.Fatal("roundtrip")
	}
	if err := s.Apply(Delta{Ops: []Op{RemoveJob(3), SetDomainHealth(5, Failed)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	t.Log(s.Free(0), s.HealthyGPUs(0))
}
