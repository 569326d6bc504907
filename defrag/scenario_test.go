package defrag_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blinksched/blink/defrag"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt from the current output")

// Scenarios are clusters drawn as pictures, one line per host:
//
//	rack/host GPUs
//
// with one character per GPU: '.' free, 'x' failed, a letter the job using
// it whole (a host's GPUs of one letter are one pod). Lower-case jobs are
// movable and preemptible, upper-case ones are not. A host name prefixed
// '~' is draining, '!' failed. Each scenario plans, checks the plan (move by
// move, Check clean, moved jobs valid) and compares the rendering of the
// cluster before and after with testdata/NAME.txt (-update rewrites it).

// scenario builds the State of a picture; required gives jobs' required
// levels by letter.
func scenario(t *testing.T, picture string, required map[byte]string) *topology.State {
	t.Helper()
	type hostLine struct {
		name, path, gpus string
		health           topology.Health
	}
	var lines []hostLine
	var specs []topology.HostSpec
	for _, line := range strings.Split(strings.TrimSpace(picture), "\n") {
		f := strings.Fields(line)
		rack, host, _ := strings.Cut(f[0], "/")
		hl := hostLine{name: host, path: rack, gpus: f[1]}
		switch host[0] {
		case '~':
			hl.name, hl.health = host[1:], topology.Draining
		case '!':
			hl.name, hl.health = host[1:], topology.Failed
		}
		lines = append(lines, hl)
		specs = append(specs, topology.HostSpec{Name: hl.name, Path: []string{rack}, GPUs: len(hl.gpus),
			CPUMilli: topology.Unlimited, MemoryMiB: topology.Unlimited})
	}
	tree, err := topology.BuildHosts([]string{"rack"}, specs)
	require.NoError(t, err)
	s := topology.NewState(tree)
	pods := map[byte][]topology.Pod{}
	var letters []byte
	for _, hl := range lines {
		h, _ := tree.HostByName(hl.name)
		masks := map[byte]uint64{}
		var order []byte
		for i := range len(hl.gpus) {
			c := hl.gpus[i]
			switch {
			case c == 'x':
				lo, _ := tree.HostGPUs(h)
				mustApply(s, topology.SetGPUHealth(lo+topology.GPUID(i), topology.Failed))
			case c != '.':
				if masks[c] == 0 {
					order = append(order, c)
				}
				masks[c] |= 1 << uint(i)
			}
		}
		for _, c := range order {
			if len(pods[c]) == 0 {
				letters = append(letters, c)
			}
			pods[c] = append(pods[c], topology.Pod{Host: h, GPUs: masks[c]})
		}
	}
	slices.Sort(letters)
	for _, c := range letters {
		lower := c >= 'a' && c <= 'z'
		info := topology.Job{Priority: 1, Preemptible: lower, Movable: lower, Required: topology.NoLevel, Preferred: topology.NoLevel}
		if name, ok := required[c]; ok {
			info.Required, _ = tree.LevelByName(name)
		}
		mustApply(s, topology.AddJob(letterID(c), info, pods[c]...))
	}
	for _, hl := range lines {
		if hl.health != topology.Healthy {
			h, _ := tree.HostByName(hl.name)
			mustApply(s, topology.SetHostHealth(h, hl.health))
		}
	}
	return s
}

// letterID is the job id of a letter, so that render draws it back.
func letterID(c byte) topology.JobID {
	if c >= 'a' && c <= 'z' {
		return topology.JobID(c - 'a')
	}
	return topology.JobID(c-'A') + 26
}

