package main

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/internal/logs"
	"github.com/ration-run/ration/runner/adapt"
	"github.com/ration-run/ration/runner/worker"
)

// runFlags are the flags of `ration run` as the user gave them, before any
// checking (see plan). Durations, the halt and shard specs and -j stay
// text: plan parses them, so that every error names its flag the same way.
type runFlags struct {
	help bool

	// What to run and on what.
	jobs         string
	memPerJob    memFlag
	fsRoot       string
	argFiles     []string
	null         bool
	files        []string
	excludes     []string
	hidden       bool
	gitignore    bool
	shell        bool
	shard        string
	timeout      string
	termTimeout  string
	retries      int
	retriesSet   bool // --retries was given (--retries 0 is for ever)
	halt         string
	exitCount    bool
	dryRun       bool
	joblog       string
	resume       bool
	resumeFailed bool
	resumeAny    bool
	manifest     string
	keepOrder    bool
	lineBuffer   bool
	bar, noBar   bool

	// Observation (issue 7): metrics, logs, stall watchdog.
	metricsAddr  string
	debug        bool
	logFormat    string
	quiet        bool
	stallTimeout string
	slowFactor   float64

	// Workers and adaptation (issue 5).
	worker        string
	maxBreaks     int
	maxTasks      int
	maxRSS        sizeFlag
	watchLimits   bool
	watchInterval string

	// GNU parallel's input model, batching and output (issue 13).
	gnu gnuFlags
	// gnucli (issue 13): separators, --shuf, -J, and the options that
	// print and exit (run_gnu_cli.go).
	gnuCLI gnuCLIFlags
	// GNU parallel's flags that change how jobs run (gnuexec branch).
	exec gnuExecFlags
	// GNU parallel's --pipe modes (issue 13, branch gnupipe).
	pipe gnuPipeFlags
	// parset is --_parset (run_gnu_parset.go).
	parset string
	// GNU parallel's options that cancel others (run_gnu_more.go).
	more gnuMoreFlags

	// workerGiven is whether --worker was given at all, even empty.
	workerGiven bool
	// args are the arguments after the flags: COMMAND [ARG...] [::: INPUT...].
	args []string
}

