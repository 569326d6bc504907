package whatif

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit codes of Command.
const (
	ExitOK       = 0 // answered, whether the request fits or not
	ExitInternal = 1 // the answer could not be written, or the engine failed
	ExitInvalid  = 2 // bad usage, unreadable input, or a scenario error
)

// Usage is the synopsis of the whatif subcommand.
const Usage = "usage: blink whatif [-f FILE] < scenario.json"

// Command is the `blink whatif` subcommand: it reads a scenario from -f FILE
// or stdin, writes the answer's JSON to stdout and returns the exit code. An
// error is one line on stderr, prefixed "blink whatif: ".
func Command(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("whatif", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("f", "", "read the scenario from `FILE` (default stdin; - is stdin)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "%s\n\nAnswers a scenario: a cluster, its running jobs and a request, in JSON.\n"+
			"Prints the answer (fits, pods, victims, moves, reason, exact) as JSON on stdout.\n"+
			"Exit 0 when answered (fits or not), 2 for an invalid scenario.\n\n", Usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitInvalid
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "blink whatif: unexpected argument %q\n%s\n", fs.Arg(0), Usage)
		return ExitInvalid
	}
	in := stdin
	if *file != "" && *file != "-" {
		f, err := os.Open(*file)
		if err != nil {
			return fail(stderr, ExitInvalid, err)
		}
		defer f.Close()
		in = f
	}
	sc, err := Decode(in)
	if err != nil {
		return fail(stderr, ExitInvalid, err)
	}
	a, err := Run(sc)
	if err != nil {
		code := ExitInternal
		if errors.Is(err, ErrInvalid) || errors.Is(err, ErrNotImplemented) {
			code = ExitInvalid
		}
		return fail(stderr, code, err)
	}
	if err := a.Encode(stdout); err != nil {
		return fail(stderr, ExitInternal, err)
	}
	return ExitOK
}

// fail prints err on one line of stderr (without the package prefix, which
// "blink whatif:" replaces) and returns code.
func fail(stderr io.Writer, code int, err error) int {
	msg := strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(err.Error())
	msg = strings.TrimPrefix(msg, "whatif: ")
	fmt.Fprintf(stderr, "blink whatif: %s\n", msg)
	return code
}
