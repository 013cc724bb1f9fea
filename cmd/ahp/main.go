/*
Command ahp checks AHP documents, probes backends, lists the event
catalogue and runs a fake backend for testing hosts.

Usage:

	ahp check [--schema NAME] [--format text|json] FILE...
	ahp probe --event FILE [flags] (URL | -- COMMAND ARGS...)
	ahp events [--format text|json]
	ahp fake-backend [--http ADDR] --mode MODE

Every subcommand has -h. Exit status: 0 for a valid result (every document
valid, a backend that answered), 1 for an invalid document or an operational
failure, 2 for a usage or configuration error. With --format json, each
attempt is one JSON object on standard output.
*/
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// Exit statuses.
const (
	exitOK      = 0
	exitInvalid = 1
	exitUsage   = 2
)

// errUsage marks a usage or configuration error (exit status 2).
var errUsage = errors.New("usage")

// usageError wraps a message as a usage error.
func usageError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

// env is what a subcommand reads and writes; tests do not need it, the
// binary is tested as a process, but it keeps the subcommands off globals.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

const topUsage = `ahp: the Agent Hooks Protocol command

Usage:
  ahp check [--schema NAME] [--format text|json] FILE...   validate documents (- is stdin)
  ahp probe --event FILE [flags] (URL | -- COMMAND ARGS...)  send one event to a backend
  ahp events [--format text|json]                          list the event catalogue
  ahp fake-backend [--http ADDR] --mode MODE               run a backend with controllable faults

Run "ahp COMMAND -h" for a command's flags.
Exit status: 0 valid, 1 invalid document or operational failure, 2 usage or configuration error.
`

func main() {
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	os.Exit(run(e, os.Args[1:]))
}

// run executes one command line and returns the exit status.
func run(e *env, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, topUsage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(e.stdout, topUsage)
		return exitOK
	case "check":
		err = runCheck(e, args[1:])
	case "probe":
		err = runProbe(e, args[1:])
	case "events":
		err = runEvents(e, args[1:])
	case "fake-backend":
		err = runFake(e, args[1:])
	default:
		fmt.Fprintf(e.stderr, "ahp: unknown command %q\n\n%s", args[0], topUsage)
		return exitUsage
	}
	return exitStatus(e, err)
}

// errFailed is returned by a subcommand that has already reported an
// invalid document or an operational failure.
var errFailed = errors.New("failed")

func exitStatus(e *env, err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errUsage):
		fmt.Fprintf(e.stderr, "ahp: %v\n", err)
		return exitUsage
	case errors.Is(err, errFailed):
		return exitInvalid
	default:
		fmt.Fprintf(e.stderr, "ahp: %v\n", err)
		return exitInvalid
	}
}

// newFlags returns a subcommand's FlagSet, with usage text on stderr.
func newFlags(e *env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("ahp "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ahp %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, flags and operands in any order, and returns the
// operands; after "--" everything is an operand (dashed is then true). -h
// prints usage to stdout and is not an error exit; any other flag error is
// a usage error.
func parseFlags(e *env, fs *flag.FlagSet, args []string) (operands []string, dashed bool, err error) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(e.stdout)
			fs.Usage()
			return nil, false, flag.ErrHelp
		}
	}
	fs.SetOutput(io.Discard)
	defer fs.SetOutput(e.stderr)
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			fs.SetOutput(e.stderr)
			fs.Usage()
			return nil, false, fmt.Errorf("%w: %v", errUsage, err)
		}
		left := fs.Args()
		consumed := len(rest) - len(left)
		if consumed > 0 && rest[consumed-1] == "--" {
			return append(operands, left...), true, nil
		}
		if len(left) == 0 {
			return operands, false, nil
		}
		operands = append(operands, left[0])
		rest = left[1:]
	}
}

// formatFlag registers --format.
func formatFlag(fs *flag.FlagSet) *string {
	return fs.String("format", "text", "output `format`: text or json")
}

func checkFormat(f string) error {
	if f != "text" && f != "json" {
		return usageError("--format must be text or json")
	}
	return nil
}
