package bench

import (
	"strconv"
	"testing"

	"github.com/blinksched/blink/topology"
)

// BenchmarkBuild times topology.BuildShape of each grid cluster.
func BenchmarkBuild(b *testing.B) {
	for _, gpus := range Sizes {
		for _, shape := range Shapes {
			b.Run("gpus="+gpus+"/shape="+shape, func(b *testing.B) {
				SkipUnlessFull(b, gpus)
				sh, err := Shape(shape, gpus)
				if err != nil {
					b.Fatal(err)
				}
				t, err := topology.BuildShape(sh) // the checked run
				if err != nil {
					b.Fatal(err)
				}
				G := t.NumGPUs()
				t = nil
				b.ReportAllocs()
				for b.Loop() {
					t, err = topology.BuildShape(sh)
				}
				if err != nil || t.NumGPUs() != G {
					b.Fatalf("BuildShape: %v", err)
				}
				reportPerGPU(b, G)
				ReportRatio(b, gpus)
			})
		}
	}
}

// BenchmarkNewState times the empty State of each grid cluster.
func BenchmarkNewState(b *testing.B) {
	for _, gpus := range Sizes {
		for _, shape := range Shapes {
			b.Run("gpus="+gpus+"/shape="+shape, func(b *testing.B) {
				SkipUnlessFull(b, gpus)
				t, err := Cluster(shape, gpus)
				if err != nil {
					b.Fatal(err)
				}
				var s *topology.State
				b.ReportAllocs()
				for b.Loop() {
					s = topology.NewState(t)
				}
				if s.Free(0) != t.NumGPUs() {
					b.Fatalf("NewState: %d free GPUs of %d", s.Free(0), t.NumGPUs())
				}
				reportPerGPU(b, t.NumGPUs())
				ReportRatio(b, gpus)
			})
		}
	}
}

// BenchmarkApply times State.Apply of AddJob of one 4-GPU pod on an empty
// NVL72 State, then Apply of RemoveJob: one op is both Applies. It reports the
// State's size: bytes/GPU of the per-GPU, per-host and per-domain arrays of
// the empty State, and bytes/pod of the job records (job table and pod arena)
// after adding 10,000 one-pod jobs.
func BenchmarkApply(b *testing.B) {
	for _, gpus := range Sizes {
		b.Run("gpus="+gpus+"/pod=4gpu", func(b *testing.B) {
			SkipUnlessFull(b, gpus)
			t, err := Cluster("nvl72", gpus)
			if err != nil {
				b.Fatal(err)
			}
			s := topology.NewState(t)
			topo, _ := s.MemoryBytes()
			perPod, err := podBytes(t, 10000)
			if err != nil {
				b.Fatal(err)
			}
			h := topology.HostID(t.NumHosts() / 2)
			job := topology.Job{Priority: 10, Preemptible: true, Required: topology.NoLevel, Preferred: topology.NoLevel}
			add := topology.Delta{Ops: []topology.Op{topology.AddJob(7, job, topology.Pod{Host: h, GPUs: 0xf})}}
			remove := topology.Delta{Ops: []topology.Op{topology.RemoveJob(7)}}
			applyPair(b, s, add, remove) // the checked run
			if err := s.Check(); err != nil {
				b.Fatal(err)
			}
			applyLoop(b, s, add, remove)
			if s.NumJobs() != 0 || s.Free(0) != t.NumGPUs() {
				b.Fatalf("after the loop: %d jobs, %d free GPUs of %d", s.NumJobs(), s.Free(0), t.NumGPUs())
			}
			b.ReportMetric(float64(topo)/float64(t.NumGPUs()), "bytes/GPU")
			b.ReportMetric(perPod, "bytes/pod")
			ReportRatio(b, gpus)
		})
	}
}