// newRunFlagSet returns the FlagSet of `ration run`, storing into f. Its
// errors are returned by Parse, never printed.
func newRunFlagSet(f *runFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("ration run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetInterspersed(false)
	fs.StringVarP(&f.jobs, "jobs", "j", "", "jobs at once: `N`, N% of the effective CPUs, +N/-N (the effective CPUs plus/minus N), or a FILE holding one, read again as jobs end (default: RATION_JOBS, then 2 per CPU, at most 8)")
	fs.Var(&f.memPerJob, "mem-per-job", "expected memory of one job, `SIZE` like 512M; caps jobs at 0.9 x memory limit / SIZE; auto learns it from the peak RSS of finished jobs")
	fs.StringVar(&f.fsRoot, "fs-root", "", "read the cgroup files below `DIR` (a snapshot) instead of the live system")
	fs.StringArrayVarP(&f.argFiles, "arg-file", "a", nil, "read inputs from `FILE`, one per line; repeated, the files are combined as ::: groups are (- is stdin)")
	fs.BoolVarP(&f.null, "null", "0", false, "inputs are separated by NUL, not newline")
	fs.StringArrayVar(&f.files, "files", nil, "inputs are the files matching `PATTERN` (** matches directories; repeatable)")
	fs.StringArrayVar(&f.excludes, "exclude", nil, "leave out files and directories matching `PATTERN` (repeatable)")
	fs.BoolVar(&f.hidden, "hidden", false, "--files: include hidden files and directories (names starting with '.'; .git never with --gitignore)")
	fs.BoolVar(&f.gitignore, "gitignore", false, "--files: skip what .gitignore, .ignore and .git/info/exclude ignore, and .git itself")
	fs.StringVar(&f.timeout, "timeout", "", "stop a job running longer than `DURATION` (500ms, 2m, or seconds)")
	fs.StringVar(&f.termTimeout, "term-timeout", defaultTermTimeout.String(), "on SIGINT/SIGTERM, let running jobs finish for `DURATION`, then stop them")
	fs.IntVar(&f.retries, "retries", 0, "run a failing job up to `N` times in all (0: until it succeeds, as GNU parallel)")
	fs.StringVar(&f.halt, "halt", "never", "stop early at `WHEN,COND`: now|soon,fail|success|done=N|P% (e.g. now,fail=1)")
	fs.BoolVar(&f.exitCount, "exit-count", false, "exit with the number of failed jobs (0, 1-100, 101 for more) even when --halt would exit with a job's own status or a percentage; 255 stays ration's usage errors, 128+N its signals (the Helm chart sets it)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the commands instead of running them (with --worker: the task line each input would be sent as)")
	fs.StringVar(&f.joblog, "joblog", "", "write GNU parallel's joblog to `FILE`")
	fs.BoolVar(&f.resume, "resume", false, "skip the jobs the joblog records")
	fs.BoolVar(&f.resumeFailed, "resume-failed", false, "skip the jobs the joblog records as succeeded (re-run failed ones)")
	fs.BoolVar(&f.resumeAny, "resume-any-command", false, "with --resume or --resume-failed: resume a joblog written by another command instead of refusing it (its records match none of this command's jobs)")
	fs.BoolVar(&f.bar, "bar", false, "show a progress bar on stderr (default: when stderr is a terminal)")
	fs.BoolVar(&f.noBar, "no-bar", false, "never show a progress bar")
	fs.BoolVarP(&f.keepOrder, "keep-order", "k", false, "print the output of jobs in input order")
	fs.BoolVar(&f.lineBuffer, "line-buffer", false, "print output line by line as it comes")
	fs.BoolVar(&f.shell, "shell", false, "run the command through GNU parallel's shell ($PARALLEL_SHELL, else the shell ration was started from, else $SHELL, else sh), with each substituted input quoted (not with --worker, whose command always runs through sh -c)")
	fs.StringVar(&f.manifest, "manifest", "", "read the inputs from the manifest `FILE` (one per line, or NUL-separated with -0; `ration manifest` writes one); with --shard I/N (or RATION_SHARD_COUNT), read only shard I's byte range of it")
	fs.StringVar(&f.shard, "shard", "", "run only shard `I/N` of the inputs (default from JOB_COMPLETION_INDEX when RATION_SHARD_COUNT=N)")

	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on `HOST:PORT` under /metrics (:9090 every interface; port 0 picks one, logged at start, with --quiet as a warning)")
	fs.BoolVar(&f.debug, "debug", false, "log every job start and end; also serve /debug/pprof/ on --metrics-addr")
	fs.StringVar(&f.logFormat, "log-format", logs.FormatAuto, "log `FORMAT`: auto (human on a terminal, else text), human, text or json")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "log warnings and errors only (and the address of --metrics-addr with port 0), and no summary line")
	fs.StringVar(&f.stallTimeout, "stall-timeout", "", "when no job finished for `DURATION`, report the running jobs and ration's goroutines (default off)")
	fs.Float64Var(&f.slowFactor, "slow-factor", 5, "warn once about a job running `F` times longer than the median job, and at least 1s (0: off)")

	fs.StringVar(&f.worker, "worker", "", "send each input as a task to long-lived worker processes started with the shell command `CMD` (JSON lines protocol, see docs/workers.md) instead of running COMMAND per input")
	fs.IntVar(&f.maxBreaks, "max-breaks", worker.DefaultMaxBreaks, "--worker: quarantine a task after it broke `N` workers (an OOM kill follows the OOM rule instead: quarantined once killed alone, or at the 3rd kill)")
	fs.IntVar(&f.maxTasks, "worker-max-tasks", 0, "--worker: replace a worker after `N` tasks (0: never)")
	fs.Var(&f.maxRSS, "worker-max-rss", "--worker: replace a worker once its process tree's RSS exceeds `SIZE` after a task (0: never)")
	fs.BoolVar(&f.watchLimits, "watch-limits", true, "re-read the cgroup CPU and memory limits while running and resize the pool when they change")
	fs.StringVar(&f.watchInterval, "watch-interval", adapt.DefaultWatchInterval.String(), "with --watch-limits, re-read the limits every `DURATION`")

	addGNUFlags(fs, f)
	fs.BoolVarP(&f.help, "help", "h", false, "show this help")
	return fs
}

// parseRunFlags parses the arguments of `ration run` into runFlags. The
// error is pflag's (an unknown flag, a bad number or size), which names
// the flag.
func parseRunFlags(args []string) (runFlags, *pflag.FlagSet, error) {
	var f runFlags
	fs := newRunFlagSet(&f)
	err := fs.Parse(args)
	if gnu, ok := gnuFilesArgs(args, fs, err); ok { // gnuexec branch: GNU's --files
		f = runFlags{}
		fs = newRunFlagSet(&f)
		err = fs.Parse(gnu)
	}
	if err != nil {
		if hint := unknownFlagHint(fs, err.Error()); hint != "" {
			return f, fs, flagMsg("", hint)
		}
		return f, fs, err
	}
	f.args, f.workerGiven, f.retriesSet = fs.Args(), fs.Changed("worker"), fs.Changed("retries")
	f.gnu.recEndSet, f.gnu.recStartSet = fs.Changed("recend"), fs.Changed("recstart")
	f.gnu.colsepSet, f.gnu.delimSet = fs.Changed("colsep"), fs.Changed("delimiter")
	f.gnu.headerSet, f.gnu.trimSet = fs.Changed("header"), fs.Changed("trim")
	gnuExecParsed(fs, &f) // gnuexec branch
	gnuMoreParsed(fs, &f)
	for name, v := range map[string]*int{"max-args": &f.gnu.maxArgs, "max-replace-args": &f.gnu.maxReplaceArgs, "max-lines": &f.gnu.maxLines} {
		if !fs.Changed(name) {
			*v = -1
		}
	}
	return f, fs, nil
}
