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
// metrics address that cannot be bound, or a program or worker command
// that cannot be found, before any job starts). ration sem --fg exits with
// its command's status (1 when --semaphoretimeout gave up waiting). The
// others exit 0 on success and 255 on a usage error. Every command exits
// 141 when its stdout was closed by its reader.
//
// This package dispatches to the commands only; the work is done in
// cgroup/, limits/, pool/ and runner/. Each command is a package under
// internal/ with its flags, its plan and its Main (as gh lays out its
// commands): runcmd (ration run), limitscmd, reportcmd and semcmd; cli
// holds what several of them share (the usage error and its exit status,
// the signal hub main starts first, size flags, -j checks, the jobs'
// memory cgroup and admission switches, the parent shell); clitest the
// tests' TestMain and helpers. Each command parses its flags into a plain
// struct, plans from them and the environment without I/O (one usage
// error naming the flag, or a plan), then does its work.
//
// It imports only its commands' packages (cmd/ration/internal/...), cobra
// and pflag, and internal/closedpipe; nothing imports it.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/ration-run/ration/cmd/ration/internal/cli"
	"github.com/ration-run/ration/cmd/ration/internal/completioncmd"
	"github.com/ration-run/ration/cmd/ration/internal/limitscmd"
	"github.com/ration-run/ration/cmd/ration/internal/manifestcmd"
	"github.com/ration-run/ration/cmd/ration/internal/reportcmd"
	"github.com/ration-run/ration/cmd/ration/internal/runcmd"
	"github.com/ration-run/ration/cmd/ration/internal/semcmd"
	"github.com/ration-run/ration/internal/closedpipe"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// exitUsage is the exit status for a usage or input error, as in GNU parallel.
const exitUsage = cli.ExitUsage

// command is one subcommand of ration. run returns the process exit status.
type command struct {
	name    string
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
	flags   func() *pflag.FlagSet // for completion; nil: none
}

func commands() []command { return commandsWith(nil) }

// commandsWith is commands with `ration run` and `ration sem` handling
// their signals through h (nil: a handler of its own for the run, Go's
// defaults for sem).
func commandsWith(h *cli.SignalHub) []command {
	run := func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		return runcmd.Main(h, args, os.Getenv, stdin, stdout, stderr)
	}
	sem := func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
		return semcmd.Main(h, args, os.Getenv, stdout, stderr)
	}
	completion := func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
		return completioncmd.Main(completionCommands(), args, stdout, stderr)
	}
	return []command{
		{"limits", "show the container's CPU and memory budget and the jobs it allows", limitscmd.Main, limitscmd.Flags},
		{"run", "run a command once per input, in parallel, within the budget", run, runcmd.Flags},
		{"report", "render a joblog as a self-contained HTML or SVG timeline", reportcmd.Main, reportcmd.Flags},
		{"manifest", "list a file set once into a manifest that shards read their part of", manifestcmd.Main, manifestcmd.Flags},
		{"sem", "a counting semaphore shared between processes (GNU parallel's sem)", sem, semcmd.Flags},
		{"completion", "print a shell completion script (bash, zsh or fish)", completion, nil},
	}
}

// completionCommands are ration's commands as the completion scripts
// complete them.
func completionCommands() []completioncmd.Command {
	var cs []completioncmd.Command
	for _, c := range commands() {
		cs = append(cs, completioncmd.Command{Name: c.name, Summary: c.summary, Flags: c.flags})
	}
	return cs
}

func main() {
	// Signals first: from here to the exit, none of them kills ration
	// unannounced (signalHub).
	h := cli.NewSignalHub(os.Stderr, os.Exit)
	os.Exit(dispatchWith(h, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func dispatch(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return dispatchWith(nil, args, stdin, stdout, stderr)
}

// dispatchWith runs the command args name, its signals handled through h.
// Every command exits 141 when its stdout was closed by its reader, as a
// shell reports a program killed by SIGPIPE (`ration report jl | head`);
// run says itself what it ran before that (outputGone).
func dispatchWith(h *cli.SignalHub, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	if len(args) == 0 || args[0] != "run" {
		out := closedpipe.New(stdout)
		defer func() { code = out.Exit(code) }()
		stdout = out
	}
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
	case cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
		// The completion scripts asking what may follow.
		return completioncmd.Complete(completionCommands(), args, stdout, stderr)
	case "--version", "version":
		fmt.Fprintln(stdout, "ration", cli.Version())
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
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'ration help COMMAND' (or 'ration COMMAND --help') for the flags of a command.")
}
