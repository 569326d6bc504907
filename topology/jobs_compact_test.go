package topology

import (
	"fmt"
	"math/bits"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// oracleCompareJobView checks the compact job view against the oracle's
// jobs: every id below JobIDBound that the view covers has the live job's
// priority, pod count, milli-GPUs, size and preemptible bit (zeros when
// absent), and ids it does not cover are absent; PreemptibleCover bounds the
// fewest preemptible jobs freeing a number of GPUs (oracleCompareCover).
func oracleCompareJobView(s *State, m *oracleModel) error {
	prio, pods, milli, pre := s.JobPriorities(), s.JobPodCounts(), s.JobMilliGPUs(), s.PreemptibleJobWords()
	sizes := s.JobSizes()
	if len(pods) != len(prio) || len(milli) != len(prio) || len(sizes) != len(prio) || len(pre) != (len(prio)+63)/64 || JobID(len(prio)) > s.JobIDBound() {
		return fmt.Errorf("job view lengths %d, %d, %d, %d words (bound %d)", len(prio), len(pods), len(milli), len(pre), s.JobIDBound())
	}
	for id := range m.bound {
		j := m.jobs[id]
		if int(id) >= len(prio) {
			if j != nil {
				return fmt.Errorf("job %d present but beyond the job view (%d ids)", id, len(prio))
			}
			continue
		}
		var want jobEntry
		if j != nil {
			want = jobEntry{prio: j.info.Priority, pods: int32(len(j.pods)), pre: j.info.Preemptible,
				size: int32(oracleJobSize(s.Tree(), j))}
			for _, p := range j.pods {
				want.milli += uint64(p.MilliGPU())
			}
		}
		got := jobEntry{prio: prio[id], pods: pods[id], milli: milli[id], size: sizes[id], pre: pre[id>>6]&(1<<(uint(id)&63)) != 0}
		if got != want {
			return fmt.Errorf("job view of %d = %+v, oracle %+v", id, got, want)
		}
		if j != nil && len(j.pods) > 0 && s.JobFirstHosts()[id] != j.pods[0].Host {
			return fmt.Errorf("job %d's first pod on host %d, the view says %d", id, j.pods[0].Host, s.JobFirstHosts()[id])
		}
	}
	if err := oracleCompareCover(s, m); err != nil {
		return err
	}
	return oracleComparePreIndex(s, m)
}

// oracleJobSize is a job's size: its pods' GPUs, or for an exclusive job its
// pods times the largest host.
func oracleJobSize(t *Tree, j *oracleJob) int64 {
	if j.info.Exclusive {
		return int64(len(j.pods) * t.MaxHostGPUs())
	}
	n := 0
	for _, p := range j.pods {
		n += bits.OnesCount64(p.GPUs)
	}
	return int64(n)
}

// oracleCompareCover checks PreemptibleCover at every priority bucket's
// edge and a spread of GPU counts against the exact least number of
// preemptible jobs (of priority in the bucket or below, largest first) whose
// sizes reach the count: never above it, equal when every size is below 64,
// -1 exactly when all of them fall short.
func oracleCompareCover(s *State, m *oracleModel) error {
	for pb := range prioBuckets - 1 { // the last bucket holds no int32
		edge := int32(-1)
		if pb > 0 {
			edge = int32(int64(1)<<(pb-1) - 1) // the largest priority of bucket pb
		}
		var sizes []int64
		total, small := int64(0), true
		for _, j := range m.jobs {
			if j != nil && j.info.Preemptible && prioBucket(j.info.Priority) <= pb {
				sz := oracleJobSize(s.Tree(), j)
				sizes = append(sizes, sz)
				total += sz
				small = small && sz < 64
			}
		}
		slices.Sort(sizes)
		for _, gpus := range []int64{0, 1, 3, total / 3, total / 2, total - 1, total, total + 1} {
			want, sum := 0, int64(0)
			for i := len(sizes) - 1; i >= 0 && sum < gpus; i-- {
				sum += sizes[i]
				want++
			}
			if sum < gpus {
				want = -1
			}
			got, _ := s.PreemptibleCover(edge, gpus)
			if (got < 0) != (want < 0) || got > want || small && got != want {
				return fmt.Errorf("PreemptibleCover(%d, %d) = %d, exact %d", edge, gpus, got, want)
			}
		}
	}
	return nil
}

// TestJobViewRollback: a Delta that fails after adding and removing jobs
// leaves the view as it was, and ids the failed Delta reserved stay absent.
func TestJobViewRollback(t *testing.T) {
	s := allocState(t)
	require.NoError(t, s.Check())
	bound := s.JobIDBound()
	prio := append([]int32(nil), s.JobPriorities()...)
	words := append([]uint64(nil), s.PreemptibleJobWords()...)
	err := s.Apply(Delta{Ops: []Op{
		AddJob(bound+70, Job{Priority: 9, Preemptible: true}, Pod{Host: 200, GPUs: 1}),
		RemoveJob(bound - 1),
		RemoveJob(bound + 500), // absent: fails
	}})
	require.Error(t, err)
	require.NoError(t, s.Check())
	require.Equal(t, prio, s.JobPriorities())
	require.Equal(t, words, s.PreemptibleJobWords())
	require.NoError(t, s.Apply(Delta{Ops: []Op{AddJob(bound+3, Job{Priority: 4, Preemptible: true}, Pod{Host: 201, GPUs: 2})}}))
	require.NoError(t, s.Check())
	require.Equal(t, int32(4), s.JobPriorities()[bound+3])
	require.Equal(t, int32(1), s.JobPodCounts()[bound+3])
	require.Equal(t, uint64(1000), s.JobMilliGPUs()[bound+3])
	require.NotZero(t, s.PreemptibleJobWords()[(bound+3)>>6]&(1<<(uint(bound+3)&63)))
	require.NoError(t, s.Clone().Check())
}
