package fgd

import (
	"time"

	"github.com/blinksched/blink/bench/openb"
)

// Summary is a policy's results over several seeds.
type Summary struct {
	Policy string
	Seeds  []uint64
	// Curve is the mean over seeds of the runs' curves (percent).
	Curve [CurveLen]float64
	// Pods and Placed are summed over seeds; Elapsed is the placement loops'
	// total time.
	Pods, Placed int
	Elapsed      time.Duration
	Runs         []Result
}

// PodsPerSecond is the throughput of all seeds' placement loops together:
// pods over loop time, summed over seeds.
func (s *Summary) PodsPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Pods) / s.Elapsed.Seconds()
}

// Measure runs the protocol for each policy and seed on the pod shapes of a
// trace: per seed one workload (Draw), shared by every policy, placed by each
// policy from an empty cluster. progress, if not nil, is called after each
// run with the runs done and the total.
func Measure(c *openb.Cluster, shapes []openb.Shape, policies []string, seeds []uint64,
	progress func(done, total int)) ([]Summary, error) {
	placers := make([]Placer, len(policies))
	sums := make([]Summary, len(policies))
	for i, name := range policies {
		p, err := NewPlacer(name, c, shapes)
		if err != nil {
			return nil, err
		}
		placers[i] = p
		sums[i] = Summary{Policy: name, Seeds: seeds}
	}
	done, total := 0, len(policies)*len(seeds)
	for _, seed := range seeds {
		work, err := Draw(shapes, c.CapacityMilli(), seed)
		if err != nil {
			return nil, err
		}
		for i, p := range placers {
			p.Reset(seed)
			r, err := Run(p, shapes, work, c.CapacityMilli())
			if err != nil {
				return nil, err
			}
			r.Policy, r.Seed = policies[i], seed
			s := &sums[i]
			s.Runs = append(s.Runs, r)
			s.Pods += r.Pods
			s.Placed += r.Placed
			s.Elapsed += r.Elapsed
			done++
			if progress != nil {
				progress(done, total)
			}
		}
	}
	for i := range sums {
		s := &sums[i]
		for k := range s.Curve {
			for _, r := range s.Runs {
				s.Curve[k] += r.Curve[k]
			}
			s.Curve[k] /= float64(len(s.Runs))
		}
	}
	return sums, nil
}
