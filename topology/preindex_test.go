package topology

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// preJob is a live preemptible job's priority and size.
type preJob struct {
	prio int32
	size int64
}

// oracleComparePreIndex checks LeastPreemptiblePriority at every priority
// of a live job and around it, and PreemptibleSizeWords at a spread of
// sizes, against the oracle's jobs.
func oracleComparePreIndex(s *State, m *oracleModel) error {
	pre := map[JobID]preJob{}
	probes := []int32{-1 << 31, 1<<31 - 1}
	for id, j := range m.jobs {
		if j != nil && j.info.Preemptible {
			pre[JobID(id)] = preJob{j.info.Priority, oracleJobSize(s.Tree(), j)}
		}
		if j != nil {
			probes = append(probes, j.info.Priority-1, j.info.Priority, j.info.Priority+1)
		}
	}
	for _, at := range probes {
		want, wantOK := int32(0), false
		for _, j := range pre {
			if j.prio >= at && (!wantOK || j.prio < want) {
				want, wantOK = j.prio, true
			}
		}
		if got, ok := s.LeastPreemptiblePriority(at); got != want || ok != wantOK {
			return fmt.Errorf("LeastPreemptiblePriority(%d) = %d, %v; want %d, %v", at, got, ok, want, wantOK)
		}
	}
	for _, minSize := range []int64{-1, 0, 1, 2, 3, 4, 5, 8, 17, 64, 100, 1 << 14, 1<<14 + 1, 1 << 20} {
		for _, prio := range []int32{-1 << 31, -2, 0, 1, 3, 7, 100, 1 << 20, 1<<31 - 1} {
			if err := comparePreSizeWords(s, pre, minSize, prio); err != nil {
				return err
			}
		}
	}
	return nil
}

// comparePreSizeWords checks PreemptibleSizeWords(minSize, prio) against
// the live preemptible jobs pre (their priority and size).
func comparePreSizeWords(s *State, pre map[JobID]preJob, minSize int64, prio int32) error {
	words := s.PreemptibleSizeWords(nil, minSize, prio)
	if len(words) != len(s.PreemptibleJobWords()) {
		return fmt.Errorf("PreemptibleSizeWords(%d, %d): %d words, the job view %d", minSize, prio, len(words), len(s.PreemptibleJobWords()))
	}
	floor := int64(0) // minSize rounded down to a power of two, at most 2^14
	if minSize > 0 {
		floor = min(int64(1)<<(bits.Len64(uint64(minSize))-1), 1<<14)
	}
	for id := range JobID(len(words) * 64) {
		j, ok := pre[id]
		got := words[id>>6]&(1<<(uint(id)&63)) != 0
		must := ok && j.size >= minSize && j.prio <= prio
		may := ok && j.size >= floor && prioBucket(j.prio) <= prioBucket(prio)
		if must && !got || got && !may {
			return fmt.Errorf("PreemptibleSizeWords(%d, %d): job %d (%+v, preemptible %v) bit %v", minSize, prio, id, j, ok, got)
		}
	}
	return nil
}

// TestPreIndexManyPriorities adds and removes preemptible jobs of up to 80
// distinct priorities at once, so the priority table fills, counts jobs
// apart and empties again, with failing Deltas in between, and checks the
// index's answers against a count of the jobs after every step.
func TestPreIndexManyPriorities(t *testing.T) {
	seed, steps := envInt(t, "BLINK_SEED", 61), envInt(t, "BLINK_STEPS", 3000)
	t.Logf("seed %d, %d steps (BLINK_SEED, BLINK_STEPS)", seed, steps)
	r := rand.New(rand.NewPCG(uint64(seed), 7))
	tr, err := BuildShape(Shape{Levels: []string{"rack"}, FanOut: []int{8, 32}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := NewState(tr)
	live := map[JobID]int32{} // job → priority
	hosts := map[HostID]JobID{}
	spread, over, exact := 2+r.IntN(80), int32(0), int32(0)
	for step := range steps {
		if step%500 == 0 {
			spread = 2 + r.IntN(80)
		}
		h := HostID(r.IntN(tr.NumHosts()))
		var ops []Op
		if id, ok := hosts[h]; ok {
			ops = append(ops, RemoveJob(id))
		} else {
			id := JobID(r.IntN(400))
			if _, ok := live[id]; !ok {
				prio := int32(r.IntN(spread)) * 7
				ops = append(ops, AddJob(id, Job{Priority: prio, Preemptible: r.IntN(4) > 0}, Pod{Host: h, GPUs: 1<<uint(1+r.IntN(4)) - 1}))
			}
		}
		fail := r.IntN(5) == 0
		if fail {
			ops = append(ops, RemoveJob(JobID(500))) // absent: the Delta fails whole
		}
		err := s.Apply(Delta{Ops: ops})
		require.Equal(t, fail, err != nil, "seed %d step %d: %v", seed, step, err)
		if !fail {
			for _, op := range ops {
				if op.Kind == OpAddJob {
					live[op.Job], hosts[op.Pods[0].Host] = op.Info.Priority, op.Job
				} else {
					delete(hosts, h)
					delete(live, op.Job)
				}
			}
		}
		require.NoError(t, s.Check(), "seed %d step %d", seed, step)
		require.NoError(t, comparePrioIndex(s, live), "seed %d step %d", seed, step)
		over += b2i(s.preOver > 0)
		exact += b2i(s.preOver == 0 && s.prePrioHi == prioSlots)
	}
	t.Logf("%d steps with jobs counted apart, %d with the table full and exact", over, exact)
	require.NotZero(t, over, "the table never filled")
	require.NotZero(t, exact, "the table never emptied its overflow")
	require.NoError(t, s.Clone().Check())
}

// comparePrioIndex checks LeastPreemptiblePriority at every multiple of 7
// around the jobs' priorities (live: job → priority).
func comparePrioIndex(s *State, live map[JobID]int32) error {
	for at := int32(-7); at <= 81*7; at += 3 {
		want, wantOK := int32(0), false
		for id, p := range live {
			if info, _ := s.JobInfo(id); info.Preemptible && p >= at && (!wantOK || p < want) {
				want, wantOK = p, true
			}
		}
		if got, ok := s.LeastPreemptiblePriority(at); got != want || ok != wantOK {
			return fmt.Errorf("LeastPreemptiblePriority(%d) = %d, %v; want %d, %v", at, got, ok, want, wantOK)
		}
	}
	return nil
}

// envInt is environment variable name as an integer, def when unset.
func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, name)
	return n
}
