package topology

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOracle applies random Deltas to random small trees and compares the
// State, after every step, with the simple model of oracle_model_test.go:
// whether the Delta is accepted, every query of the read API, Check, that a
// rejected Delta leaves MarshalBinary byte-identical, that a host that
// changed has a new generation and is in the touch log; and now and then Clone and the
// MarshalBinary/UnmarshalBinary round trip.
//
// BLINK_SEED=n runs one seed only (failures name theirs: the run replays
// exactly, whatever BLINK_STEPS);
// BLINK_STEPS=n sets the total number of steps (default 10,000).
func TestOracle(t *testing.T) {
	seeds := []uint64{1, 0x5eed, 20260101, 0xb11dc0de}
	steps := 10_000
	if testing.Short() {
		steps = 2_000
	}
	if v := os.Getenv("BLINK_STEPS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "BLINK_STEPS")
		steps = n
	}
	if v := os.Getenv("BLINK_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 0, 64)
		require.NoError(t, err, "BLINK_SEED")
		seeds = []uint64{n}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			n := steps / len(seeds)
			t.Logf("seed %d, %d steps", seed, n)
			oracleRunSeed(t, seed, n)
		})
	}
}

func oracleRunSeed(t *testing.T, seed uint64, steps int) {
	r := rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc908))
	var st oracleStats
	defer func() { t.Logf("%d trees, %d GPUs at most; %s", st.trees, st.maxGPUs, &st) }()
	for k, done := 0, 0; done < steps; k++ {
		tree, desc, err := oracleTree(r)
		require.NoError(t, err, "seed %d, tree %d: %s", seed, k, desc)
		n := min(steps-done, 100+r.IntN(400))
		st.trees++
		st.maxGPUs = max(st.maxGPUs, tree.NumGPUs())
		o := &oracleRun{t: t, r: r, seed: seed, tree: k, desc: desc, st: &st}
		o.run(tree, n)
		done += n
	}
}

// oracleRun is one tree's run.
type oracleRun struct {
	t    *testing.T
	r    *rand.Rand
	seed uint64
	tree int
	desc string
	step int
	d    Delta // the step's Delta, named in failures
	st   *oracleStats
}

// oracleStats counts what a run exercised, to see that the generator keeps
// a useful mix of accepted and rejected operations.
type oracleStats struct {
	trees, maxGPUs     int
	accepted, rejected int
	ops                [OpReplacePods + 1][2]int // per kind: in accepted, in rejected Deltas
	pods, maxPods      int                       // pods over accepted steps, most at once
	noms               int                       // nominations over accepted steps
}

func (st *oracleStats) String() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d Deltas accepted, %d rejected; mean %.1f pods (max %d), %.1f nominations; per op kind accepted/rejected:",
		st.accepted, st.rejected, float64(st.pods)/float64(max(1, st.accepted)), st.maxPods,
		float64(st.noms)/float64(max(1, st.accepted)))
	for k := OpAddJob; k <= OpReplacePods; k++ {
		fmt.Fprintf(&b, " %s %d/%d,", k, st.ops[k][0], st.ops[k][1])
	}
	return b.String()
}

func (st *oracleStats) count(d Delta, s *State, ok bool) {
	i := 1
	if ok {
		i = 0
		st.accepted++
		st.pods += s.NumPods()
		st.maxPods = max(st.maxPods, s.NumPods())
		st.noms += s.NumNominations()
	} else {
		st.rejected++
	}
	for _, op := range d.Ops {
		if op.Kind >= OpAddJob && op.Kind <= OpReplacePods {
			st.ops[op.Kind][i]++
		}
	}
}

func (o *oracleRun) fatalf(format string, args ...any) {
	o.t.Helper()
	o.t.Fatalf("seed %d, tree %d (%s), step %d: %s\ndelta:%s\nreplay: BLINK_SEED=%d go test ./topology -run 'TestOracle$'",
		o.seed, o.tree, o.desc, o.step, fmt.Sprintf(format, args...), oracleDelta(o.d), o.seed)
}

func (o *oracleRun) marshal(s *State) []byte {
	o.t.Helper()
	b, err := s.MarshalBinary()
	if err != nil {
		o.fatalf("MarshalBinary: %v", err)
	}
	return b
}

// verify runs Check and compares every query with the view.
func (o *oracleRun) verify(s *State, m *oracleModel, v *oracleView, what string) {
	o.t.Helper()
	if err := s.Check(); err != nil {
		o.fatalf("%s: Check: %v", what, err)
	}
	if err := oracleCompare(s, m, v, o.r.IntN); err != nil {
		o.fatalf("%s: %v", what, err)
	}
}

