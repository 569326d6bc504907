package scale

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/blinksched/blink/bench/report"
)

// Exit codes of Command.
const (
	ExitOK       = 0
	ExitInternal = 1 // the run failed
	ExitInvalid  = 2 // bad usage
)

// Usage is the synopsis of the scale subcommand.
const Usage = "usage: blink scale [-gpus 16k|131k|1M|8M] [-shape nvl72|hgx] [-load F] [-events N] [-seed S] [-patience N] [-json]"

// Command is the `blink scale` subcommand: it runs a synthetic event stream
// against an engine over a loaded cluster (see the package documentation)
// and prints the decision latency per kind of cycle, in µs and as ratios to
// the floor F, as a table or, with -json, as one JSON object. A progress bar
// appears on stderr when the run lasts more than a second.
func Command(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg Config
	fs.StringVar(&cfg.GPUs, "gpus", "1M", "nominal cluster `SIZE`: 16k, 131k, 1M or 8M")
	fs.StringVar(&cfg.Shape, "shape", "nvl72", "cluster `SHAPE`: nvl72 or hgx")
	fs.Float64Var(&cfg.Load, "load", 0.9, "fill the cluster to `F` (0…1) and keep it near F")
	fs.IntVar(&cfg.Events, "events", 1000, "`N` events (arrivals and departures)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed `S` of the event stream")
	fs.IntVar(&cfg.Patience, "patience", 100, "cancel a job still pending `N` events after it arrived or was evicted")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the table")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "%s\n\nRuns a seeded stream of job arrivals (openb-like sizes plus rare gangs of 72…200k GPUs)\n"+
			"and departures against the engine over a cluster filled to the load; after each event a cycle,\n"+
			"whose decisions are confirmed like a controller would. Prints cycle latency percentiles per kind\n"+
			"(place, reject, preempt, defrag, idle) in µs and as ratios to the floor F measured in the same process.\n\n", Usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitInvalid
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "blink scale: unexpected argument %q\n%s\n", fs.Arg(0), Usage)
		return ExitInvalid
	}
	if _, err := cfg.withDefaults(); err != nil || cfg.Events == 0 || cfg.Patience == 0 {
		if err == nil {
			err = errors.New("scale: -events and -patience must be positive")
		}
		return fail(stderr, ExitInvalid, err)
	}
	var bar *report.Progress
	cfg.Progress = func(done, total int) {
		if bar == nil {
			bar = report.NewProgress(stderr, int64(total), "scale")
		}
		bar.Set(int64(done))
	}
	res, err := Run(cfg)
	bar.Finish()
	if err != nil {
		return fail(stderr, ExitInternal, err)
	}
	if *asJSON {
		err = WriteJSON(stdout, res)
	} else {
		err = WriteText(stdout, res)
	}
	if err != nil {
		return fail(stderr, ExitInternal, err)
	}
	return ExitOK
}

// Summary is the machine-readable form of a Result (WriteJSON).
type Summary struct {
	Shape       string  `json:"shape"`
	GPUs        string  `json:"gpus"`
	ClusterGPUs int     `json:"cluster_gpus"`
	Seed        uint64  `json:"seed"`
	FillLoad    float64 `json:"fill_load"`
	EndLoad     float64 `json:"end_load"`
	FillJobs    int     `json:"fill_jobs"`
	Events      int     `json:"events"`
	Arrivals    int     `json:"arrivals"`
	Departures  int     `json:"departures"`
	GaveUp      int     `json:"gave_up"`
	Binds       int     `json:"binds"`
	Preemptions int     `json:"preemptions"`
	Victims     int     `json:"victims"`
	Moves       int     `json:"moves"`
	FloorNs     float64 `json:"floor_ns"`
	Digest      string  `json:"digest"`
	// Kinds has one entry per Kind, in Kind order; All covers every cycle.
	Kinds []KindSummary `json:"kinds"`
	All   KindSummary   `json:"all"`
}

