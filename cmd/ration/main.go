// Command ration runs many jobs in parallel inside the CPU and memory budget
// of the container it runs in.
//
// Usage:
//
//	ration limits [flags]                  show the budget and how many jobs it allows
//	ration run [flags] -- CMD [ARG]        run CMD once per input
//	ration run [flags] --worker 'CMD ARG'  send each input to long-lived worker processes
//	ration report JOBLOG [-o FILE]         render a joblog as a timeline (HTML or SVG)
//	ration sem [flags] CMD                 GNU parallel's sem: a semaphore shared between processes
//	ration manifest --files PAT -o FILE    list a file set once, for run --manifest FILE --shard I/N
//
// Exit status (run): 0 all jobs succeeded; 1-100 the number of failed jobs
// (with --worker, quarantined tasks count as failed); 101 more than 100
// failed; 128+N interrupted by signal N (141: stdout closed by its
// reader); with --halt, GNU parallel's status; 255 usage or input error (also a
// metrics address that cannot be bound or a worker command that cannot be
// found). ration sem --fg exits with its command's status (1 when
// --semaphoretimeout gave up waiting). The others exit 0 on success and
// 255 on a usage error.
//
// This package holds flags and wiring only; the work is done in cgroup/,
// limits/, pool/ and runner/. Each subcommand parses its flags into a
// plain struct, plans from them and the environment without I/O (one
// usage error naming the flag, or a plan), then does its work. For
// `ration run`: run_flags.go (the flags), run_plan.go (plan), run_wire.go
// (building the run in dependency order, running it, the exit status),
// run_observe.go (metrics, logs, the stall watchdog), run_worker.go
// (--worker and the adaptation of concurrency), signals*.go (SIGINT,
// SIGTERM, SIGHUP, SIGPIPE, and SIGQUIT and SIGUSR1 where they exist, from
// the start of main); reliability.go the checks that keep a run from losing or hiding
// jobs (a closed stdout, a joblog that is an input, a blocked output);
// usage.go holds the usage error.
package main

import (
	"fmt"
	"io"
	"os"
)

// exitUsage is the exit status for a usage or input error, as in GNU parallel.
const exitUsage = 255

// command is one subcommand of ration. run returns the process exit status.
type command struct {
	name    string
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

func commands() []command { return commandsWith(nil) }

// commandsWith is commands with `ration run` and `ration sem` handling
// their signals through h (nil: a handler of its own for the run, Go's
// defaults for sem).
func commandsWith(h *signalHub) []command {
	run := func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		return runMainWith(h, args, os.Getenv, stdin, stdout, stderr)
	}
	sem := func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
		return semMain(h, args, os.Getenv, stdout, stderr)
	}
	return []command{
		{"limits", "show the container's CPU and memory budget and the jobs it allows", cmdLimits},
		{"run", "run a command once per input, in parallel, within the budget", run},
		{"report", "render a joblog as a self-contained HTML or SVG timeline", cmdReport},
		{"manifest", "list a file set once into a manifest that shards read their part of", cmdManifest},
		{"sem", "a counting semaphore shared between processes (GNU parallel's sem)", sem},
	}
}

func main() {
	// Signals first: from here to the exit, none of them kills ration
	// unannounced (signalHub).
	h := newSignalHub(os.Stderr, os.Exit)
	os.Exit(dispatchWith(h, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func dispatch(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return dispatchWith(nil, args, stdin, stdout, stderr)
}

// dispatchWith runs the command args name, its signals handled through h.
func dispatchWith(h *signalHub, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help":
		return help(args[1:], stdin, stdout, stderr)
	case "-h", "--help":
		usage(stdout)
		return 0
	case "--version", "version":
		fmt.Fprintln(stdout, "ration", version())
		return 0
	}
	for _, c := range commandsWith(h) {
		if c.name == args[0] {
			return c.run(args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "ration: unknown command %q (try 'ration help')\n", args[0])
	return exitUsage
}

// help implements `ration help [COMMAND]`: the top-level usage, or the
// help of one command (what `ration COMMAND --help` prints).
func help(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run([]string{"--help"}, stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "ration help: unknown command %q (try 'ration help')\n", args[0])
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: ration COMMAND [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'ration help COMMAND' (or 'ration COMMAND --help') for the flags of a command.")
}