func (o *oracleRun) run(tree *Tree, steps int) {
	r := o.r
	s, m := NewState(tree), newOracleModel(tree)
	v := m.view()
	o.d = Delta{}
	o.verify(s, m, v, "new State")
	gen := newOracleGen(r, tree)
	var frozen *State // a clone or the original, kept aside to prove independence
	var frozenBytes []byte
	frozenUntil := 0
	gens := make([]uint32, tree.NumHosts())
	var touched touchProbe
	for o.step = 0; o.step < steps; o.step++ {
		d := gen.delta(m, s)
		o.d = d
		for h := range gens {
			gens[h] = s.HostGeneration(HostID(h))
		}
		before := o.marshal(s)
		touched.before(s)
		next, why := m.try(d, s.HostGeneration)
		err := s.Apply(d)
		o.st.count(d, s, err == nil)
		switch {
		case (err == nil) != (why == nil):
			o.fatalf("Apply: %v\noracle: %v", err, why)
		case err != nil && !oracleRejected(err):
			o.fatalf("Apply: %v wraps neither ErrInvalid nor ErrStale", err)
		case err != nil:
			if after := o.marshal(s); !bytes.Equal(before, after) {
				o.fatalf("rejected Delta (%v) changed the snapshot", err)
			}
			o.verify(s, m, v, "after a rejected Delta")
		default:
			nv := next.view()
			o.verify(s, next, nv, "after an accepted Delta")
			if msg := touched.after(s); msg != "" {
				o.fatalf("touch log: %s", msg)
			}
			for hi := range gens {
				h := HostID(hi)
				if s.HostGeneration(h) == gens[h] && !oracleSameHost(v, nv, m, next, h) {
					o.fatalf("host %d changed but its generation stayed %d", h, gens[h])
				}
			}
			m, v = next, nv
		}
		gen.prevGen = append(gen.prevGen[:0], gens...)

		if frozen == nil && r.IntN(40) == 0 {
			frozenBytes = o.marshal(s)
			c := s.Clone()
			if cb := o.marshal(c); !bytes.Equal(cb, frozenBytes) {
				o.fatalf("Clone's snapshot differs from the original's")
			}
			o.verify(c, m, v, "Clone")
			if r.IntN(2) == 0 { // go on with the clone, freeze the original
				s, c = c, s
			}
			frozen, frozenUntil = c, o.step+5+r.IntN(30)
		}
		if frozen != nil && o.step >= frozenUntil {
			o.checkFrozen(frozen, frozenBytes, s)
			frozen = nil
		}
		if r.IntN(25) == 0 {
			s = o.roundTrip(tree, s, m, v)
		}
	}
}

// checkFrozen proves a State set aside at a Clone did not see the live
// State's Applies, and that changing it now leaves the live State alone.
func (o *oracleRun) checkFrozen(frozen *State, frozenBytes []byte, live *State) {
	o.t.Helper()
	if b := o.marshal(frozen); !bytes.Equal(b, frozenBytes) {
		o.fatalf("a State set aside at a Clone changed while its twin was applied to")
	}
	if err := frozen.Check(); err != nil {
		o.fatalf("State set aside at a Clone: Check: %v", err)
	}
	liveBytes := o.marshal(live)
	ops := []Op{SetDomainHealth(0, Failed)}
	for id := range frozen.JobIDBound() {
		if frozen.HasJob(id) {
			ops = append(ops, RemoveJob(id))
		}
	}
	ops = append(ops, ExpireNominations(NoEnd))
	if err := frozen.Apply(Delta{Ops: ops}); err != nil {
		o.fatalf("clearing the State set aside at a Clone: %v", err)
	}
	if err := frozen.Check(); err != nil {
		o.fatalf("State set aside at a Clone, cleared: Check: %v", err)
	}
	if b := o.marshal(live); !bytes.Equal(b, liveBytes) {
		o.fatalf("changing one of two Clone twins changed the other")
	}
}

// roundTrip decodes s's snapshot into a fresh State, checks it and that it
// encodes to the same bytes, and returns either State to go on with.
func (o *oracleRun) roundTrip(tree *Tree, s *State, m *oracleModel, v *oracleView) *State {
	o.t.Helper()
	b := o.marshal(s)
	n := NewState(tree)
	if err := n.UnmarshalBinary(b); err != nil {
		o.fatalf("UnmarshalBinary of a MarshalBinary snapshot: %v", err)
	}
	if b2 := o.marshal(n); !bytes.Equal(b, b2) {
		o.fatalf("MarshalBinary → UnmarshalBinary → MarshalBinary is not byte-identical")
	}
	o.verify(n, m, v, "decoded snapshot")
	if o.r.IntN(3) == 0 {
		return n
	}
	return s
}
