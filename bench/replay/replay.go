package replay

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"time"

	"github.com/blinksched/blink/bench/openb"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// Config is what a replay may add to its inputs.
type Config struct {
	// Log, if not nil, receives every event and decision as JSON lines (see
	// the package documentation).
	Log io.Writer
	// Progress, if not nil, is called every few thousand events and at the
	// end with the events handled and their total.
	Progress func(done, total int)
}

// Series holds one sample per instant at which events happened, to the end.
type Series struct {
	T       []int64   // trace seconds
	Alloc   []float64 // GPU allocation (%) after the instant's events
	Waiting []int     // pods waiting after the instant's events
	Frag    []float64 // fragmentation (%) after the instant's events
}

// Result is a replay's measurements.
type Result struct {
	Pods, Nodes, GPUs int
	// Start and LastArrival are the first and last arrivals, End the last
	// event (trace seconds). Time-weighted means are over [Start,
	// LastArrival]: the period in which work arrives (after it the cluster
	// only drains).
	Start, LastArrival, End int64
	// Pods placed at arrival, placed after waiting, that gave up (left at
	// their deletion time without running), and still waiting at the end.
	PlacedAtArrival, PlacedAfterWait, GaveUp, StillWaiting int
	// AllocMean is the time-weighted GPU allocation (%), AllocMax its peak.
	AllocMean, AllocMax float64
	// WaitingMean is the time-weighted number of waiting pods, WaitingMax the
	// peak; Waits are the waits (seconds) of pods that waited and then ran.
	WaitingMean float64
	WaitingMax  int
	Waits       []int64
	// FragGPUs and FragMilli are the common request R of the fragmentation
	// metric; FragMean is its time-weighted value (%), FragAt90 its mean over
	// the FragAt90N instants when allocation was at least 90% (0 if none).
	FragGPUs, FragMilli int32
	FragMean, FragAt90  float64
	FragAt90N           int
	// Latencies are the wall times of every Place call, ascending.
	Latencies []time.Duration
	Series    Series
}

