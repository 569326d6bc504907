// Defrag shows topology fragmentation and the plans that undo it on one
// GB200 NVL72 block (128 racks of 18 hosts × 4 GPUs) filled by bench.Fill,
// then fragmented by bench.Fragment: a one-GPU job lands in every empty
// rack, so a job that needs a whole rack no longer fits although a quarter
// of the GPUs are free. The program prints the fragmentation metrics; plans
// the fewest moves that let one rack job in (defrag.Planner.MakeRoom); plans
// a compaction that empties whole racks (defrag.Planner.Compact); prints the
// moves and the metrics after them; and writes heat maps of the cluster
// before and after the compaction (one tile per rack, one row per host, one
// cell per GPU, coloured by job) to a directory.
//
//	go run ./examples/defrag                # pictures in a new temporary directory
//	go run ./examples/defrag -out docs      # the README's pictures
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/blinksched/blink/bench"
	"github.com/blinksched/blink/bench/heatmap"
	"github.com/blinksched/blink/defrag"
	"github.com/blinksched/blink/placement"
	"github.com/blinksched/blink/topology"
)

// config is what the flags set.
type config struct {
	out   string  // directory for the pictures ("": a new temporary one)
	load  float64 // fill load
	seed  uint64
	racks int // racks to empty
	moves int // move budget of the compaction
	show  int // moves to print
}

func main() {
	var c config
	flag.StringVar(&c.out, "out", "", "directory for defrag-before.png and defrag-after.png (default: a new temporary directory)")
	flag.Float64Var(&c.load, "load", 0.7, "load the cluster is filled to, 0…1")
	flag.Uint64Var(&c.seed, "seed", bench.DefaultSeed, "fill seed")
	flag.IntVar(&c.racks, "racks", 12, "racks to empty")
	flag.IntVar(&c.moves, "moves", 40, "most moves of the compaction")
	flag.IntVar(&c.show, "show", 6, "moves to print")
	flag.Parse()
	if err := run(os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "defrag:", err)
		os.Exit(1)
	}
}

// run builds and fills the cluster, plans, prints and draws.
func run(w io.Writer, c config) error {
	tree, err := topology.BuildShape(topology.NVL72(1))
	if err != nil {
		return err
	}
	s := topology.NewState(tree)
	st, err := bench.Fill(s, c.load, c.seed)
	if err != nil {
		return err
	}
	added, err := bench.Fragment(s, c.seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "cluster: 1 NVL72 block, %d racks, %d GPUs, filled to %.0f%% (%d jobs), then %d one-GPU jobs in the empty racks\n\n",
		tree.NumGPUs()/72, tree.NumGPUs(), 100*st.Load, st.Jobs, added)
	var m defrag.Meter
	var metrics defrag.Metrics
	m.Measure(s, 4, &metrics)
	printMetrics(w, tree, "before", &metrics)

	// One rack job: 18 pods of 4 GPUs in one rack.
	rack, _ := tree.LevelByName("rack")
	req := placement.Request{Job: s.JobIDBound(), Priority: 100, Required: rack, Preferred: topology.NoLevel,
		Sets: []placement.PodSet{{Pods: 18, GPUs: 4}}}
	var p defrag.Planner
	var plan defrag.Plan
	start := time.Now()
	res, err := p.MakeRoom(s, &req, defrag.Config{MaxMoves: 8}, &plan)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nrack job (18 × 4 GPUs, required rack): fits %v after %s (%s moved, fewest proven: %v, planned in %v)\n",
		res.Fits, count(len(plan.Moves), "move"), count(plan.GPUs, "GPU"), res.Exact, time.Since(start).Round(time.Microsecond))
	printMoves(w, s, &plan, c.show)
	if res.Fits {
		fmt.Fprintf(w, "  then the job goes to %s\n", tree.DomainPath(plan.Request.Domain))
	}

	// Compaction: empty whole racks.
	goal := defrag.Goal{Kind: defrag.FreeDomains, Level: rack, Want: c.racks}
	start = time.Now()
	out, err := p.Compact(s, goal, defrag.Config{MaxMoves: c.moves}, &plan)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\ncompaction: empty %d racks with at most %d moves: %d → %d empty racks, %s, %s moved, reached %v (planned in %v)\n",
		c.racks, c.moves, out.Before, out.After, count(len(plan.Moves), "move"), count(plan.GPUs, "GPU"), out.Reached, time.Since(start).Round(time.Microsecond))
	printMoves(w, s, &plan, c.show)

	dir := c.out
	if dir == "" {
		if dir, err = os.MkdirTemp("", "blink-defrag-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	opts := heatmap.Options{Cell: 4, PerRow: 16}
	before, after := filepath.Join(dir, "defrag-before.png"), filepath.Join(dir, "defrag-after.png")
	if err := heatmap.WritePNG(before, s, opts); err != nil {
		return err
	}
	if err := s.Apply(plan.Delta()); err != nil {
		return fmt.Errorf("the plan does not apply: %w", err)
	}
	if err := heatmap.WritePNG(after, s, opts); err != nil {
		return err
	}
	m.Measure(s, 4, &metrics)
	fmt.Fprintln(w)
	printMetrics(w, tree, "after the compaction", &metrics)
	fmt.Fprintf(w, "\nheat maps: %s and %s\n", before, after)
	return nil
}

// printMoves prints the first show moves of plan: job, GPUs, from, to.
func printMoves(w io.Writer, s *topology.State, plan *defrag.Plan, show int) {
	t := s.Tree()
	for i, mv := range plan.Moves {
		if i == show {
			fmt.Fprintf(w, "  … %d more\n", len(plan.Moves)-i)
			return
		}
		from := s.AppendJobPods(nil, mv.Job)
		fmt.Fprintf(w, "  move job %d (%s): %s → %s\n", mv.Job, count(mv.GPUs, "GPU"), t.HostName(from[0].Host), t.HostName(mv.Pods[0].Host))
	}
}

// printMetrics prints the SU, rack and host levels' figures.
func printMetrics(w io.Writer, t *topology.Tree, when string, m *defrag.Metrics) {
	fmt.Fprintf(w, "metrics %s: %d GPUs free, %d milli-GPU stranded on shared GPUs\n", when, m.FreeGPUs, m.SharedMilli)
	for _, l := range m.Levels[2:] {
		fmt.Fprintf(w, "  %-4s %4d of %4d empty, %4d GPUs in them, topology fragmentation %.2f, largest 4-GPU gang %3d pods\n",
			t.LevelName(l.Level), l.FreeDomains, l.Domains, l.FreeInFreeDomains, l.TopoFrag(), l.LargestGang)
	}
}

// count is "1 move", "2 moves".
func count(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
