package topology

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAddOneOracle compares Apply's fast path for a Delta of one AddJob of
// one pod (addone.go) with the general path, on random States of random
// trees (TestOracle's generators): the same AddJob is applied to two clones,
// alone (the fast path) and followed by an ExpireNominations that drops
// nothing (the general, journaled path). Both must accept or reject it
// alike, with the same error, and leave States with identical snapshots,
// host generations and job counters; a rejected one must leave the State as
// it was. Between the comparisons the State moves on by TestOracle's random
// Deltas, and now and then by the compared AddJob itself.
//
// BLINK_SEED=n and BLINK_STEPS=n override the seed and the number of steps.
func TestAddOneOracle(t *testing.T) {
	seed, steps := envInt(t, "BLINK_SEED", 17), envInt(t, "BLINK_STEPS", 3000)
	if testing.Short() {
		steps /= 4
	}
	t.Logf("seed %d, %d steps (BLINK_SEED, BLINK_STEPS)", seed, steps)
	r := rand.New(rand.NewPCG(uint64(seed), 0xadd1))
	var accepted, rejected, freeFor int
	for k, done := 0, 0; done < steps; k++ {
		tree, desc, err := oracleTree(r)
		require.NoError(t, err, "seed %d, tree %d: %s", seed, k, desc)
		n := min(steps-done, 50+r.IntN(200))
		s, m := NewState(tree), newOracleModel(tree)
		gen := newOracleGen(r, tree)
		for step := range n {
			where := func() string {
				return fmt.Sprintf("seed %d, tree %d (%s), step %d", seed, k, desc, step)
			}
			op := addOneOp(gen, m)
			if len(op.Pods) == 1 && r.IntN(3) == 0 {
				aimPod(r, s, &op)
			}
			d := Delta{Ops: []Op{op}}
			if len(op.Pods) == 1 && op.Job >= 0 && op.Job <= MaxJobID && !(int(op.Job) < len(s.jobs) && s.jobs[op.Job].live) &&
				s.validateJob(&op.Info, op.Pods) == nil && s.freeFor(&op.Info, &op.Pods[0]) {
				freeFor++
			}
			before := mustMarshal(t, s)
			fast, slow := s.Clone(), s.Clone()
			errFast := fast.Apply(d)
			errSlow := slow.Apply(Delta{Ops: []Op{op, ExpireNominations(math.MinInt64)}})
			require.Equal(t, errSlow == nil, errFast == nil, "%s: %s\nfast: %v\ngeneral: %v", where(), oracleDelta(d), errFast, errSlow)
			require.NoError(t, fast.Check(), "%s: %s", where(), oracleDelta(d))
			if errFast != nil {
				rejected++
				require.Equal(t, errSlow.Error(), errFast.Error(), "%s: %s", where(), oracleDelta(d))
				require.True(t, bytes.Equal(before, mustMarshal(t, fast)), "%s: rejected %s changed the State", where(), oracleDelta(d))
			} else {
				accepted++
				// The same hosts have new generations (a journaled Delta bumps a
				// host's once, the journal-free path once per commit: a nominee's
				// host twice, for its nomination released and its pod placed).
				for h := range tree.NumHosts() {
					was := s.HostGeneration(HostID(h))
					require.Equal(t, slow.hostGen[h] != was, fast.hostGen[h] != was, "%s: %s: host %d's generation", where(), oracleDelta(d), h)
					slow.hostGen[h] = fast.hostGen[h]
				}
				require.True(t, bytes.Equal(mustMarshal(t, slow), mustMarshal(t, fast)), "%s: %s: the paths' snapshots differ", where(), oracleDelta(d))
				require.NoError(t, compareDerived(slow, fast), "%s: %s", where(), oracleDelta(d))
			}
			if errFast == nil && r.IntN(3) == 0 { // go on with the job added
				next, why := m.try(d, s.HostGeneration)
				require.NoError(t, why, "%s: the model rejects %s", where(), oracleDelta(d))
				s, m = fast, next
				continue
			}
			d = gen.delta(m, s)
			next, why := m.try(d, s.HostGeneration)
			err := s.Apply(d)
			require.Equal(t, why == nil, err == nil, "%s: %s\nApply: %v\nmodel: %v", where(), oracleDelta(d), err, why)
			if err == nil {
				m = next
			}
		}
		done += n
	}
	t.Logf("%d accepted, %d rejected; %d passed freeFor", accepted, rejected, freeFor)
	require.NotZero(t, accepted)
	require.NotZero(t, rejected)
	require.NotZero(t, freeFor)
}

