package fgd

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/blinksched/blink/bench/openb"
)

// MaxArrived is the last point of the curve: arrived GPU request of 130% of
// the cluster's GPU capacity.
const MaxArrived = 130

// CurveLen is the number of points of a curve, k = 0…MaxArrived.
const CurveLen = MaxArrived + 1

// Independent random streams of one seed: the workload's draws and the
// policy's own choices, so every policy of a seed sees the same workload.
const (
	streamWorkload = 0x776f726b6c6f6164 // "workload"
	streamPolicy   = 0x706f6c696379     // "policy"
)

// ErrNoGPUPods: the pod list has no pod that asks for a GPU, so no workload
// can reach 130% of capacity.
var ErrNoGPUPods = errors.New("fgd: no pod of the list asks for a GPU")

// Draw returns the workload of seed: indices into shapes, drawn uniformly at
// random with replacement until their GPU request (Shape.MilliGPU, summed)
// reaches MaxArrived% of capacityMilli, then shuffled. The pod whose draw
// reaches the target is included, so the total is at least the target and
// less than the target plus one pod. Deterministic in (shapes, capacity,
// seed).
func Draw(shapes []openb.Shape, capacityMilli int64, seed uint64) ([]int32, error) {
	var any bool
	for i := range shapes {
		any = any || shapes[i].MilliGPU() > 0
	}
	if !any || capacityMilli <= 0 {
		return nil, ErrNoGPUPods
	}
	rng := rand.New(rand.NewPCG(seed, streamWorkload))
	target := capacityMilli * MaxArrived // compared with total·100
	var work []int32
	for total := int64(0); total*100 < target; {
		i := rng.IntN(len(shapes))
		work = append(work, int32(i))
		total += shapes[i].MilliGPU()
	}
	rng.Shuffle(len(work), func(i, j int) { work[i], work[j] = work[j], work[i] })
	return work, nil
}

// Result is one run of the protocol: one policy, one seed.
type Result struct {
	Policy string
	Seed   uint64
	// Curve[k] is the GPU allocation ratio in percent — GPUs held by placed
	// pods, fractions counted as fractions, over the cluster's GPUs — right
	// after the pod whose arrival brings the arrived GPU request to k% of
	// capacity or past it. Curve[0] is 0 (nothing has arrived).
	Curve [CurveLen]float64
	// Pods arrived, and how many of them were placed (the rest were skipped).
	Pods, Placed int
	// ArrivedMilli and AllocMilli are the final arrived and allocated GPU
	// requests in milli-GPU.
	ArrivedMilli, AllocMilli int64
	// Elapsed is the time of the placement loop alone.
	Elapsed time.Duration
}

// PodsPerSecond is the placement loop's throughput.
func (r *Result) PodsPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Pods) / r.Elapsed.Seconds()
}

// Run places the workload (indices into shapes, in arrival order) with p,
// which must have been Reset, one pod at a time; a pod that does not fit is
// skipped and none ever leaves.
//
// The arrived GPU request counts every pod of the workload that has arrived,
// placed or skipped; the allocation counts only placed pods. Both are exact
// integers of milli-GPU, and "passes k%" is arrived·100 ≥ k·capacity, so the
// curve does not depend on rounding.
func Run(p Placer, shapes []openb.Shape, work []int32, capacityMilli int64) (Result, error) {
	var r Result
	r.Pods = len(work)
	next := 1 // the next curve point to record; Curve[0] = 0
	start := time.Now()
	for _, i := range work {
		s := &shapes[i]
		ok, err := p.Place(s)
		if err != nil {
			return r, fmt.Errorf("fgd: pod %d of the workload: %w", r.Placed, err)
		}
		m := s.MilliGPU()
		r.ArrivedMilli += m
		if ok {
			r.Placed++
			r.AllocMilli += m
		}
		for next < CurveLen && r.ArrivedMilli*100 >= int64(next)*capacityMilli {
			r.Curve[next] = float64(r.AllocMilli) * 100 / float64(capacityMilli)
			next++
		}
	}
	r.Elapsed = time.Since(start)
	for ; next < CurveLen; next++ { // a workload short of 130% (not one of Draw's)
		r.Curve[next] = float64(r.AllocMilli) * 100 / float64(capacityMilli)
	}
	return r, nil
}
