package runcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/ration-run/ration/cmd/ration/internal/cli"
	"github.com/ration-run/ration/internal/cmdcheck"
	"github.com/ration-run/ration/internal/gnuinput"
	"github.com/ration-run/ration/internal/jobcgroup"
	"github.com/ration-run/ration/internal/logs"
	"github.com/ration-run/ration/internal/progress"
	"github.com/ration-run/ration/internal/reaper"
	"github.com/ration-run/ration/internal/template"
	"github.com/ration-run/ration/internal/watchdog"
	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner"
)

// wiring is a planned run built: the runner and everything around it.
type wiring struct {
	plan     *runPlan
	stderr   io.Writer
	reaper   *reaper.Reaper
	jobs     *jobcgroup.Group // the jobs' memory cgroup; nil: none
	guard    *guardRun        // ration's memory guard; nil: none
	log      *slog.Logger
	say      sayer
	decision limits.Decision
	obs      *observation
	adapt    *adaptation
	bar      *progress.Bar // nil: no bar (a nil Bar does nothing)
	runner   *runner.Runner
	args     *gnuinput.Inputs // nil until opened
	stopped  bool             // the adaptation and the observation were stopped
	hub      *signalHub       // main's signal handling; nil: the run's own
}

// runnerRef is the runner as the stall watchdog sees it: the watchdog is
// one of the runner's observers, so it is built before the runner, and
// wire sets the runner once, right after runner.New and before anything
// starts: the watchdog's first look comes later. Unset, it has no rows.
type runnerRef struct{ p atomic.Pointer[runner.Runner] }

func (x *runnerRef) set(r *runner.Runner) { x.p.Store(r) }

// Rows returns the runner's running jobs.
func (x *runnerRef) Rows() []watchdog.Row {
	if r := x.p.Load(); r != nil {
		return r.Rows()
	}
	return nil
}

// wire builds the run of p in dependency order: the reaper (as PID 1,
// every job is started through it), the logger, the inputs, the limits
// decision, the observers, the adaptation, the executor (with --worker,
// the worker processes start here), the progress bar, the runner. Its
// errors are usage or input errors; what it started is stopped by close.
func wire(p *runPlan, stdin io.Reader, stdout, stderr io.Writer) (_ *wiring, err error) {
	w := &wiring{plan: p, stderr: stderr}
	defer func() {
		if err != nil {
			w.close()
		}
	}()
	// ration is a child subreaper (as PID 1, a container's entrypoint, it
	// is one anyway): the orphans that jobs and workers leave behind, in
	// whatever session, come back to it, are reaped, and are killed when
	// the run ends (close).
	if w.reaper, err = reaper.New(context.Background(), reaper.Options{Subreaper: true}); err != nil {
		return nil, err
	}
	if err = checkFSRoot(p.limits.FSRoot); err != nil {
		return nil, err
	}
	if err = checkGNUExec(p); err != nil {
		return nil, err
	}
	// The bar comes first: every writer to the terminal (jobs' output, the
	// logger, ration's own lines) goes through it, so that it clears its
	// line before their text and redraws after.
	if w.showBar() {
		w.bar = progress.New(stderr, progress.Options{Terminal: logs.IsTerminal(stderr), Total: p.input.total})
		stdout, stderr = w.bar.Wrap(stdout), w.bar.Wrap(stderr)
		w.stderr = stderr
	}
	if w.log, err = logs.New(stderr, p.log); err != nil {
		return nil, err
	}
	w.say = sayer{w: stderr, log: w.log, json: p.observe.json}
	for _, msg := range p.warnings {
		w.say.say(slog.LevelWarn, "ration run: warning: ", msg)
	}
	if p.observe.json {
		w.bar.LogTo(w.log) // off a terminal its lines would break the JSON log
	}
	cfg := p.cfg
	cfg.Stdout, cfg.Stderr, cfg.Logger = stdout, stderr, w.log
	if err = w.checkCommand(&cfg); err != nil {
		return nil, err
	}
	if err = w.checkRun(&cfg, stdin, stdout); err != nil {
		return nil, err
	}
	if err = w.inputs(&cfg, stdin); err != nil {
		return nil, err
	}
	if err = w.gnuCLIWire(&cfg); err != nil { // GNU's -j FILE, --shuf, --shellquote
		return nil, err
	}
	if err = w.decide(); err != nil {
		return nil, err
	}
	cfg.Jobs, cfg.JobsReason = w.decision.Jobs, w.decision.Reason
	if p.jobsZero {
		cfg.JobsReason = jobsZeroReason(cfg.JobsReason)
	}
	if p.spread {
		cfg.GNU.Batch.Spread = cfg.Jobs
	}
	if p.parentShell {
		cfg.GNU.Template.ShellPath = parentShell(p.limits.Getenv)
	}
	ref := &runnerRef{}
	if err = w.observe(&cfg, ref); err != nil {
		return nil, err
	}
	w.gnuCLIObserve(&cfg, ref) // GNU's -j FILE
	if w.runner, err = runner.New(cfg.runnerConfig()); err != nil {
		return nil, err
	}
	ref.set(w.runner)
	return w, nil
}

