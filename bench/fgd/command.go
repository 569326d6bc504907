package fgd

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/blinksched/blink/bench/openb"
	"github.com/blinksched/blink/bench/report"
)

// Exit codes of Command.
const (
	ExitOK       = 0
	ExitInternal = 1 // a run or the output failed
	ExitInvalid  = 2 // bad usage or an unreadable trace
)

// Usage is the synopsis of the fgd subcommand.
const Usage = "usage: blink fgd -nodes FILE -pods FILE [-seeds 42-51] [-policy blink|blink-bestfit|bestfit|random,...] [-tree flat|pool] [-vary KIND=P] [-json] [-plot out.png]"

// DefaultSeeds are the FGD paper's ten seeds.
const DefaultSeeds = "42-51"

// Command is the `blink fgd` subcommand: the FGD paper's protocol (see the
// package documentation) for each policy named, over the seeds given. It
// prints a text table, or with -json one JSON object per policy and line:
//
//	{"policy": "blink", "seeds": [42, …], "alloc": {"100": 93.1, "130": 93.3},
//	 "curve": [0, …131 numbers], "podsPerSecond": 123456}
//
// with allocation in percent and means over seeds; -plot draws every
// policy's curve into a PNG like the paper's Fig. 9(a).
func Command(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fgd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nodesPath := fs.String("nodes", "", "node list `FILE` (CSV: sn, cpu_milli, memory_mib, gpu, model)")
	podsPath := fs.String("pods", "", "pod list `FILE` (CSV: name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec, …)")
	seedList := fs.String("seeds", DefaultSeeds, "`SEEDS`: a list of seeds and ranges, e.g. 42-51 or 42,45,50-52")
	policyList := fs.String("policy", "blink", "`POLICIES`, comma-separated: "+strings.Join(Policies, ", "))
	tree := fs.String("tree", openb.Flat, "the cluster's `TREE`: flat (no levels) or pool (one level of node pools by instance type)")
	asJSON := fs.Bool("json", false, "print one JSON object per policy instead of the table")
	plotPath := fs.String("plot", "", "write the curves to a PNG `FILE`")
	vary := fs.String("vary", "", "change the pod list first: `KIND=P`, KIND one of "+strings.Join(openb.VariantKinds, ", ")+
		" (more fractional, multi-GPU, model-bound or CPU-only pods, as the FGD paper's workload families)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "%s\n\nRuns the FGD paper's protocol (USENIX ATC'23, Fig. 9): pods drawn from the pod list\n"+
			"with replacement until they ask for 130%% of the cluster's GPUs, placed one at a time, never\n"+
			"leaving; prints the GPU allocation ratio as the arrived request passes 0…130%% of capacity.\n"+
			"Policy blink is Blink's placement given the workload's profile, built from the pod list (every\n"+
			"pod shape with its number of pods, as FGD's typical pods); blink-bestfit is Blink without it.\n\n", Usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitInvalid
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "unexpected argument %q", fs.Arg(0))
	}
	if *nodesPath == "" || *podsPath == "" {
		return usageError(stderr, "-nodes and -pods are required")
	}
	seeds, err := ParseSeeds(*seedList)
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	policies, err := parsePolicies(*policyList)
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	variant, err := openb.ParseVariant(*vary)
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	c, shapes, err := LoadVariant(*nodesPath, *podsPath, *tree, variant)
	if err != nil {
		return fail(stderr, ExitInvalid, err)
	}
	bar := report.NewProgress(stderr, int64(len(policies)*len(seeds)), "fgd")
	sums, err := Measure(c, shapes, policies, seeds, func(done, _ int) { bar.Set(int64(done)) })
	bar.Finish()
	if err != nil {
		return fail(stderr, ExitInternal, err)
	}
	if *asJSON {
		err = WriteJSON(stdout, sums)
	} else {
		err = WriteTable(stdout, c, len(shapes), variant, sums)
	}
	if err != nil {
		return fail(stderr, ExitInternal, err)
	}
	if *plotPath != "" {
		if err := Plot(*plotPath, sums); err != nil {
			return fail(stderr, ExitInternal, err)
		}
	}
	return ExitOK
}

// Load reads a node list and a pod list and builds the cluster (tree: see
// openb.NewCluster) and the pods' shapes.
func Load(nodesPath, podsPath, tree string) (*openb.Cluster, []openb.Shape, error) {
	return LoadVariant(nodesPath, podsPath, tree, openb.Variant{})
}

// VariantSeed is the seed of the random draws that make a variant of the
// pod list (openb.Vary): one list per variant, whatever the protocol's seeds.
const VariantSeed = 1

