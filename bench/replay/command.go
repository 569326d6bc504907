package replay

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/blinksched/blink/bench/openb"
	"github.com/blinksched/blink/bench/report"
)

// Exit codes of Command.
const (
	ExitOK       = 0
	ExitInternal = 1 // the replay, the log or the plot failed
	ExitInvalid  = 2 // bad usage or an unreadable trace
)

// Usage is the synopsis of the replay subcommand.
const Usage = "usage: blink replay -pods FILE -nodes FILE [-compress F] [-tree flat|pool] [-log FILE] [-plot out.png]"

// Command is the `blink replay` subcommand: it replays the pod list on the
// node list (see the package documentation), prints a summary, and writes
// the JSON-lines log (-log) and a PNG of allocation, waiting pods and
// fragmentation over time (-plot). A progress bar appears on stderr when
// the replay lasts more than a second.
func Command(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, code, ok := parseFlags(args, stderr)
	if !ok {
		return code
	}
	c, pods, code, err := o.load(stderr)
	if err != nil {
		return fail(stderr, code, err)
	}
	if code != ExitOK {
		return code
	}
	res, err := o.run(c, pods, stderr)
	if err != nil {
		return fail(stderr, ExitInternal, err)
	}
	if err := WriteSummary(stdout, res); err != nil {
		return fail(stderr, ExitInternal, err)
	}
	if o.plot != "" {
		if err := Plot(o.plot, res); err != nil {
			return fail(stderr, ExitInternal, err)
		}
	}
	return ExitOK
}

// options are the replay subcommand's flags.
type options struct {
	pods, nodes, tree, log, plot string
	compress                     float64
}

// parseFlags reads the flags; ok false with the exit code when the command
// ends here (help, or a usage error written to stderr).
func parseFlags(args []string, stderr io.Writer) (o options, code int, ok bool) {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.pods, "pods", "", "pod list `FILE` (CSV with creation_time and deletion_time)")
	fs.StringVar(&o.nodes, "nodes", "", "node list `FILE` (CSV: sn, cpu_milli, memory_mib, gpu, model)")
	fs.StringVar(&o.tree, "tree", openb.Flat, "the cluster's `TREE`: flat (no levels) or pool (one level of node pools by instance type)")
	fs.Float64Var(&o.compress, "compress", 1, "divide arrival times by `F`, keeping each pod's duration (F > 1 loads the cluster F times as much)")
	fs.StringVar(&o.log, "log", "", "write every event and decision as JSON lines to `FILE`")
	fs.StringVar(&o.plot, "plot", "", "write allocation, waiting pods and fragmentation over time to a PNG `FILE`")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "%s\n\nReplays a pod list by its creation and deletion times through Blink's placement:\n"+
			"a pod that does not fit waits in a FIFO queue (with backfill) and is retried when capacity frees.\n"+
			"Prints time-weighted GPU allocation, waiting pods, fragmentation and decision latency.\n\n", Usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, ExitOK, false
		}
		return o, ExitInvalid, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "blink replay: unexpected argument %q\n%s\n", fs.Arg(0), Usage)
		return o, ExitInvalid, false
	}
	if o.pods == "" || o.nodes == "" {
		fmt.Fprintf(stderr, "blink replay: -pods and -nodes are required\n%s\n", Usage)
		return o, ExitInvalid, false
	}
	return o, ExitOK, true
}

// load reads the node and pod lists and builds the cluster, the pods'
// arrivals compressed; an error with its exit code, or a usage error
// written to stderr (its code, no error).
func (o *options) load(stderr io.Writer) (*openb.Cluster, []openb.Pod, int, error) {
	nodes, err := openb.LoadNodes(o.nodes)
	if err != nil {
		return nil, nil, ExitInvalid, err
	}
	pods, err := openb.LoadPods(o.pods)
	if err != nil {
		return nil, nil, ExitInvalid, err
	}
	if !(o.compress >= 1) {
		fmt.Fprintf(stderr, "blink replay: -compress %v, want ≥ 1\n%s\n", o.compress, Usage)
		return nil, nil, ExitInvalid, nil
	}
	Compress(pods, o.compress)
	c, err := openb.NewCluster(nodes, o.tree)
	if err != nil {
		return nil, nil, ExitInvalid, err
	}
	if c.GPUs == 0 {
		return nil, nil, ExitInvalid, fmt.Errorf("%s: the nodes have no GPUs", o.nodes)
	}
	return c, pods, ExitOK, nil
}

// run replays pods on c, writing the log (-log) and a progress bar on
// stderr.
func (o *options) run(c *openb.Cluster, pods []openb.Pod, stderr io.Writer) (*Result, error) {
	var cfg Config
	var logFile *os.File
	if o.log != "" {
		var err error
		if logFile, err = os.Create(o.log); err != nil {
			return nil, err
		}
		cfg.Log = logFile
	}
	var bar *report.Progress
	cfg.Progress = func(done, total int) {
		if bar == nil {
			bar = report.NewProgress(stderr, int64(total), "replay")
		}
		bar.Set(int64(done))
	}
	res, err := Run(c, pods, cfg)
	bar.Finish()
	if logFile != nil {
		if cerr := logFile.Close(); err == nil {
			err = cerr
		}
	}
	return res, err
}