// ownOutput is what the run writes where a --files walk may meet it: the
// joblog, and --results DIR (without replacement strings) or NAME.csv.
func ownOutput(cfg *runConfig) []string {
	var out []string
	if cfg.Joblog != "" && cfg.Joblog != "-" {
		out = append(out, cfg.Joblog)
	}
	if r := cfg.GNU.Results; r != "" {
		if t, err := template.ParseOptions([]string{r}, cfg.GNU.Template); err == nil && !t.HasInput() {
			out = append(out, r)
		}
	}
	if r := cfg.GNU.Exec.ResultsTable; r != "" {
		out = append(out, r)
	}
	return out
}

// observe builds what watches and steers the run, into cfg: the metrics
// server and watchdog, the adaptation of concurrency, the executor (with
// --worker, the worker pool) and the progress bar. ref stands for the
// runner, which is made after them.
func (w *wiring) observe(cfg *runConfig, ref *runnerRef) error {
	p, d := w.plan, w.decision
	var err error
	if w.obs, err = newObservation(p.observe, w.log, w.stderr, d, p.limits.FSRoot, ref.Rows); err != nil {
		return err
	}
	obs := w.obs.observers()
	w.adapt, cfg.Adapt = newAdaptation(p, w.log, d, w.obs.metrics)
	if w.bar != nil {
		obs = append(obs, w.bar)
	}
	cfg.Observer = obs
	w.jobs = w.jobCgroup()
	w.guard = w.startMemoryGuard()
	w.guardJobNice(&cfg.GNU.Exec)
	w.adapt.guard = w.guard.get()
	cfg.Memory = memorySampler(p.limits.FSRoot, p.limits.Getenv, w.jobs) // memory admission, in both modes
	cli.GuardAdmission(&cfg.Config, w.guard.get())
	if w.jobs != nil {
		w.adapt.jobs = w.jobs
		if cfg.Adapt != nil && cfg.Adapt.MemoryLimit > 0 {
			cfg.Adapt.MemoryLimit = w.jobs.Limit // what --mem-per-job auto divides
		}
	}
	switch {
	case p.worker.command == "":
		cfg.OOMKills = oomCounter(p.limits.FSRoot, w.jobs)
		if g := w.guard.get(); g != nil {
			cfg.OOMKills = g.Counter(cfg.OOMKills) // its stops are OOM kills
			// A job it stopped alone, its own peak past the memory for
			// jobs, does not fit: running it again would race the
			// kernel's group kill once more.
			cfg.OOMAloneFails = true
		}
		if w.reaper.Active() || w.jobs != nil {
			cfg.Executor = &runner.ProcessExecutor{Reaper: w.reaper, Cgroup: w.jobs}
		}
	default:
		// The runner starts the workers when it runs (not with --dry-run,
		// where nothing runs) and closes them at its end.
		if cfg.Executor, err = w.adapt.workerExecutor(p.worker, p.memAuto, d, w.stderr, w.reaper, w.jobs); err != nil {
			return err
		}
	}
	return nil
}

// checkCommand says before any job starts, and before the inputs are
// read, what would make every job fail or do what was not meant: a program that cannot be found is the run's
// error (exit 255, one line), shell syntax without --shell a warning.
// A dry run runs nothing and prints the commands only; with --worker the
// worker's program is checked (checkRun); with no command the inputs are
// the commands.
func (w *wiring) checkCommand(cfg *runConfig) error {
	if cfg.DryRun || w.plan.worker.command != "" || cfg.GNU.InputIsCommand {
		return nil
	}
	c := cmdcheck.Command{Argv: cfg.Command, Shell: cfg.Shell, Workdir: cfg.GNU.Exec.Workdir != "", Template: cfg.GNU.Template,
		Header: w.plan.input.header}
	if err := cmdcheck.Check(c); err != nil {
		return err
	}
	if h := cmdcheck.Hint(c); h != "" && !w.plan.observe.quiet {
		w.say.say(slog.LevelWarn, "ration run: warning: ", h)
	}
	return nil
}

// showBar reports whether to draw the progress bar.
func (w *wiring) showBar() bool {
	if w.plan.cfg.DryRun {
		return false // it prints the commands only
	}
	switch w.plan.bar {
	case barOn:
		return true
	case barIfTerminal:
		return logs.IsTerminal(w.stderr)
	}
	return false
}