// addOneOp draws an AddJob of one pod, trying the generator's AddJobs (which
// have 1 to 4 pods) until one has a single pod.
func addOneOp(gen *oracleGen, m *oracleModel) Op {
	gen.base = m // the model before the Delta (this one op)
	for {
		if op := gen.addOp(m); len(op.Pods) == 1 || gen.r.IntN(20) == 0 {
			return op
		}
	}
}

func mustMarshal(t *testing.T, s *State) []byte {
	t.Helper()
	b, err := s.MarshalBinary()
	require.NoError(t, err)
	return b
}

// compareDerived compares what the snapshot leaves out (derived data Check
// recomputes; the compact job view and counters it compares with the job
// table) between two States that hold the same jobs.
func compareDerived(a, b *State) error {
	switch {
	case a.JobIDBound() != b.JobIDBound() || a.NumPods() != b.NumPods() || a.NumJobs() != b.NumJobs():
		return fmt.Errorf("job id bound, pods or jobs differ: %d/%d/%d and %d/%d/%d",
			a.JobIDBound(), a.NumPods(), a.NumJobs(), b.JobIDBound(), b.NumPods(), b.NumJobs())
	case !slices.Equal(a.JobPriorities(), b.JobPriorities()) || !slices.Equal(a.JobPodCounts(), b.JobPodCounts()) ||
		!slices.Equal(a.JobMilliGPUs(), b.JobMilliGPUs()) || !slices.Equal(a.JobSizes(), b.JobSizes()) ||
		!slices.Equal(a.PreemptibleJobWords(), b.PreemptibleJobWords()):
		return fmt.Errorf("compact job views differ")
	case a.movHist != b.movHist || a.preSizeHist != b.preSizeHist || a.endJobs != b.endJobs:
		return fmt.Errorf("job histograms differ")
	case !slices.Equal(a.freeW, b.freeW) || !slices.Equal(a.idleHostW, b.idleHostW) || !slices.Equal(a.domFree, b.domFree) ||
		!slices.Equal(a.domShared, b.domShared) || !slices.Equal(a.domPre, b.domPre):
		return fmt.Errorf("aggregates differ")
	}
	return nil
}

// aimPod re-places op's one pod on a random GPU of a random host, whatever
// its state (failed, nominated, held, on an unhealthy host), as a share of
// about the GPU's free milli (one less, equal, one more) or as whole GPUs
// around the host's free ones, and gives op's one pod set, if any, its new
// shape: the edges of freeFor's checks (and now and then a share out of
// range).
func aimPod(r *rand.Rand, s *State, op *Op) {
	t := s.Tree()
	h := HostID(r.IntN(t.NumHosts()))
	lo, hi := t.HostGPUs(h)
	if lo == hi {
		return
	}
	g := lo + GPUID(r.IntN(int(hi-lo)))
	p := op.Pods[0]
	p.Host = h
	if p.Milli != 0 {
		p.GPUs = 1 << uint(g-lo)
		p.Milli = min(max(int32(s.gpuMilli(int(g)))+int32(r.IntN(3))-1, 1), FullGPU-1)
		if r.IntN(8) == 0 { // out of range
			p.Milli = oraclePick[int32](r, -1, FullGPU)
		}
	} else {
		p.GPUs = s.HostFreeMask(h)
		for m := p.GPUs; m != 0; m &= m - 1 { // a random subset of the free GPUs
			if r.IntN(2) == 0 {
				p.GPUs &^= m & -m
			}
		}
		if p.GPUs == 0 || r.IntN(4) == 0 {
			p.GPUs |= 1 << uint(g-lo)
		}
	}
	op.Pods = []Pod{p}
	if len(op.Info.Sets) == 1 {
		op.Info.Sets = []PodSet{op.Info.Sets[0]}
		op.Info.Sets[0].GPUs, op.Info.Sets[0].Milli = int32(p.NumGPUs()), p.Milli
	}
}