// Compress divides the pods' creation times by f (rounding down), keeping
// each pod's duration: deletion − creation. f = 1 changes nothing.
func Compress(pods []openb.Pod, f float64) {
	if f == 1 {
		return
	}
	for i := range pods {
		p := &pods[i]
		c := int64(float64(p.Creation) / f)
		if p.HasDeletion {
			p.Deletion = c + (p.Deletion - p.Creation)
		}
		p.Creation = c
	}
}

// WriteSummary prints a replay's measurements as text.
func WriteSummary(w io.Writer, r *Result) error {
	fmt.Fprintf(w, "replay: %d pods on %d nodes (%d GPUs); arrivals at t = %d…%d s (%.2f days), last event at %d s\n",
		r.Pods, r.Nodes, r.GPUs, r.Start, r.LastArrival, float64(r.LastArrival-r.Start)/86400, r.End)
	fmt.Fprintf(w, "pods: %d placed at arrival, %d after waiting, %d gave up at their deletion time, %d still waiting at the end\n",
		r.PlacedAtArrival, r.PlacedAfterWait, r.GaveUp, r.StillWaiting)
	fmt.Fprintf(w, "GPU allocation: %.2f%% time-weighted over the arrivals, %.2f%% peak\n", r.AllocMean, r.AllocMax)
	fmt.Fprintf(w, "waiting pods: %.2f time-weighted, %d peak; wait of pods that waited: p50 %d s, p99 %d s, max %d s\n",
		r.WaitingMean, r.WaitingMax, Percentile(r.Waits, 50), Percentile(r.Waits, 99), Percentile(r.Waits, 100))
	at90 := "allocation never reached 90%"
	if r.FragAt90N > 0 {
		at90 = fmt.Sprintf("%.2f%% mean while allocation ≥ 90%%", r.FragAt90)
	}
	fmt.Fprintf(w, "fragmentation (free GPU that %s pods cannot use): %.2f%% time-weighted, %s\n",
		requestName(r.FragGPUs, r.FragMilli), r.FragMean, at90)
	_, err := fmt.Fprintf(w, "decision latency: p50 %v, p99 %v, max %v over %d Place calls\n",
		round(Percentile(r.Latencies, 50)), round(Percentile(r.Latencies, 99)), round(Percentile(r.Latencies, 100)),
		len(r.Latencies))
	return err
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d >= time.Microsecond:
		return d.Round(100 * time.Nanosecond)
	}
	return d
}

func requestName(gpus, milli int32) string {
	if milli > 0 {
		return fmt.Sprintf("%d-milli-GPU", milli)
	}
	return fmt.Sprintf("%d-GPU", gpus)
}

// Plot writes a PNG of allocation, waiting pods and fragmentation over the
// arrival window [Start, LastArrival], one panel each; the time axis is in
// seconds, minutes, hours or days since the first arrival, whichever suits
// the window.
func Plot(path string, r *Result) error {
	span := r.LastArrival - r.Start
	unit, name := int64(1), "seconds"
	for _, u := range []struct {
		s    int64
		name string
	}{{86400, "days"}, {3600, "hours"}, {60, "minutes"}} {
		if span >= 2*u.s {
			unit, name = u.s, u.name
			break
		}
	}
	var x, alloc, waiting, frag []float64
	for i, t := range r.Series.T {
		if t > r.LastArrival && len(x) > 0 {
			break
		}
		x = append(x, float64(t-r.Start)/float64(unit))
		alloc = append(alloc, r.Series.Alloc[i])
		waiting = append(waiting, float64(r.Series.Waiting[i]))
		frag = append(frag, r.Series.Frag[i])
	}
	xl := name + " since the first arrival"
	return report.WritePNG(path, 1, 24*vg.Centimeter, 24*vg.Centimeter,
		report.Panel{Title: fmt.Sprintf("GPU allocation (time-weighted %.1f%%, peak %.1f%%)", r.AllocMean, r.AllocMax),
			XLabel: xl, YLabel: "allocated GPUs (%)", YMin: 0, YMax: min(100, max(5, 1.2*r.AllocMax)),
			Series: []report.Series{{X: x, Y: alloc}}},
		report.Panel{Title: fmt.Sprintf("pods waiting (peak %d)", r.WaitingMax), XLabel: xl, YLabel: "pods",
			Series: []report.Series{{X: x, Y: waiting}}},
		report.Panel{Title: "fragmentation: free GPU that " + requestName(r.FragGPUs, r.FragMilli) + " pods cannot use",
			XLabel: xl, YLabel: "% of free GPU", YMin: 0, YMax: 100,
			Series: []report.Series{{X: x, Y: frag}}})
}

func fail(stderr io.Writer, code int, err error) int {
	msg := strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(err.Error())
	fmt.Fprintf(stderr, "blink replay: %s\n", msg)
	return code
}