// LoadVariant is Load with the pod list changed to variant v first.
func LoadVariant(nodesPath, podsPath, tree string, v openb.Variant) (*openb.Cluster, []openb.Shape, error) {
	nodes, err := openb.LoadNodes(nodesPath)
	if err != nil {
		return nil, nil, err
	}
	pods, err := openb.LoadPods(podsPath)
	if err != nil {
		return nil, nil, err
	}
	if pods, err = openb.Vary(pods, nodes, v, VariantSeed); err != nil {
		return nil, nil, err
	}
	c, err := openb.NewCluster(nodes, tree)
	if err != nil {
		return nil, nil, err
	}
	if c.GPUs == 0 {
		return nil, nil, fmt.Errorf("%s: the nodes have no GPUs", nodesPath)
	}
	return c, c.Shapes(pods), nil
}

// ParseSeeds parses a comma-separated list of seeds and inclusive ranges
// ("42-51", "42,45,50-52"), in the order given.
func ParseSeeds(s string) ([]uint64, error) {
	var seeds []uint64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		b := a
		if err == nil && isRange {
			b, err = strconv.ParseUint(hi, 10, 64)
		}
		if err != nil || b < a || b-a >= 10000 {
			return nil, fmt.Errorf("-seeds: bad seed or range %q (want e.g. 42-51 or 42,45)", part)
		}
		for x := a; ; x++ {
			seeds = append(seeds, x)
			if x == b {
				break
			}
		}
	}
	return seeds, nil
}

func parsePolicies(s string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if !contains(Policies, name) {
			return nil, fmt.Errorf("-policy: unknown policy %q (want %s)", name, strings.Join(Policies, ", "))
		}
		if !contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// jsonSummary is the -json form of a Summary.
type jsonSummary struct {
	Policy string   `json:"policy"`
	Seeds  []uint64 `json:"seeds"`
	Alloc  struct {
		At100 float64 `json:"100"`
		At130 float64 `json:"130"`
	} `json:"alloc"`
	Curve         []float64 `json:"curve"`
	PodsPerSecond float64   `json:"podsPerSecond"`
}

// WriteJSON writes one JSON object per summary and line: policy, seeds,
// alloc at 100% and 130% arrived, the curve (CurveLen numbers) and
// podsPerSecond, allocation in percent rounded to 0.001.
func WriteJSON(w io.Writer, sums []Summary) error {
	enc := json.NewEncoder(w)
	for i := range sums {
		s := &sums[i]
		j := jsonSummary{Policy: s.Policy, Seeds: s.Seeds, Curve: make([]float64, CurveLen),
			PodsPerSecond: math.Round(s.PodsPerSecond())}
		for k := range s.Curve {
			j.Curve[k] = round3(s.Curve[k])
		}
		j.Alloc.At100, j.Alloc.At130 = j.Curve[100], j.Curve[130]
		if err := enc.Encode(&j); err != nil {
			return err
		}
	}
	return nil
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// TablePoints are the arrived percentages the text table shows.
var TablePoints = []int{50, 80, 90, 100, 110, 120, 130}

// WriteTable writes the summaries as a text table: GPU allocation (%) at
// TablePoints of arrived GPU request, pods placed, and pods per second; the
// header names the cluster, the pod list's size and variant, and the seeds.
func WriteTable(w io.Writer, c *openb.Cluster, pods int, v openb.Variant, sums []Summary) error {
	seeds := ""
	if len(sums) > 0 {
		seeds = formatSeeds(sums[0].Seeds)
	}
	varied := ""
	if v.Kind != "" {
		varied = fmt.Sprintf(" (variant %v)", v)
	}
	fmt.Fprintf(w, "FGD protocol: %d nodes, %d GPUs; %d pods in the list%s; seeds %s (mean)\n",
		len(c.Nodes), c.GPUs, pods, varied, seeds)
	fmt.Fprintf(w, "GPU allocation (%%) when the arrived GPU request reaches k%% of capacity\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "policy\t")
	for _, k := range TablePoints {
		fmt.Fprintf(tw, "%d%%\t", k)
	}
	fmt.Fprint(tw, "placed\tpods/s\t\n")
	for i := range sums {
		s := &sums[i]
		fmt.Fprintf(tw, "%s\t", s.Policy)
		for _, k := range TablePoints {
			fmt.Fprintf(tw, "%.2f\t", s.Curve[k])
		}
		fmt.Fprintf(tw, "%.1f%%\t%.0f\t\n", 100*float64(s.Placed)/float64(max(s.Pods, 1)), s.PodsPerSecond())
	}
	return tw.Flush()
}

// formatSeeds renders seeds compactly: "42-51" for a run of consecutive
// seeds, else a comma-separated list.
func formatSeeds(seeds []uint64) string {
	var parts []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", seeds[i], seeds[j]))
		} else {
			parts = append(parts, strconv.FormatUint(seeds[i], 10))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

func usageError(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "blink fgd: %s\n%s\n", fmt.Sprintf(format, args...), Usage)
	return ExitInvalid
}

func fail(stderr io.Writer, code int, err error) int {
	msg := strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(err.Error())
	fmt.Fprintf(stderr, "blink fgd: %s\n", msg)
	return code
}