// golden compares got with testdata/name.txt.
func golden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", name+".txt")
	if *update {
		require.NoError(t, os.WriteFile(file, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(file)
	require.NoError(t, err, "run go test -run TestScenarios -update to create it")
	require.Equal(t, string(want), got)
}

// metricsLine renders the rack level's figures.
func metricsLine(s *topology.State, g int) string {
	var m defrag.Meter
	var got defrag.Metrics
	m.Measure(s, g, &got)
	r := got.Levels[1]
	return fmt.Sprintf("racks free %d of %d, free GPUs %d (%d in free racks), topofrag %.2f, largest %d-GPU gang in a rack %d\n",
		r.FreeDomains, r.Domains, r.FreeGPUs, r.FreeInFreeDomains, r.TopoFrag(), g, r.LargestGang)
}

func TestScenarios(t *testing.T) {
	rack := topology.Level(1)
	whole := func(pods, gpus int32) *placement.Request {
		return &placement.Request{Job: letterID('Z'), Priority: 100, Required: rack, Preferred: topology.NoLevel,
			Sets: []placement.PodSet{{Pods: pods, GPUs: gpus}}}
	}
	tests := []struct {
		name     string
		picture  string
		required map[byte]string
		req      *placement.Request // MakeRoom, or
		goal     *defrag.Goal       // Compact
		moves    int
		want     int // moves expected (MakeRoom), or After (Compact)
	}{{
		name: "one_move_clears_a_rack",
		// Each rack misses GPUs; moving a (1 GPU) out of r0 is the cheapest.
		picture: `
r0/h0 a...
r0/h1 ....
r1/h2 bb..
r1/h3 ....
r2/h4 CC..`,
		req: whole(2, 4), moves: 8, want: 1,
	}, {
		name: "helper_makes_room",
		// b (2 GPUs on one host) must leave r0; the only host with room for
		// it is h3 once the helper c moves to h4.
		picture: `
r0/h0 bb..
r0/h1 ....
r1/h2 DDD.
r1/h3 c.EE
r2/h4 FFF.
r2/h5 GGGG`,
		req: whole(2, 4), moves: 3, want: 2,
	}, {
		name: "moved_job_keeps_its_rack",
		// a needs one rack for both its pods: only r2 has room for both.
		picture: `
r0/h0 aa..
r0/h1 aa..
r1/h2 BB..
r1/h3 ....
r2/h4 ....
r2/h5 CCCC`,
		required: map[byte]string{'a': "rack"},
		req:      whole(2, 4), moves: 8, want: 1,
	}, {
		name: "draining_and_failed_take_nothing",
		// r1's hosts are draining and failed: a goes to r2.
		picture: `
r0/h0 .aa.
r0/h1 ....
r1/~h2 ....
r1/!h3 ....
r2/h4 BB..`,
		req: whole(2, 4), moves: 8, want: 1,
	}, {
		name: "compact_frees_racks",
		// Two racks can be emptied with 3 moves; r3's job cannot move.
		picture: `
r0/h0 a...
r0/h1 .b..
r1/h2 c...
r1/h3 ....
r2/h4 dd..
r2/h5 eee.
r3/h6 FFFF
r3/h7 G...`,
		goal:  &defrag.Goal{Kind: defrag.FreeDomains, Level: rack, Want: 2},
		moves: 3, want: 2,
	}, {
		name: "compact_grows_the_largest_gang",
		// Whole-host pods: r1 holds one; freeing h3 makes it two.
		picture: `
r0/h0 a...
r0/h1 B...
r1/h2 ....
r1/h3 c.d.
r2/h4 ee..
r2/h5 FF..`,
		goal:  &defrag.Goal{Kind: defrag.LargestGang, Level: rack, GPUsPerPod: 4},
		moves: 4, want: 2,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := scenario(t, tc.picture, tc.required)
			var p defrag.Planner
			var plan defrag.Plan
			var b strings.Builder
			cfg := defrag.Config{MaxMoves: tc.moves}
			var after *topology.State
			var err error
			if tc.req != nil {
				res, err := p.MakeRoom(s, tc.req, cfg, &plan)
				require.NoError(t, err)
				require.True(t, res.Fits, res.Reason.Format(s.Tree()))
				require.True(t, res.Exact)
				require.Len(t, plan.Moves, tc.want)
				after, err = checkPlan(s, &plan, tc.req, plan.Target)
				require.NoError(t, err, picture(s, tc.req, &plan))
				fmt.Fprintf(&b, "MakeRoom: %s, at most %d moves\n", requestString(s.Tree(), tc.req), tc.moves)
			} else {
				out, err2 := p.Compact(s, *tc.goal, cfg, &plan)
				require.NoError(t, err2)
				require.Equal(t, tc.want, out.After, picture(s, nil, &plan))
				require.True(t, out.Reached)
				after, err = checkPlan(s, &plan, nil, -1)
				require.NoError(t, err, picture(s, nil, &plan))
				fmt.Fprintf(&b, "Compact: %s at level %s (want %d), at most %d moves: %d → %d\n",
					tc.goal.Kind, s.Tree().LevelName(tc.goal.Level), tc.goal.Want, tc.moves, out.Before, out.After)
			}
			b.WriteString("before:\n" + render(s) + metricsLine(s, 4))
			for i, mv := range plan.Moves {
				fmt.Fprintf(&b, "move %d: %c →", i+1, jobChar(mv.Job))
				for _, pod := range mv.Pods {
					b.WriteString(" " + podString(s.Tree(), pod))
				}
				b.WriteByte('\n')
			}
			if tc.req != nil {
				b.WriteString("request →")
				for _, pod := range plan.Request.Pods {
					b.WriteString(" " + podString(s.Tree(), pod))
				}
				b.WriteByte('\n')
			}
			b.WriteString("after:\n" + render(after) + metricsLine(after, 4))
			golden(t, tc.name, b.String())
		})
	}
}
