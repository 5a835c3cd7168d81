package runcmd

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/internal/gnurun"
	"github.com/ration-run/ration/internal/logs"
	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/worker"
)

// runPlan is one `ration run` as decided from its flags and environment
// alone: the runner's configuration and what the wiring builds around it.
// plan makes it without I/O; wire builds it.
type runPlan struct {
	// help asks for the help text; nothing else is planned.
	help bool
	// shortHelp asks for the summary (-h) rather than the whole text.
	shortHelp bool
	// bare: `ration run` with no argument at all, which reads command
	// lines from stdin unless it is a terminal (errNoCommand).
	bare bool
	// cfg is the runner's configuration, less what the wiring adds:
	// Input, Jobs and JobsReason, Logger, Observer, Executor, OOMKills,
	// Stdout and Stderr.
	cfg   runConfig
	input inputPlan
	// limits are the options of the limits decision (Getenv included).
	limits limits.Options
	// jobsSpec is the -j value in force (the flag, else RATION_JOBS), for
	// the decisions re-made while running, which read no environment.
	jobsSpec string
	// jobsZero is -j 0 (see jobsZero), for the reason the run gives.
	jobsZero bool
	// memAuto is --mem-per-job auto: learn a job's memory while running.
	memAuto bool
	log     logs.Options
	observe observePlan
	worker  workerPlan
	bar     barChoice
	// spread is -X or -m: the last arguments are spread over as many jobs
	// as the limits decision runs at once (wire sets Batch.Spread).
	spread bool
	// parentShell asks wire to find the shell ration was started from for
	// --shell (GNU parallel's rule), when PARALLEL_SHELL is not set.
	parentShell bool
	// args are the arguments as given, for the hint that resumes an
	// interrupted run.
	args []string
	// cli is what gnuCLIFlags' options planned (gnu_cli.go).
	cli gnuCLIPlan
	// exec is what wire does for GNU parallel's flags that change how
	// jobs run.
	exec execPlan
	// exitCount is --exit-count: the exit status is the number of failed
	// jobs even when --halt would give GNU parallel's (report).
	exitCount bool
	// warnings are what planning found worth saying but not refusing;
	// wire writes them before the run.
	warnings []string
}

// barChoice is whether a progress bar is drawn.
type barChoice int

const (
	barOff        barChoice = iota
	barOn                   // --bar
	barIfTerminal           // the default: when stderr is a terminal
)

// planStep is one step of plan: it checks some flags and fills in their
// part of p. Steps run in order; the first error is the plan's.
type planStep func(p *runPlan, f *runFlags, getenv func(string) string) error

// errNoCommand refuses a bare `ration run` on a terminal.
const errNoCommand = "no command given (usage: ration run [flags] -- COMMAND [ARG...], or command lines on stdin)"

// plan turns the flags and the environment (read through getenv only)
// into a runPlan, or into one usage error naming the flag at fault. It
// does no I/O (but whether -j names a file): whether -a files and
// --fs-root exist, whether -j +N or -j -N leaves a job slot (the limits
// decision), and whether the metrics address can be bound, are checked by
// wire.
func plan(f runFlags, getenv func(string) string, args []string) (runPlan, error) {
	p := runPlan{help: f.help || f.shortHelp, shortHelp: f.shortHelp, args: args}
	if p.help {
		return p, nil
	}
	// GNU's --version, --minversion, --number-of-cores... print and exit.
	if info, err := planGNUInfo(&p, &f, getenv); err != nil {
		return runPlan{}, err
	} else if info {
		return p, nil
	}
	// In the order their errors are reported.
	steps := []planStep{planWorker, planCommand, planRunner, planShard, planLogs, planInput, planBatch, planPipe, planGNUOutput, planGNUCLI, planGNUExec, planParset, planGNUOverrides, planJobs, planObserve}
	for _, step := range steps {
		if err := step(&p, &f, getenv); err != nil {
			return runPlan{}, err
		}
	}
	return p, nil
}