// Percentile returns the p-th percentile (0…100, nearest rank) of sorted
// values, or 0 for none.
func Percentile[T int64 | time.Duration](sorted []T, p float64) T {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// pod states
const (
	notArrived = iota
	waiting
	running
	finished // left after running, or gave up
)

type event struct {
	t      int64
	depart bool
	pod    int32
}

// replayer is one run's state.
type replayer struct {
	c      *openb.Cluster
	pods   []openb.Pod
	shapes []openb.Shape
	keys   []shapeKey
	s      *topology.State
	v      placement.Solver
	plan   placement.Plan
	req    placement.Request
	set    [1]placement.PodSet
	log    *logger
	state  []uint8
	queue  []int32
	failed map[shapeKey]bool // shapes that failed in the current retry pass
	podBuf []topology.Pod

	allocMilli int64
	fr         frag
	res        *Result
}

// shapeKey identifies a pod shape for the retry pass.
type shapeKey struct {
	gpus, milli, cpu, mem int32
	models                string
}

// Run replays pods on the cluster c (see the package documentation). The
// cluster starts empty; pods are the trace's rows, pod i becoming job i.
func Run(c *openb.Cluster, pods []openb.Pod, cfg Config) (*Result, error) {
	r, err := newReplayer(c, pods, cfg)
	if err != nil {
		return nil, err
	}
	res := r.res
	events := podEvents(pods)
	if len(events) == 0 {
		return res, nil
	}
	res.Start, res.End = events[0].t, events[len(events)-1].t
	for i := range pods {
		res.LastArrival = max(res.LastArrival, pods[i].Creation)
	}
	var sums timeSums
	last := res.Start
	for i := 0; i < len(events); {
		t := events[i].t
		j := i
		for j < len(events) && events[j].t == t {
			j++
		}
		// The state since the last instant held until t (counted up to the
		// last arrival).
		sums.add(r, float64(max(0, min(t, res.LastArrival)-last)))
		last = min(t, res.LastArrival)
		if err := r.instant(t, events[i:j]); err != nil {
			return nil, err
		}
		r.record(t, &sums)
		if cfg.Progress != nil && (j/4096 != i/4096 || j == len(events)) {
			cfg.Progress(j, len(events))
		}
		i = j
	}
	sums.finish(res)
	res.StillWaiting = len(r.queue)
	slices.Sort(res.Waits)
	slices.Sort(res.Latencies)
	if r.log != nil {
		if err := r.log.flush(); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// newReplayer checks the pods (ids, distinct names) and sets up a replay
// of them on an empty cluster c.
func newReplayer(c *openb.Cluster, pods []openb.Pod, cfg Config) (*replayer, error) {
	if len(pods) > int(topology.MaxJobID)+1 {
		return nil, fmt.Errorf("replay: %d pods, at most %d", len(pods), topology.MaxJobID+1)
	}
	names := make(map[string]bool, len(pods))
	for i := range pods {
		if names[pods[i].Name] {
			return nil, fmt.Errorf("replay: two pods named %q: names must identify pods in the log", pods[i].Name)
		}
		names[pods[i].Name] = true
	}
	r := &replayer{c: c, pods: pods, shapes: c.Shapes(pods), s: topology.NewState(c.Tree),
		state: make([]uint8, len(pods)), failed: map[shapeKey]bool{}}
	r.req.Sets = r.set[:]
	if err := r.v.SetProfile(c.Tree, openb.Profile(r.shapes)); err != nil {
		return nil, fmt.Errorf("replay: the pod list's profile: %w", err)
	}
	r.keys = make([]shapeKey, len(pods))
	for i := range r.shapes {
		sh := &r.shapes[i]
		r.keys[i] = shapeKey{sh.GPUs, sh.Milli, sh.CPUMilli, sh.MemoryMiB, fmt.Sprint(sh.Models, sh.NoModel)}
	}
	if cfg.Log != nil {
		r.log = newLogger(cfg.Log, c.Tree)
	}
	r.res = &Result{Pods: len(pods), Nodes: len(c.Nodes), GPUs: c.GPUs}
	r.res.FragGPUs, r.res.FragMilli = commonRequest(pods)
	r.fr.init(c, r.s, r.res.FragGPUs, r.res.FragMilli)
	return r, nil
}

// podEvents lists the pods' arrivals and departures in time order (stable:
// the trace's order within an instant).
func podEvents(pods []openb.Pod) []event {
	events := make([]event, 0, 2*len(pods))
	for i := range pods {
		events = append(events, event{t: pods[i].Creation, pod: int32(i)})
		if pods[i].HasDeletion {
			events = append(events, event{t: pods[i].Deletion, depart: true, pod: int32(i)})
		}
	}
	sort.SliceStable(events, func(a, b int) bool { return events[a].t < events[b].t })
	return events
}

// timeSums integrates allocation, waiting pods and fragmentation over time,
// and sums fragmentation at instants of allocation ≥ 90%.
type timeSums struct {
	alloc, waiting, frag float64
	frag90, n90          float64
}

// add counts the state r holds for dt seconds.
func (m *timeSums) add(r *replayer, dt float64) {
	m.alloc += dt * r.allocPercent()
	m.waiting += dt * float64(len(r.queue))
	m.frag += dt * r.fr.percent()
}

// record appends the state after instant t to the result's series and
// maxima.
func (r *replayer) record(t int64, m *timeSums) {
	res := r.res
	a, f := r.allocPercent(), r.fr.percent()
	res.Series.T = append(res.Series.T, t)
	res.Series.Alloc = append(res.Series.Alloc, a)
	res.Series.Waiting = append(res.Series.Waiting, len(r.queue))
	res.Series.Frag = append(res.Series.Frag, f)
	res.AllocMax = max(res.AllocMax, a)
	res.WaitingMax = max(res.WaitingMax, len(r.queue))
	if a >= 90 {
		m.frag90 += f
		m.n90++
	}
}

// finish writes the means over the arrivals' span to res.
func (m *timeSums) finish(res *Result) {
	if span := float64(res.LastArrival - res.Start); span > 0 {
		res.AllocMean = m.alloc / span
		res.WaitingMean = m.waiting / span
		res.FragMean = m.frag / span
	}
	if m.n90 > 0 {
		res.FragAt90, res.FragAt90N = m.frag90/m.n90, int(m.n90)
	}
}

func (r *replayer) allocPercent() float64 {
	return float64(r.allocMilli) * 100 / float64(r.c.CapacityMilli())
}

// instant handles the events of one instant in the documented order.
func (r *replayer) instant(t int64, evs []event) error {
	freed := false
	for _, e := range evs { // 1. departures of pods that arrived earlier
		if e.depart && r.pods[e.pod].Creation < t {
			f, err := r.depart(t, e.pod)
			if err != nil {
				return err
			}
			freed = freed || f
		}
	}
	if freed { // 2.
		if err := r.retry(t); err != nil {
			return err
		}
	}
	for _, e := range evs { // 3. arrivals
		if !e.depart {
			if err := r.arrive(t, e.pod); err != nil {
				return err
			}
		}
	}
	freed = false
	for _, e := range evs { // 4. pods that arrive and leave at t
		if e.depart && r.pods[e.pod].Creation == t {
			f, err := r.depart(t, e.pod)
			if err != nil {
				return err
			}
			freed = freed || f
		}
	}
	if freed {
		return r.retry(t)
	}
	return nil
}

func (r *replayer) arrive(t int64, i int32) error {
	r.log.arrive(t, &r.pods[i], &r.shapes[i])
	ok, reason, err := r.try(i)
	if err != nil {
		return err
	}
	if ok {
		r.res.PlacedAtArrival++
		return r.placed(t, i, 0)
	}
	r.state[i] = waiting
	r.queue = append(r.queue, i)
	r.log.wait(t, &r.pods[i], reason, len(r.queue))
	return nil
}

// depart ends pod i at t; it reports whether resources were freed.
func (r *replayer) depart(t int64, i int32) (bool, error) {
	switch r.state[i] {
	case running:
		r.podBuf = r.s.AppendJobPods(r.podBuf[:0], topology.JobID(i))
		if err := r.s.Apply(topology.Delta{Ops: []topology.Op{topology.RemoveJob(topology.JobID(i))}}); err != nil {
			return false, fmt.Errorf("replay: pod %s cannot leave: %w", r.pods[i].Name, err)
		}
		r.allocMilli -= r.shapes[i].MilliGPU()
		r.fr.update(r.podBuf)
		r.state[i] = finished
		r.log.leave(t, &r.pods[i])
		return true, nil
	case waiting:
		r.state[i] = finished
		r.res.GaveUp++
		r.queue = slices.DeleteFunc(r.queue, func(q int32) bool { return q == i })
		r.log.giveUp(t, &r.pods[i], t-r.pods[i].Creation)
	}
	return false, nil
}

// retry tries every waiting pod once, oldest first.
func (r *replayer) retry(t int64) error {
	if len(r.queue) == 0 {
		return nil
	}
	r.log.retry(t, len(r.queue))
	clear(r.failed)
	kept := r.queue[:0]
	for _, i := range r.queue {
		if r.failed[r.keys[i]] {
			kept = append(kept, i)
			continue
		}
		ok, _, err := r.try(i)
		if err != nil {
			return err
		}
		if !ok {
			r.failed[r.keys[i]] = true
			kept = append(kept, i)
			continue
		}
		r.res.PlacedAfterWait++
		r.res.Waits = append(r.res.Waits, t-r.pods[i].Creation)
		if err := r.placed(t, i, t-r.pods[i].Creation); err != nil {
			return err
		}
	}
	r.queue = kept
	return nil
}

// try asks placement for pod i, timing the call; on a fit r.plan holds it.
func (r *replayer) try(i int32) (bool, placement.Reason, error) {
	sh := &r.shapes[i]
	if sh.NoModel {
		return false, placement.Reason{Code: placement.NoModel}, nil
	}
	r.req.Job, r.req.Models = topology.JobID(i), sh.Models
	r.set[0] = placement.PodSet{Pods: 1, GPUs: sh.GPUs, Milli: sh.Milli, CPUMilli: sh.CPUMilli, MemoryMiB: sh.MemoryMiB}
	start := time.Now()
	ok, reason, err := r.v.Place(r.s, &r.req, &r.plan)
	r.res.Latencies = append(r.res.Latencies, time.Since(start))
	if err != nil {
		return false, reason, fmt.Errorf("replay: pod %s: %w", r.pods[i].Name, err)
	}
	return ok, reason, nil
}

// placed applies r.plan for pod i.
func (r *replayer) placed(t int64, i int32, waited int64) error {
	if err := r.s.Apply(r.plan.Delta()); err != nil {
		return fmt.Errorf("replay: the plan of pod %s does not apply: %w", r.pods[i].Name, err)
	}
	r.state[i] = running
	r.allocMilli += r.shapes[i].MilliGPU()
	r.fr.update(r.plan.Pods)
	r.log.place(t, &r.pods[i], r.plan.Pods, waited)
	return nil
}

// commonRequest returns the most frequent GPU request (GPUs, milli) among
// the GPU pods; ties go to the smaller request. (1, 0) when there are none.
func commonRequest(pods []openb.Pod) (gpus, milli int32) {
	type req struct{ gpus, milli int32 }
	count := map[req]int{}
	for i := range pods {
		p := &pods[i]
		if p.NumGPU == 0 {
			continue
		}
		k := req{int32(p.NumGPU), 0}
		if p.GPUMilli < topology.FullGPU {
			k.milli = int32(p.GPUMilli)
		}
		count[k]++
	}
	best, bestN := req{1, 0}, 0
	size := func(k req) int64 {
		if k.milli > 0 {
			return int64(k.milli)
		}
		return int64(k.gpus) * topology.FullGPU
	}
	for k, n := range count {
		if n > bestN || n == bestN && (size(k) < size(best) || size(k) == size(best) && k.milli > best.milli) {
			best, bestN = k, n
		}
	}
	return best.gpus, best.milli
}
