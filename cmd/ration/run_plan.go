package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/internal/flagvalue"
	"github.com/ration-run/ration/internal/logs"
	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/input"
	"github.com/ration-run/ration/runner/worker"
)

// runPlan is one `ration run` as decided from its flags and environment
// alone: the runner's configuration and what the wiring builds around it.
// plan makes it without I/O; wire builds it.
type runPlan struct {
	// help asks for the help text; nothing else is planned.
	help bool
	// bare: `ration run` with no argument at all, which reads command
	// lines from stdin unless it is a terminal (errNoCommand).
	bare bool
	// cfg is the runner's configuration, less what the wiring adds:
	// Input, Jobs and JobsReason, Logger, Observer, Executor, OOMKills,
	// Stdout and Stderr.
	cfg   runner.Config
	input inputPlan
	// limits are the options of the limits decision (Getenv included).
	limits limits.Options
	// jobsSpec is the -j value in force (the flag, else RATION_JOBS), for
	// the decisions re-made while running, which read no environment.
	jobsSpec string
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
	// cli is what the gnucli options planned (run_gnu_cli.go).
	cli gnuCLIPlan
	// exec is what wire does for GNU parallel's flags that change how
	// jobs run (gnuexec branch).
	exec execPlan
	// exitCount is --exit-count: the exit status is the number of failed
	// jobs even when --halt would give GNU parallel's (report).
	exitCount bool
	// warnings are what planning found worth saying but not refusing;
	// wire writes them before the run.
	warnings []string
}

// inputKind is where the inputs come from.
type inputKind int

const (
	inputStdin   inputKind = iota // standard input
	inputSources                  // ::: groups, :::: files and -a files
	inputFiles                    // --files PATTERN...
)

// sourcePlan is one input source as given on the command line.
type sourcePlan struct {
	// name says where the values come from in errors: ":::", ":::+",
	// ":::: FILE", "::::+ FILE", "-a FILE".
	name string
	// args are a ::: group's values; path is a file's (:::: and -a), "-"
	// for stdin.
	args []string
	path string
	// linked is :::+ or ::::+: paired with the source before it.
	linked bool
}

// inputPlan says where the inputs come from and how they are read.
type inputPlan struct {
	kind inputKind
	// sources are the -a files, then the ::: groups and :::: files in
	// order (inputSources).
	sources []sourcePlan
	// delim ends every value read from a file or stdin ("\n"; "\x00"
	// with -0; -d's); eof is -E.
	delim, eof string
	// lines is -L: a line ending in a blank continues on the next one.
	lines bool
	// noEmpty is -r: values of blanks only are left out.
	noEmpty bool
	// How the sources are combined and split into fields (input.Options;
	// colsep is compiled by wire).
	link, header bool
	colsep       string
	colsepSet    bool // --colsep given: "" splits every character
	trim         input.Trim
	patterns     []string // inputFiles
	excludes     []string // inputFiles
	// hidden and gitignore are --hidden and --gitignore (inputFiles).
	hidden, gitignore bool
	// pipe, when set, cuts stdin into blocks, each one a job's stdin
	// (--pipe).
	pipe *input.BlockOptions
	// pipeMode is --pipepart or --round-robin (branch gnupipe, see
	// run_gnu_pipe.go); nil for neither.
	pipeMode *pipeModePlan
	// total is the number of jobs this shard runs when known in advance
	// (one ::: group, one argument per job), else -1.
	total int64
	// skipFirst: the first source read from a file or stdin (with --pipe:
	// stdin) loses its first record (--skip-first-line; firstReader).
	skipFirst bool
}

// given reports whether the inputs are named on the command line (so a
// resumed run needs no standard input).
func (in inputPlan) given() bool {
	if in.kind == inputStdin {
		return false
	}
	for _, s := range in.sources {
		if s.path == "-" {
			return false
		}
	}
	return true
}

// observePlan are the settings of metrics, logs and the stall watchdog.
type observePlan struct {
	metricsAddr string // "" for no metrics server
	debug       bool
	quiet       bool
	json        bool          // --log-format json
	stall       time.Duration // 0: no stall check
	slowFactor  float64       // 0: no slow-job warnings
}