// BenchmarkApplyGang times Apply of AddJob for a gang of 144 whole-host
// pods (an SU of the NVL72 cluster, 576 GPUs) on an empty State, then Apply
// of its RemoveJob: one op is both. Reports ns per pod of the pair.
func BenchmarkApplyGang(b *testing.B) {
	for _, gpus := range Sizes {
		b.Run("gpus="+gpus+"/pods=144", func(b *testing.B) {
			SkipUnlessFull(b, gpus)
			t, err := Cluster("nvl72", gpus)
			if err != nil {
				b.Fatal(err)
			}
			s := topology.NewState(t)
			su, _ := t.LevelByName("su")
			lo, _ := t.LevelDomains(su)
			h0, h1 := t.Hosts(lo) // the first SU
			pods := make([]topology.Pod, 0, h1-h0)
			for h := h0; h < h1; h++ {
				pods = append(pods, topology.Pod{Host: h, GPUs: 0xf})
			}
			job := topology.Job{Priority: 10, Preemptible: true, Required: su, Preferred: topology.NoLevel,
				Sets: []topology.PodSet{{Count: int32(len(pods)), GPUs: 4}}}
			add := topology.Delta{Ops: []topology.Op{topology.AddJob(7, job, pods...)}}
			remove := topology.Delta{Ops: []topology.Op{topology.RemoveJob(7)}}
			for range 2 { // the checked run, and one more: the tables have grown
				if err := s.Apply(add); err != nil {
					b.Fatal(err)
				}
				if err := s.Check(); err != nil {
					b.Fatal(err)
				}
				if err := s.Apply(remove); err != nil {
					b.Fatal(err)
				}
			}
			applyLoop(b, s, add, remove)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(pods)), "ns/pod")
			ReportRatio(b, gpus)
		})
	}
}

// applyLoop is the timed loop of the Apply benchmarks: add, then remove.
func applyLoop(b *testing.B, s *topology.State, add, remove topology.Delta) {
	b.Helper()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Apply(add); err != nil {
			b.Fatal(err)
		}
		if err := s.Apply(remove); err != nil {
			b.Fatal(err)
		}
	}
}

func applyPair(b *testing.B, s *topology.State, add, remove topology.Delta) {
	b.Helper()
	if err := s.Apply(add); err != nil {
		b.Fatal(err)
	}
	if s.Free(0) != s.Tree().NumGPUs()-4 {
		b.Fatalf("after add: %d free GPUs", s.Free(0))
	}
	if err := s.Apply(remove); err != nil {
		b.Fatal(err)
	}
}

// podBytes adds n one-pod jobs (4 GPUs each, on hosts 0…n-1) to an empty
// State of t and returns the job records' bytes per pod.
func podBytes(t *topology.Tree, n int) (float64, error) {
	s := topology.NewState(t)
	n = min(n, t.NumHosts())
	job := topology.Job{Priority: 10, Preemptible: true, Required: topology.NoLevel, Preferred: topology.NoLevel}
	d := topology.Delta{Ops: make([]topology.Op, 1)}
	for i := range n {
		d.Ops[0] = topology.AddJob(topology.JobID(i), job, topology.Pod{Host: topology.HostID(i), GPUs: 0xf})
		if err := s.Apply(d); err != nil {
			return 0, err
		}
	}
	_, jobs := s.MemoryBytes()
	return float64(jobs) / float64(s.NumPods()), nil
}

// BenchmarkFill times Fill of an empty State of each grid cluster (the
// NewState is outside the timer).
func BenchmarkFill(b *testing.B) {
	for _, gpus := range Sizes {
		for _, shape := range Shapes {
			for _, load := range []int{50, 90} {
				b.Run("gpus="+gpus+"/shape="+shape+"/load="+strconv.Itoa(load), func(b *testing.B) {
					SkipUnlessFull(b, gpus)
					t, err := Cluster(shape, gpus)
					if err != nil {
						b.Fatal(err)
					}
					var st FillStats
					b.ReportAllocs()
					for b.Loop() {
						b.StopTimer()
						s := topology.NewState(t)
						b.StartTimer()
						if st, err = Fill(s, float64(load)/100, DefaultSeed); err != nil {
							b.Fatal(err)
						}
					}
					reportPerGPU(b, t.NumGPUs())
					b.ReportMetric(float64(st.Jobs), "jobs")
					b.ReportMetric(100*st.Load, "load%")
					ReportRatio(b, gpus)
				})
			}
		}
	}
}

func reportPerGPU(b *testing.B, gpus int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(gpus), "ns/GPU")
}