// planRun parses args and plans the run (see plan). The FlagSet prints
// the help.
func planRun(args []string, getenv func(string) string) (runPlan, *pflag.FlagSet, error) {
	all, err := gnuArgs(args, getenv) // GNU's -J profiles and $PARALLEL
	if err != nil {
		return runPlan{}, newRunFlagSet(&runFlags{}), err
	}
	f, fs, err := parseRunFlags(all)
	if err != nil {
		return runPlan{}, fs, err
	}
	p, err := plan(f, getenv, args)
	return p, fs, err
}

// planCommand splits the arguments into the command and the input
// sources after it (:::, ::::, :::+, ::::+). With --worker the command is
// the worker's, run through sh -c; the joblog's Command column shows it
// with the input.
func planCommand(p *runPlan, f *runFlags, getenv func(string) string) error {
	command, srcs, err := splitSources(f.args, f.gnuCLI.argSep, f.gnuCLI.argFileSep)
	if err != nil {
		return err
	}
	p.input.sources = srcs
	p.cfg.Shell = f.shell
	if w := p.worker.command; w != "" {
		switch {
		case len(command) > 0:
			return flagMsg("--worker", fmt.Sprintf("--worker takes no COMMAND (got %q): inputs go to the workers", strings.Join(command, " ")))
		case f.shell:
			return flagMsg("--shell", "--shell cannot be combined with --worker (the worker command already runs through sh -c; inputs are sent as data)")
		}
		command, p.cfg.Shell = []string{w}, true
		// --dry-run shows what each worker would be sent.
		p.cfg.DryRunLine = func(in string, seq int64) string { return worker.RequestLine(seq, in) }
	}
	// A bare `ration run` is GNU parallel's `parallel < jobs`; wire refuses
	// it when stdin is a terminal (see checkRun).
	p.bare = len(f.args) == 0 && len(p.args) == 0
	if len(command) == 0 {
		// As GNU parallel: every input is a command line for the shell.
		command, p.cfg.GNU.InputIsCommand = []string{"{}"}, true
	}
	p.cfg.Command = command
	if (f.shell || p.cfg.GNU.InputIsCommand) && p.worker.command == "" {
		// GNU parallel's shell: $PARALLEL_SHELL, else the shell ration was
		// started from (found by wire), else sh.
		if sh := getenv("PARALLEL_SHELL"); sh != "" {
			p.cfg.GNU.Template.ShellPath = sh
		} else {
			p.parentShell = true
		}
	}
	return nil
}

// planRunner checks the flags of the runner's own behaviour.
func planRunner(p *runPlan, f *runFlags, _ func(string) string) error {
	c := &p.cfg
	if err := planFailures(p, f); err != nil {
		return err
	}
	if f.bar && f.noBar {
		return flagMsg("--bar", "--bar and --no-bar cannot be combined")
	}
	c.DryRun, c.KeepOrder, c.LineBuffer = f.dryRun, f.keepOrder, f.lineBuffer
	if err := planJoblog(&c.Config, f); err != nil {
		return err
	}
	if p.worker.command != "" && c.GNU.TimeoutPercent > 0 {
		return flagMsg("--timeout", "--timeout P% cannot be combined with --worker (give a DURATION)")
	}
	if p.worker.command != "" {
		// The worker pool times tasks out (a break, re-dispatched).
		p.worker.timeout, c.Timeout = c.Timeout, 0
	}
	switch {
	case f.bar:
		p.bar = barOn
	case !f.noBar && !f.dryRun:
		p.bar = barIfTerminal
	}
	return nil
}

// runConfig is the runner's configuration with the GNU options, which
// wire hands to the runner as its dialect (runner.Config.Dialect).
type runConfig struct {
	runner.Config
	GNU gnurun.GNU
}

// runnerConfig is c as runner.New takes it: the GNU options its dialect.
func (c *runConfig) runnerConfig() runner.Config {
	rc := c.Config
	g := c.GNU
	rc.Dialect = &g
	return rc
}
