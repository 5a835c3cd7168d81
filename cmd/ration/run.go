package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/input"
	"github.com/ration-run/ration/runner/logs"
	"github.com/ration-run/ration/runner/reaper"
	"github.com/ration-run/ration/runner/template"
	"github.com/ration-run/ration/runner/watchdog"
	"github.com/ration-run/ration/runner/worker"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

// defaultTermTimeout is how long an interrupted run lets its running jobs
// finish before it stops them.
const defaultTermTimeout = 20 * time.Second

const runUsage = `usage: ration run [flags] [--] COMMAND [ARG...] [::: INPUT...]

       ration run [flags] --worker 'CMD ARGS' [::: INPUT...]

Run COMMAND once per input, in parallel, within the container's budget.
Inputs come from the arguments after :::, from -a FILE, from --files
patterns, or else from standard input (one per line, or NUL-separated
with -0). Replacement strings: {} {.} {/} {//} {/.} {#} {%}; without one,
the input is the last argument. Commands run without a shell unless
--shell is given.

With --worker, long-lived worker processes get the inputs as tasks, one
JSON line each, and each answer is printed as one line; a task that broke
--max-breaks workers is quarantined (it fails, nothing else does).

A job killed by the out-of-memory killer is retried once (not counted by
--retries) and the concurrency is halved, growing back after successes.
SIGUSR1 prints the table of running jobs.

Exit status: 0 all jobs succeeded; 1-100 the number of failed jobs
(quarantined tasks count as failed); 101 more than 100 failed; 128+N
interrupted by signal N; 255 usage or input error.

flags:`