// stop ends the watching of the limits, the worker processes, the
// metrics server and the watchdog. Only its first call does anything.
func (w *wiring) stop() {
	if w.stopped {
		return
	}
	w.stopped = true
	w.guard.stop()
	if w.adapt != nil {
		w.adapt.stop()
	}
	if w.obs != nil {
		w.obs.stop()
	}
}

// close stops what wire started (see stop), and then the reaper. It may
// be called more than once.
func (w *wiring) close() {
	w.stop()
	if w.args != nil {
		w.args.Close()
	}
	if w.reaper != nil {
		// What jobs and workers left running (in their own session, out
		// of reach of their process group's kill) goes with the run,
		// before the jobs' cgroup, which it would keep busy.
		if n := w.reaper.KillDescendants(2 * time.Second); n > 0 && w.log != nil {
			w.log.Warn("killed processes that jobs or workers left running", "processes", n)
		}
	}
	if w.jobs != nil {
		// The run is over: no job or worker is left in the group.
		if err := w.jobs.Close(); err != nil {
			w.log.Warn("removing the jobs' memory cgroup", "err", err)
		}
		w.jobs = nil
	}
	if w.reaper != nil {
		w.reaper.Stop()
		w.reaper = nil
	}
}

// run runs the wired run until it ends or is interrupted, reports it and
// returns the exit status.
func (w *wiring) run() int {
	w.obs.start()
	w.adapt.start(w.runner.Controller())
	stopSignals := handleSignals(w.hub, w.runner, w.stderr, w.say.say, w.writeStatus, w.plan.cfg.TermTimeout, w.plan.cfg.Grace)
	w.bar.Start()
	sum, runErr := w.runner.Run(context.Background())
	w.stop()
	got := stopSignals()
	w.bar.Finish()
	return w.report(sum, runErr, got)
}

// report writes the summary line, the interruption notice and the error
// of the run, and returns its exit status.
func (w *wiring) report(sum runner.Summary, runErr error, got os.Signal) int {
	say := w.say.say
	if status, ok := w.outputGone(sum, runErr); ok {
		if got != nil {
			// Interrupted, and the output went with the signal (a hung-up
			// terminal, a pipeline's reader killed by the same Ctrl-C): the
			// status is the signal's, as after any other interrupted run.
			return signalStatus(got)
		}
		return status
	}
	// A run that failed before it took a single job (a joblog that cannot
	// be opened, an input that names nothing) is one line on stderr: the
	// error. A summary of nothing would only hide it.
	tookNothing := sum.Succeeded+sum.Failed+sum.Killed+sum.NotStarted+sum.Skipped == 0
	// A dry run prints the commands only: it ran nothing to sum up.
	quiet := w.plan.observe.quiet
	if !quiet && !w.plan.cfg.DryRun && !(runErr != nil && tookNothing) {
		// On a terminal the line fits its width where it can; a file, a
		// pipe and the JSON log get it whole.
		columns := 0
		if !w.plan.observe.json {
			columns = progress.Columns(w.stderr)
		}
		line := progress.SummaryLine(sum, w.adapt.summary(w.plan.memAuto), len("ration: "), columns)
		say(slog.LevelInfo, "ration: ", line, "event", "summary", "succeeded", sum.Succeeded, "failed", sum.Failed,
			"quarantined", sum.Quarantined, "killed", sum.Killed, "not_started", sum.NotStarted, "skipped", sum.Skipped)
	}
	if got != nil && !quiet { // -q: errors only; the status tells the signal
		say(slog.LevelWarn, "ration run: ", fmt.Sprintf("interrupted by %s: %d done, %d failed, %d stopped, %d pulled but not started",
			sigName(got), sum.Succeeded, sum.Failed, sum.Killed, sum.NotStarted))
		say(slog.LevelWarn, "", w.resumeHint())
	}
	if runErr != nil {
		msg := runErr.Error()
		if errors.Is(runErr, runner.ErrOtherCommand) {
			msg += "; to resume it anyway (every input without a record of this command runs), add --resume-any-command"
		}
		say(slog.LevelError, "ration run: ", msg)
	}
	switch {
	case got != nil:
		return signalStatus(got)
	case runErr != nil:
		return exitUsage
	}
	// --exit-count keeps the status a count (the chart's podFailurePolicy
	// reads 1..101 as failed jobs, 255 as ration's usage error): GNU's
	// --halt status would be a job's own, which may be 255 or 137.
	if st, halted := w.runner.HaltStatus(); halted && !w.plan.exitCount {
		return st
	}
	return int(min(sum.Failed, 101))
}

// resumeHint tells how to run the rest of this run.
func (w *wiring) resumeHint() string {
	c := &w.plan.cfg
	return resumeHint(w.plan.args, c.Joblog, c.Resume || c.ResumeFailed, w.plan.input.given())
}