// workerPlan are the settings of the worker pool and of adaptation.
type workerPlan struct {
	// command is the --worker command, "" to run one process per job.
	command   string
	maxBreaks int
	maxTasks  int
	maxRSS    int64
	// timeout is the task timeout, enforced by the pool (a break).
	timeout time.Duration
	// watch re-reads the limits every interval (not with --fs-root).
	watch    bool
	interval time.Duration
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
	p := runPlan{help: f.help, args: args}
	if f.help {
		return p, nil
	}
	// gnucli: --version, --minversion, --number-of-cores... print and exit.
	if info, err := planGNUInfo(&p, &f, getenv); err != nil {
		return runPlan{}, err
	} else if info {
		return p, nil
	}
	// In the order their errors are reported.
	steps := []planStep{planWorker, planCommand, planRunner, planShard, planLogs, planInput, planBatch, planPipe, planGNUOutput, planGNUCLI, planGNUExec, planParset, planGNUMore, planJobs, planObserve}
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
	all, err := gnuArgs(args, getenv) // gnucli: -J profiles and $PARALLEL
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

// planWorker checks the flags of workers and adaptation.
func planWorker(p *runPlan, f *runFlags, _ func(string) string) error {
	switch {
	case f.maxBreaks < 1:
		return flagErr("--max-breaks", fmt.Errorf("%d is not at least 1", f.maxBreaks))
	case f.maxTasks < 0:
		return flagErr("--worker-max-tasks", fmt.Errorf("%d is negative", f.maxTasks))
	}
	iv, err := flagvalue.ParseDuration(f.watchInterval)
	if err != nil || iv <= 0 {
		return flagErr("--watch-interval", fmt.Errorf("%q is not a positive duration", f.watchInterval))
	}
	if f.workerGiven && strings.TrimSpace(f.worker) == "" {
		return flagErr("--worker", errors.New("empty command"))
	}
	p.worker = workerPlan{command: f.worker, maxBreaks: f.maxBreaks, maxTasks: f.maxTasks, maxRSS: int64(f.maxRSS),
		watch: f.watchLimits && f.fsRoot == "", interval: iv}
	return nil
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
	var err error
	if p, ok := strings.CutSuffix(f.timeout, "%"); ok {
		// GNU parallel's P% of the median runtime of the succeeded jobs.
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return flagErr("--timeout", fmt.Errorf("%q is not a percentage > 0", f.timeout))
		}
		c.GNU.TimeoutPercent = v
	} else if f.timeout != "" {
		if c.Timeout, err = flagvalue.ParseDuration(f.timeout); err != nil {
			return flagErr("--timeout", fmt.Errorf("%q is not a duration", f.timeout))
		}
	}
	if c.TermTimeout, err = flagvalue.ParseDuration(f.termTimeout); err != nil {
		return flagErr("--term-timeout", fmt.Errorf("%q is not a duration", f.termTimeout))
	}
	if f.retries < 0 {
		return flagErr("--retries", fmt.Errorf("%d is negative", f.retries))
	}
	if c.Halt, err = flagvalue.ParseHalt(f.halt); err != nil {
		return flagErr("--halt", err)
	}
	p.exitCount = f.exitCount
	if f.bar && f.noBar {
		return flagMsg("--bar", "--bar and --no-bar cannot be combined")
	}
	c.Retries, c.DryRun, c.KeepOrder, c.LineBuffer = f.retries, f.dryRun, f.keepOrder, f.lineBuffer
	if f.retriesSet && f.retries == 0 {
		// GNU parallel's --retries 0: "n=0 means infinite".
		c.Retries = math.MaxInt32
	}
	if err := planJoblog(c, f); err != nil {
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

// planShard takes the shard from --shard, or else from
// JOB_COMPLETION_INDEX when RATION_SHARD_COUNT is set (an Indexed Job of
// Kubernetes). JOB_COMPLETION_INDEX alone is refused: Kubernetes does not
// tell a pod the number of indexes, and without it every pod would run
// every input; --shard 0/1 says that is meant.
func planShard(p *runPlan, f *runFlags, getenv func(string) string) error {
	var err error
	if f.shard != "" {
		if p.cfg.Shard, err = flagvalue.ParseShard(f.shard); err != nil {
			return flagErr("--shard", err)
		}
		return nil
	}
	n, i := getenv("RATION_SHARD_COUNT"), getenv("JOB_COMPLETION_INDEX")
	if n == "" {
		if i != "" {
			return flagMsg("RATION_SHARD_COUNT", fmt.Sprintf("JOB_COMPLETION_INDEX=%s is set but RATION_SHARD_COUNT is not: "+
				"every pod of the Indexed Job would run every input; set RATION_SHARD_COUNT to the Job's completions, "+
				"or give --shard 0/1 to run every input in this pod", i))
		}
		return nil
	}
	if i == "" {
		return flagMsg("JOB_COMPLETION_INDEX", fmt.Sprintf("RATION_SHARD_COUNT=%s is set but JOB_COMPLETION_INDEX is not", n))
	}
	if p.cfg.Shard, err = flagvalue.NewShard(i, n); err != nil {
		return flagErr("JOB_COMPLETION_INDEX/RATION_SHARD_COUNT", err)
	}
	return nil
}

// planLogs checks the log flags. A JSON log carries a job's start or task
// error in its job_finished record, not also as a plain line.
func planLogs(p *runPlan, f *runFlags, _ func(string) string) error {
	if f.quiet && f.debug {
		return flagMsg("--quiet", "--quiet and --debug exclude each other")
	}
	p.log = logs.Options{Format: f.logFormat, Quiet: f.quiet, Debug: f.debug}
	// The logger the wiring makes writes to stderr; this one only checks
	// the options.
	if _, err := logs.New(io.Discard, p.log); err != nil {
		return flagErr("--log-format", err)
	}
	// A failed job is one line: its log record, which carries the error
	// (not also a "ration: ..." line in the job's stderr). --quiet logs
	// no job record, so there the line in the job's stderr is the only
	// word of why a job failed that only ration can tell (a command that
	// cannot start, a worker's task error), as a shell or xargs prints it.
	p.cfg.OmitErrorLines = !f.quiet
	return nil
}

// planInput chooses where the inputs come from: ::: groups, :::: and -a
// files (combined as GNU parallel does), --files patterns, or standard
// input, and how they are read.
func planInput(p *runPlan, f *runFlags, _ func(string) string) error {
	in := &p.input
	in.delim, in.total = "\n", -1
	var argFiles []sourcePlan
	for _, a := range f.argFiles {
		argFiles = append(argFiles, sourcePlan{name: "-a " + a, path: a})
	}
	in.sources = append(argFiles, in.sources...)
	switch {
	case len(f.files) > 0 && len(in.sources) > 0:
		return flagMsg("--files", "--files=PATTERN cannot be combined with :::, :::: or -a (ration's --files PATTERN names the input files by glob; GNU parallel's --files, print the output file names, is --output-files, and a bare --files before the command and such inputs is read so)")
	case len(f.files) > 0 && p.cfg.GNU.InputIsCommand:
		return flagMsg("--files", fmt.Sprintf("--files=%s takes a glob PATTERN and a command after it (GNU parallel's --files, print the output file names, is --output-files)", f.files[0]))
	case len(f.excludes) > 0 && len(f.files) == 0:
		return flagMsg("--exclude", "--exclude needs --files")
	case f.hidden && len(f.files) == 0:
		return flagMsg("--hidden", "--hidden needs --files")
	case f.gitignore && len(f.files) == 0:
		return flagMsg("--gitignore", "--gitignore needs --files")
	}
	stdin := 0
	for _, s := range in.sources {
		if s.path == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return flagMsg("", "standard input is named twice as an input source (-a - or :::: -)")
	}
	switch {
	case len(in.sources) > 0:
		in.kind = inputSources
	case len(f.files) > 0:
		in.kind, in.patterns, in.excludes = inputFiles, f.files, f.excludes
		in.hidden, in.gitignore = f.hidden, f.gitignore
	}
	return planReading(p, f)
}

// planJobs checks the -j value in force, the flag's or else RATION_JOBS,
// and sets the options of the limits decision. GNU parallel's -j +N and
// -j -N go to the decision as they are: it counts them from the CPUs it
// finds, explains them, and refuses one that leaves no job slot.
func planJobs(p *runPlan, f *runFlags, getenv func(string) string) error {
	if f.jobs == "0" {
		// GNU parallel's -j0 is as many jobs as possible: ration's most is
		// what the limits decide, as without -j.
		f.jobs = ""
	}
	spec, err := checkJobs(f.jobs, getenv)
	if err != nil {
		return err
	}
	p.jobsSpec, p.memAuto = spec, f.memPerJob.auto
	p.limits = limits.Options{FSRoot: f.fsRoot, Jobs: f.jobs, Getenv: getenv, MemPerJob: int64(f.memPerJob.size), RefuseNoSlot: true}
	return nil
}

// planJoblog sets the joblog and --resume: GNU parallel's --joblog +FILE
// appends to FILE, and --joblog - is stdout, which cannot be resumed.
func planJoblog(c *runner.Config, f *runFlags) error {
	if (f.resume || f.resumeFailed) && f.joblog == "" {
		return flagMsg("--resume", "--resume and --resume-failed need --joblog")
	}
	c.Joblog, c.Resume, c.ResumeFailed = f.joblog, f.resume, f.resumeFailed
	if name, ok := strings.CutPrefix(f.joblog, "+"); ok && name != "" {
		c.Joblog, c.JoblogAppend = name, true
	}
	if c.Joblog == "-" && (c.Resume || c.ResumeFailed) {
		return flagMsg("--resume", "--resume and --resume-failed need a --joblog file to read, not - (standard output)")
	}
	return nil
}

// planObserve checks the flags of metrics and the stall watchdog.
func planObserve(p *runPlan, f *runFlags, _ func(string) string) error {
	o := observePlan{metricsAddr: f.metricsAddr, debug: f.debug, quiet: f.quiet, json: f.logFormat == logs.FormatJSON, slowFactor: f.slowFactor}
	if f.stallTimeout != "" {
		v, err := flagvalue.ParseDuration(f.stallTimeout)
		if err != nil {
			return flagErr("--stall-timeout", fmt.Errorf("%q is not a duration", f.stallTimeout))
		}
		o.stall = v
	}
	if f.slowFactor < 0 || f.slowFactor != f.slowFactor {
		return flagErr("--slow-factor", fmt.Errorf("%v is not a factor >= 0", f.slowFactor))
	}
	p.observe = o
	return nil
}