// KindSummary gives one kind's cycle count and latency percentiles, in µs
// and as ratios to F (xF).
type KindSummary struct {
	Kind  string  `json:"kind"`
	Count int     `json:"count"`
	P50   float64 `json:"p50_us"`
	P90   float64 `json:"p90_us"`
	P99   float64 `json:"p99_us"`
	Max   float64 `json:"max_us"`
	P50xF float64 `json:"p50_xF"`
	P90xF float64 `json:"p90_xF"`
	P99xF float64 `json:"p99_xF"`
	MaxxF float64 `json:"max_xF"`
}

// Summarize computes r's Summary.
func Summarize(r *Result) Summary {
	s := Summary{Shape: r.Shape, GPUs: r.GPUs, ClusterGPUs: r.ClusterGPUs, Seed: r.Seed, FillLoad: r.FillLoad,
		EndLoad: r.EndLoad, FillJobs: r.FillJobs, Events: r.Events, Arrivals: r.Arrivals, Departures: r.Departures,
		GaveUp: r.GaveUp, Binds: r.Binds, Preemptions: r.Preemptions, Victims: r.Victims, Moves: r.Moves,
		FloorNs: r.FloorNs, Digest: fmt.Sprintf("%016x", r.Digest)}
	for k := range NumKinds {
		s.Kinds = append(s.Kinds, LatencySummary(k.String(), r.Latencies[k], r.FloorNs))
	}
	s.All = LatencySummary("all", r.All(), r.FloorNs)
	return s
}

// LatencySummary returns the count and percentiles (nearest rank) of
// latencies lat, labelled name, with their ratios to floor f ns. lat is not
// changed.
func LatencySummary(name string, lat []time.Duration, f float64) KindSummary {
	lat = sorted(lat)
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	xf := func(d time.Duration) float64 {
		if f <= 0 {
			return 0
		}
		return float64(d.Nanoseconds()) / f
	}
	p50, p90, p99, mx := percentile(lat, 50), percentile(lat, 90), percentile(lat, 99), percentile(lat, 100)
	return KindSummary{Kind: name, Count: len(lat), P50: us(p50), P90: us(p90), P99: us(p99), Max: us(mx),
		P50xF: xf(p50), P90xF: xf(p90), P99xF: xf(p99), MaxxF: xf(mx)}
}

// WriteJSON writes r's Summary as one indented JSON object.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Summarize(r))
}

// WriteText writes r as a short report and a table of latencies per kind.
func WriteText(w io.Writer, r *Result) error {
	s := Summarize(r)
	fmt.Fprintf(w, "scale: %s %s (%d GPUs) filled to %.2f%% (%d jobs); seed %d: %d events (%d arrivals, %d departures, %d gave up); load at the end %.2f%%\n",
		s.Shape, s.GPUs, s.ClusterGPUs, 100*s.FillLoad, s.FillJobs, s.Seed, s.Events, s.Arrivals, s.Departures,
		s.GaveUp, 100*s.EndLoad)
	fmt.Fprintf(w, "decisions: %d binds, %d preemptions (%d victims), %d moves; digest %s\n",
		s.Binds, s.Preemptions, s.Victims, s.Moves, s.Digest)
	fmt.Fprintf(w, "floor F = %.2f µs (bitset.Count over the %s free-mask, this process)\n\n", s.FloorNs/1e3, s.GPUs)
	fmt.Fprintf(w, "%-8s %7s %10s %10s %10s %10s %8s %8s %8s %8s\n",
		"kind", "cycles", "p50 µs", "p90 µs", "p99 µs", "max µs", "p50 xF", "p90 xF", "p99 xF", "max xF")
	var err error
	for _, k := range append(s.Kinds, s.All) {
		_, err = fmt.Fprintf(w, "%-8s %7d %10.1f %10.1f %10.1f %10.1f %8.2f %8.2f %8.2f %8.2f\n",
			k.Kind, k.Count, k.P50, k.P90, k.P99, k.Max, k.P50xF, k.P90xF, k.P99xF, k.MaxxF)
	}
	return err
}

func fail(stderr io.Writer, code int, err error) int {
	msg := strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(err.Error())
	fmt.Fprintf(stderr, "blink scale: %s\n", msg)
	return code
}
