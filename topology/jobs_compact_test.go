package topology

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// oracleCompareJobView checks the compact job view against the oracle's
// jobs: every id below JobIDBound that the view covers has the live job's
// priority, pod count, milli-GPUs and preemptible bit (zeros when absent),
// and ids it does not cover are absent.
func oracleCompareJobView(s *State, m *oracleModel) error {
	prio, pods, milli, pre := s.JobPriorities(), s.JobPodCounts(), s.JobMilliGPUs(), s.PreemptibleJobWords()
	if len(pods) != len(prio) || len(milli) != len(prio) || len(pre) != (len(prio)+63)/64 || JobID(len(prio)) > s.JobIDBound() {
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
			want = jobEntry{prio: j.info.Priority, pods: int32(len(j.pods)), pre: j.info.Preemptible}
			for _, p := range j.pods {
				want.milli += uint64(p.MilliGPU())
			}
		}
		got := jobEntry{prio[id], pods[id], milli[id], pre[id>>6]&(1<<(uint(id)&63)) != 0}
		if got != want {
			return fmt.Errorf("job view of %d = %+v, oracle %+v", id, got, want)
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
