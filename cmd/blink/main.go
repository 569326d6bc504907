// Command blink is Blink's command-line tool. Each subcommand is a function of
// its arguments and standard streams returning an exit code:
//
//	blink whatif [-f FILE] < scenario.json    answer a scenario: where a request would go
//	blink fgd -nodes FILE -pods FILE          the FGD paper's protocol on a trace: allocation as pods arrive
//	blink replay -pods FILE -nodes FILE       replay a trace's arrivals and departures through placement
//	blink scale -gpus 1M -shape nvl72          a seeded stream of arrivals and departures against the engine
//
// Run "blink help" for the list, "blink SUBCOMMAND -h" for a subcommand's flags.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/blinksched/blink/bench/fgd"
	"github.com/blinksched/blink/bench/replay"
	"github.com/blinksched/blink/bench/scale"
	"github.com/blinksched/blink/bench/whatif"
)

// A subcommand parses its own flags (a flag.FlagSet per subcommand), reads
// stdin, writes stdout and stderr, and returns the process exit code.
type subcommand struct {
	name, summary string
	run           func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// subcommands in the order "blink help" lists them. New ones (fgd, replay,
// scale) are one entry each.
var subcommands = []subcommand{
	{"whatif", "answer a scenario (cluster, running jobs, request) with a plan, in JSON", whatif.Command},
	{"fgd", "run the FGD paper's protocol on a node list and a pod list: GPU allocation as pods arrive", fgd.Command},
	{"replay", "replay a pod list's arrivals and departures through placement: allocation, waiting, latency", replay.Command},
	{"scale", "run a seeded stream of arrivals and departures against a loaded engine: decision latency per kind", scale.Command},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches args[0] to its subcommand.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return 0
	}
	for _, c := range subcommands {
		if c.name == args[0] {
			return c.run(args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "blink: unknown subcommand %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: blink SUBCOMMAND [flags]\n\nSubcommands:")
	for _, c := range subcommands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun \"blink SUBCOMMAND -h\" for a subcommand's flags.")
}