// cmdRun implements `ration run`.
func cmdRun(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// As PID 1 (a container's entrypoint) ration reaps the orphans that
	// jobs leave behind. Jobs and workers are started through the reaper,
	// so their own exit statuses are never taken by it. Elsewhere the
	// reaper is inactive and changes nothing.
	rp, err := reaper.New(context.Background(), reaper.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "ration run: %v\n", err)
		return exitUsage
	}
	defer rp.Stop()
	fs := pflag.NewFlagSet("ration run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetInterspersed(false)
	jobs := fs.StringP("jobs", "j", "", "jobs at once: `N`, or N% of the effective CPUs (default: RATION_JOBS, then 2 per CPU, at most 8)")
	var memPerJob memFlag
	fs.Var(&memPerJob, "mem-per-job", "expected memory of one job, `SIZE` like 512M; caps jobs at 0.9 x memory limit / SIZE; auto learns it from the peak RSS of finished jobs")
	fsRoot := fs.String("fs-root", "", "read the cgroup files below `DIR` (a snapshot) instead of the live system")
	argFiles := fs.StringArrayP("arg-file", "a", nil, "read inputs from `FILE`, one per line (repeatable)")
	null := fs.BoolP("null", "0", false, "inputs are separated by NUL, not newline")
	files := fs.StringArray("files", nil, "inputs are the files matching `PATTERN` (** matches directories; repeatable)")
	excludes := fs.StringArray("exclude", nil, "leave out files and directories matching `PATTERN` (repeatable)")
	timeout := fs.String("timeout", "", "stop a job running longer than `DURATION` (500ms, 2m, or seconds)")
	termTimeout := fs.String("term-timeout", defaultTermTimeout.String(), "on SIGINT/SIGTERM, let running jobs finish for `DURATION`, then stop them")
	retries := fs.Int("retries", 0, "run a failing job up to `N` times in all")
	halt := fs.String("halt", "never", "stop early at `WHEN,COND`: now|soon,fail|success|done=N|P% (e.g. now,fail=1)")
	dryRun := fs.Bool("dry-run", false, "print the commands instead of running them (with --worker: the task line each input would be sent as)")
	joblogPath := fs.String("joblog", "", "write GNU parallel's joblog to `FILE`")
	resume := fs.Bool("resume", false, "skip the jobs the joblog records")
	resumeFailed := fs.Bool("resume-failed", false, "skip the jobs the joblog records as succeeded (re-run failed ones)")
	bar := fs.Bool("bar", false, "show a progress bar on stderr (default: when stderr is a terminal)")
	noBar := fs.Bool("no-bar", false, "never show a progress bar")
	keepOrder := fs.BoolP("keep-order", "k", false, "print the output of jobs in input order")
	lineBuffer := fs.Bool("line-buffer", false, "print output line by line as it comes")
	shell := fs.Bool("shell", false, "run the command through sh -c, with each substituted input quoted (not with --worker, whose command always runs so)")
	shardFlag := fs.String("shard", "", "run only shard `I/N` of the inputs (default from JOB_COMPLETION_INDEX when RATION_SHARD_COUNT=N)")
	obsFlags := addObserveFlags(fs)
	wFlags := addWorkerFlags(fs)
	help := fs.BoolP("help", "h", false, "show this help")

	fail := func(format string, a ...any) int {
		msg := strings.ReplaceAll(fmt.Sprintf(format, a...), "\n", " ")
		fmt.Fprintf(stderr, "ration run: %s\n", msg)
		return exitUsage
	}
	if err := fs.Parse(args); err != nil {
		return fail("%v", err)
	}
	if *help {
		fmt.Fprintln(stdout, runUsage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	}

	// The command, then the ::: inputs.
	rest := fs.Args()
	var argInputs []string
	hasArgs := false
	if i := slices.Index(rest, ":::"); i >= 0 {
		rest, argInputs, hasArgs = rest[:i], rest[i+1:], true
	}
	watchInterval, err := wFlags.check(fs, rest)
	if err != nil {
		return fail("%v", err)
	}
	workerMode := *wFlags.command != ""
	if workerMode && *shell {
		return fail("--shell cannot be combined with --worker (the worker command already runs through sh -c; inputs are sent as data)")
	}
	if workerMode {
		// The joblog's Command column shows the worker command with the
		// input; the workers get the input itself.
		rest, *shell = []string{*wFlags.command}, true
	}
	if len(rest) == 0 {
		return fail("no command given (usage: ration run [flags] -- COMMAND [ARG...])")
	}
	cfg := runner.Config{
		Command:      rest,
		Shell:        *shell,
		Retries:      *retries,
		DryRun:       *dryRun,
		KeepOrder:    *keepOrder,
		LineBuffer:   *lineBuffer,
		Joblog:       *joblogPath,
		Resume:       *resume,
		ResumeFailed: *resumeFailed,
		Stdout:       stdout,
		Stderr:       stderr,
	}
	if workerMode {
		// --dry-run shows what each worker would be sent.
		cfg.DryRunLine = func(in string, seq int64) string { return worker.RequestLine(seq, in) }
	}
	if *timeout != "" {
		if cfg.Timeout, err = runner.ParseDuration(*timeout); err != nil {
			return fail("--timeout: %q is not a duration", *timeout)
		}
	}
	if cfg.TermTimeout, err = runner.ParseDuration(*termTimeout); err != nil {
		return fail("--term-timeout: %q is not a duration", *termTimeout)
	}
	if *retries < 0 {
		return fail("--retries: %d is negative", *retries)
	}
	if cfg.Halt, err = runner.ParseHalt(*halt); err != nil {
		return fail("--halt %v", err)
	}
	if *keepOrder && *lineBuffer {
		return fail("--line-buffer and --keep-order cannot be combined")
	}
	if (*resume || *resumeFailed) && *joblogPath == "" {
		return fail("--resume and --resume-failed need --joblog")
	}
	if *bar && *noBar {
		return fail("--bar and --no-bar cannot be combined")
	}
	if cfg.Shard, err = shardFromFlags(*shardFlag, os.Getenv); err != nil {
		return fail("%v", err)
	}
	if *fsRoot != "" {
		if st, err := os.Stat(*fsRoot); err != nil || !st.IsDir() {
			return fail("--fs-root %s: not a directory", *fsRoot)
		}
	}
	logger, err := obsFlags.logger(stderr)
	if err != nil {
		return fail("%v", err)
	}
	say := obsFlags.sayer(stderr, logger).say

	// Inputs.
	sep := byte('\n')
	if *null {
		sep = 0
	}
	kinds := 0
	for _, b := range []bool{hasArgs, len(*argFiles) > 0, len(*files) > 0} {
		if b {
			kinds++
		}
	}
	if kinds > 1 {
		return fail("give inputs one way: ::: arguments, -a FILE or --files PATTERN")
	}
	if len(*excludes) > 0 && len(*files) == 0 {
		return fail("--exclude needs --files")
	}
	total := int64(-1)
	switch {
	case hasArgs:
		cfg.Input = input.Args(argInputs)
		total = 0
		for _, a := range argInputs {
			if cfg.Shard.Contains(a) {
				total++
			}
		}
	case len(*argFiles) > 0:
		var srcs []input.Seq
		for _, f := range *argFiles {
			if f == "-" {
				srcs = append(srcs, input.Reader(stdin, sep))
				continue
			}
			fh, err := os.Open(f)
			if err != nil {
				return fail("-a %s: %v", f, unwrapPathErr(err))
			}
			fh.Close()
			srcs = append(srcs, input.File(f, sep))
		}
		cfg.Input = input.Concat(srcs...)
	case len(*files) > 0:
		seq, err := input.Files(input.FilesOptions{
			Patterns: *files,
			Excludes: *excludes,
			Warn:     func(err error) { say(slog.LevelWarn, "ration run: warning: ", err.Error()) },
		})
		if err != nil {
			return fail("%v", err)
		}
		cfg.Input = seq
	default:
		cfg.Input = input.Reader(stdin, sep)
	}

	// How many jobs, and why.
	d, err := limits.Decide(limits.Options{FSRoot: *fsRoot, Jobs: *jobs, MemPerJob: int64(memPerJob.size)})
	if err != nil {
		msg := err.Error()
		if errors.Is(err, limits.ErrUsage) {
			msg = strings.TrimPrefix(msg, limits.ErrUsage.Error()+": ")
		}
		return fail("%s", msg)
	}
	for _, w := range d.Warnings {
		say(slog.LevelWarn, "ration run: warning: ", w)
	}
	if _, msg := limits.AdjustGOMAXPROCS(d); msg != "" {
		logger.Debug(msg)
	}
	cfg.Jobs, cfg.JobsReason = d.Jobs, d.Reason
	cfg.Logger = logger
	// JSON logs: a job's start error or task error is in its job_finished
	// record, not also a plain line.
	cfg.OmitErrorLines = *obsFlags.logFormat == logs.FormatJSON

	// Metrics, logs of events, stall watchdog (run_observe.go). r is set
	// before the watchdog first reads the running jobs.
	var r *runner.Runner
	ob, err := obsFlags.observe(logger, stderr, d, *fsRoot, func() []watchdog.Row { return r.Rows() })
	if err != nil {
		return fail("%v", err)
	}
	obs := ob.observers()
	// Adaptation (run_worker.go): the OOM rule and --mem-per-job auto of
	// the job pool, or the worker pool's own controller; --watch-limits.
	ad, adaptCfg := wFlags.adapt(logger, d, *jobs, memPerJob, *fsRoot, watchInterval, ob.metrics)
	cfg.Adapt = adaptCfg
	if !workerMode {
		cfg.OOMKills = oomCounter(*fsRoot)
	}
	if rp.Active() {
		cfg.Executor = &runner.ProcessExecutor{Reaper: rp}
	}
	if workerMode {
		// The worker pool times tasks out (a break, re-dispatched).
		if cfg.Executor, err = ad.workerExecutor(wFlags, d, memPerJob, cfg.Timeout, stderr, rp); err != nil {
			ob.stop()
			return fail("%v", err)
		}
		cfg.Timeout = 0
	}
	showBar := *bar || (!*noBar && !*dryRun && logs.IsTerminal(stderr))
	var progress *runner.Progress
	if showBar {
		progress = runner.NewProgress(stderr, total)
		obs = append(obs, progress)
	}
	cfg.Observer = obs

	r, err = runner.New(cfg)
	if err != nil {
		ob.stop()
		return fail("%v", err)
	}
	ob.start()
	ad.start(r.Controller())

	stopSignals := handleSignals(r, stderr, say, cfg.TermTimeout)
	sum, runErr := r.Run(context.Background())
	ad.stop()
	ob.stop()
	got := stopSignals()
	if progress != nil {
		progress.Finish()
	}
	if !*obsFlags.quiet {
		line := sum.String()
		if more := ad.summary(memPerJob.auto); more != "" {
			line += "; " + more
		}
		say(slog.LevelInfo, "ration: ", line, "event", "summary", "succeeded", sum.Succeeded, "failed", sum.Failed,
			"quarantined", sum.Quarantined, "killed", sum.Killed, "not_started", sum.NotStarted, "skipped", sum.Skipped)
	}
	if got != nil {
		say(slog.LevelWarn, "ration run: ", fmt.Sprintf("interrupted by %s: %d done, %d failed, %d stopped, %d pulled but not started",
			sigName(got), sum.Succeeded, sum.Failed, sum.Killed, sum.NotStarted))
		say(slog.LevelWarn, "", resumeHint(args, *joblogPath, hasArgs || len(*argFiles) > 0 || len(*files) > 0))
	}
	if runErr != nil {
		say(slog.LevelError, "ration run: ", runErr.Error())
	}
	switch {
	case got != nil:
		return 128 + int(got.(syscall.Signal))
	case runErr != nil:
		return exitUsage
	}
	return int(min(sum.Failed, 101))
}

// handleSignals handles the run's signals until the returned stop is
// called: the first SIGINT/SIGTERM drains r, the second kills its jobs;
// SIGUSR1 prints r's running-jobs table. stop returns the first
// SIGINT/SIGTERM, nil if none. signal.Notify lives here only: the runner
// takes Drain and Kill.
func handleSignals(r *runner.Runner, stderr io.Writer, say func(slog.Level, string, string, ...any), termTimeout time.Duration) (stop func() os.Signal) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGUSR1)
	done := make(chan struct{})
	exited := make(chan os.Signal, 1)
	go func() {
		var first os.Signal
		defer func() { exited <- first }()
		for {
			select {
			case <-done:
				return
			case s := <-sigs:
				if s == syscall.SIGUSR1 {
					_ = r.WriteStatus(stderr) // stderr gone: nobody to tell
					continue
				}
				if first == nil {
					first = s
					say(slog.LevelWarn, "ration run: ", fmt.Sprintf("got %s: starting no more jobs; %d running get %s to finish (signal again to kill them)",
						sigName(s), len(r.Running()), termTimeout))
					r.Drain()
					continue
				}
				say(slog.LevelWarn, "ration run: ", fmt.Sprintf("got %s again: killing the running jobs", sigName(s)))
				r.Kill()
			}
		}
	}()
	return func() os.Signal {
		close(done)
		got := <-exited
		signal.Stop(sigs)
		return got
	}
}

