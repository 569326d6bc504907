package defrag_test

import (
	"math/rand/v2"
	"testing"

	"github.com/blinksched/blink/defrag"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

// countIdle is the number of entirely free domains (hosts) of level l.
func countIdle(s *topology.State, l topology.Level) int {
	t := s.Tree()
	n := 0
	if l == t.HostLevel() {
		for h := range topology.HostID(t.NumHosts()) {
			if s.HostIdle(h) {
				n++
			}
		}
		return n
	}
	lo, hi := t.LevelDomains(l)
	for d := lo; d < hi; d++ {
		if s.DomainIdle(d) {
			n++
		}
	}
	return n
}

// gangOf is the largest gang of g-GPU pods one domain of level l takes.
func gangOf(s *topology.State, l topology.Level, g int) int {
	return bruteMetrics(s, g).Levels[l].LargestGang
}

// bestCompaction is the exhaustive optimum: the most free domains of level
// l after at most k moves (each job at most once, anywhere it keeps its
// constraints), by breadth-first search over memoised States.
func bestCompaction(s *topology.State, l topology.Level, k int) int {
	o := newOracle(s, nil, k)
	best := countIdle(s, l)
	frontier := []oracleState{{s: s}}
	seen := map[string]bool{o.key(s, 0): true}
	for depth := 0; depth < k; depth++ {
		var next []oracleState
		for _, st := range frontier {
			for i, j := range o.movable {
				if st.moved&(1<<uint(i)) != 0 {
					continue
				}
				o.eachPlacement(st.s, j, 0, 0, func(c *topology.State) {
					if depth == k-1 { // the last move: counted, not kept (keeping them held a square of States)
						best = max(best, countIdle(c, l))
						return
					}
					moved := st.moved | 1<<uint(i)
					key := o.key(c, moved)
					if seen[key] {
						return
					}
					seen[key] = true
					best = max(best, countIdle(c, l))
					next = append(next, oracleState{s: c, moved: moved})
				})
			}
		}
		frontier = next
	}
	return best
}

// TestCompact runs both goals on random small clusters: every plan applies
// move by move with Check clean and moved jobs valid, keeps to the budget,
// and reports Before, After and Reached truthfully; free-domain plans are
// compared with the exhaustive optimum (never better; how often equal is
// logged).
func TestCompact(t *testing.T) {
	seed := testSeed(t)
	n := testSteps(t, 300)
	var p defrag.Planner
	var plan defrag.Plan
	var compared, optimal, gained, reached int
	for i := range n {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		o := genOpts{maxMovable: 5, cpu: rng.IntN(3) == 0, sets: rng.IntN(2) == 0, health: rng.IntN(4) == 0}
		tree := genCluster(rng, o)
		s := topology.NewState(tree)
		genLoad(rng, s, o, 0.3+0.5*rng.Float64())
		l := tree.HostLevel() - topology.Level(rng.IntN(2))
		cfg := defrag.Config{MaxMoves: 1 + rng.IntN(3)}
		if rng.IntN(4) == 0 {
			cfg.MaxGPUsMoved = int64(1 + rng.IntN(4))
		}
		goal := defrag.Goal{Kind: defrag.FreeDomains, Level: l, Want: rng.IntN(3)}
		if rng.IntN(3) == 0 {
			goal = defrag.Goal{Kind: defrag.LargestGang, Level: l, GPUsPerPod: 1 + rng.IntN(2), Want: rng.IntN(6)}
		}
		before, _ := s.MarshalBinary()
		out, err := p.Compact(s, goal, cfg, &plan)
		require.NoError(t, err)
		after, _ := s.MarshalBinary()
		require.Equal(t, before, after, "Compact changed the State")
		c, err := checkPlan(s, &plan, nil, -1)
		require.NoError(t, err, "instance %d (seed %d)\n%s", i, seed, picture(s, nil, &plan))
		require.LessOrEqual(t, len(plan.Moves), cfg.MaxMoves)
		if cfg.MaxGPUsMoved > 0 {
			require.LessOrEqual(t, int64(plan.GPUs), cfg.MaxGPUsMoved)
		}
		if goal.Kind == defrag.FreeDomains {
			require.Equal(t, countIdle(s, l), out.Before)
			require.Equal(t, countIdle(c, l), out.After, "instance %d\n%s", i, picture(s, nil, &plan))
			require.Equal(t, goal.Want == 0 || out.After-out.Before >= goal.Want, out.Reached)
			if cfg.MaxGPUsMoved == 0 && cfg.MaxMoves <= 2 {
				best := bestCompaction(s, l, cfg.MaxMoves)
				require.LessOrEqual(t, out.After, best)
				compared++
				if out.After == best || goal.Want > 0 && out.After-out.Before >= goal.Want {
					optimal++
				}
			}
		} else {
			require.Equal(t, gangOf(s, l, goal.GPUsPerPod), out.Before)
			require.Equal(t, gangOf(c, l, goal.GPUsPerPod), out.After, "instance %d\n%s", i, picture(s, nil, &plan))
			require.Equal(t, goal.Want == 0 || out.After >= goal.Want, out.Reached)
			require.GreaterOrEqual(t, out.After, out.Before)
		}
		if out.After > out.Before {
			gained++
		}
		if out.Reached {
			reached++
		}
	}
	t.Logf("%d instances: %d improved, %d reached their goal; free domains: %d compared with the optimum, %d optimal or goal met",
		n, gained, reached, compared, optimal)
}

// TestCompactErrors: bad goals and configs are errors.
func TestCompactErrors(t *testing.T) {
	tree, err := topology.BuildShape(topology.Shape{Levels: []string{"rack"}, FanOut: []int{2, 2}, GPUsPerHost: 4})
	require.NoError(t, err)
	s := topology.NewState(tree)
	var p defrag.Planner
	var plan defrag.Plan
	for _, tc := range []struct {
		goal defrag.Goal
		cfg  defrag.Config
	}{
		{defrag.Goal{Level: 0}, defrag.Config{MaxMoves: 1}},
		{defrag.Goal{Level: 3}, defrag.Config{MaxMoves: 1}},
		{defrag.Goal{Level: 1, Want: -1}, defrag.Config{MaxMoves: 1}},
		{defrag.Goal{Kind: defrag.LargestGang, Level: 1}, defrag.Config{MaxMoves: 1}},
		{defrag.Goal{Kind: 7, Level: 1}, defrag.Config{MaxMoves: 1}},
		{defrag.Goal{Level: 1}, defrag.Config{MaxMoves: -1}},
	} {
		_, err := p.Compact(s, tc.goal, tc.cfg, &plan)
		require.ErrorIs(t, err, defrag.ErrInvalid, "%+v", tc)
	}
}