// shardFromFlags returns the --shard value, or the shard from
// JOB_COMPLETION_INDEX when RATION_SHARD_COUNT is set, or no shard.
func shardFromFlags(flag string, getenv func(string) string) (runner.Shard, error) {
	if flag != "" {
		s, err := runner.ParseShard(flag)
		if err != nil {
			return s, fmt.Errorf("--shard: %w", err)
		}
		return s, nil
	}
	n := getenv("RATION_SHARD_COUNT")
	if n == "" {
		return runner.Shard{}, nil
	}
	i := getenv("JOB_COMPLETION_INDEX")
	if i == "" {
		return runner.Shard{}, fmt.Errorf("RATION_SHARD_COUNT=%s is set but JOB_COMPLETION_INDEX is not", n)
	}
	s, err := runner.NewShard(i, n)
	if err != nil {
		return s, fmt.Errorf("JOB_COMPLETION_INDEX/RATION_SHARD_COUNT: %w", err)
	}
	return s, nil
}

// resumeHint tells how to run the rest of an interrupted run.
func resumeHint(args []string, joblog string, inputInArgs bool) string {
	if joblog == "" {
		return "ration run: no --joblog was given, so this run cannot be resumed; add --joblog FILE next time"
	}
	words := []string{"ration", "run"}
	if !slices.Contains(args, "--resume") && !slices.Contains(args, "--resume-failed") {
		words = append(words, "--resume")
	}
	hint := "ration run: to run the rest: " + template.Join(append(words, args...))
	if !inputInArgs {
		hint += "  (with the same standard input)"
	}
	return hint
}

func sigName(s os.Signal) string {
	if sig, ok := s.(syscall.Signal); ok {
		if name := unix.SignalName(sig); name != "" {
			return name
		}
	}
	return s.String()
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
