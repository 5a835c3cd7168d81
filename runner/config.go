package runner

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/ration-run/ration/internal/adapt"
	"github.com/ration-run/ration/internal/memory"
	"github.com/ration-run/ration/internal/runhook"
	"github.com/ration-run/ration/internal/template"
	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/input"
)

// The causes with which the runner stops running jobs; context.Cause of an
// attempt's context is one of these (or the caller's) when it was stopped.
var (
	// ErrTimeout: the attempt ran longer than Config.Timeout.
	ErrTimeout = errors.New("job timed out")
	// ErrInterrupted: Drain's wait ran out, or Kill was called.
	ErrInterrupted = errors.New("run interrupted")
	// ErrHalted: --halt now stopped the run.
	ErrHalted = errors.New("run halted")
	// ErrOOMKilled is a JobFinished's error for a job whose last attempt
	// was OOM-killed (see Config.OOMKills); the error wrapping it says why
	// the job was not re-queued.
	ErrOOMKilled = errors.New("OOM-killed (it failed while the memory cgroup's oom_kill counter rose)")
	// ErrOtherCommand is wrapped by Run's error when a resumed joblog
	// holds a record of another command (see Config.Resume).
	ErrOtherCommand = errors.New("the joblog records another command")
	// ErrInput is wrapped by Run's error when the input could not be read
	// to its end; the jobs already started were run and recorded.
	ErrInput = errors.New("input error")
	// ErrObserverPanic is wrapped by Run's error when Config.Observer
	// panicked: the run started no more jobs from then on, and the jobs
	// that were running ended and were counted as usual.
	ErrObserverPanic = errors.New("runner: Observer panicked")
	// ErrExecutorPanic is wrapped by the JobFinished error of a job whose
	// attempt panicked in Config.Executor (the job failed), and by Run's
	// error: the run started no more jobs from then on.
	ErrExecutorPanic = errors.New("runner: Executor panicked")
)

// Config is everything a run needs. The zero value of each field is a
// usable default unless its comment says otherwise.
type Config struct {
	// Command is the command template (required); see package template.
	Command []string
	// Shell runs the command through sh -c with quoted substitutions.
	Shell bool
	// Input yields the inputs; nil means none. Run pulls it on its own
	// goroutine, one input as a job can take it: an Input that blocks (a
	// pipe nobody closes) holds Run's return after Drain, Kill or a
	// canceled context until it yields or returns, so an Input that may
	// block should end when the run's context is done.
	Input input.Seq
	// Dialect, when set, configures the run for a family of options the
	// engine knows nothing of (ration run's compatibility options): New
	// checks it against the other fields and installs its hooks (package
	// internal/runhook). Its type is internal: an embedder leaves it nil.
	Dialect runhook.Dialect

	// Jobs is the number of jobs run at once; <= 0 asks limits.Decide
	// with default options. JobsReason says why, for the summary.
	Jobs       int
	JobsReason string
	// Adapt, when set, makes the Runner own a concurrency controller
	// (Runner.Controller) that adapts the number of jobs run at once to
	// the run's events; its Limit is Jobs and its LimitReason JobsReason
	// when empty. Nil: the size changes only through Resize.
	Adapt *adapt.Config

	// Timeout stops an attempt that runs longer (0: no limit).
	Timeout time.Duration
	// TermTimeout is how long Drain lets running jobs finish before
	// stopping them (0: stop them at once).
	TermTimeout time.Duration
	// Grace is the time between SIGTERM and SIGKILL when a job is stopped
	// (0: DefaultGrace).
	Grace time.Duration
	// Retries is the number of attempts a failing job gets in all (0 and
	// 1: one attempt; retrying for ever is a large Retries). Only the
	// last attempt's output is printed and logged.
	Retries int
	// Halt stops the run early on failures or successes.
	Halt Halt
	// DryRun prints each job's command on Stdout instead of running it.
	DryRun bool
	// DryRunLine, when set, is the line DryRun prints for a job instead of
	// its command (e.g. the task line a worker would get); seq is the job
	// number ({#}).
	DryRunLine func(input string, seq int64) string
	// KeepOrder prints the output of jobs in input order (-k); a job's
	// output waits for the jobs before it, within the window of
	// pool.MapOrdered: behind a running job, at most Jobs+pool.PullSlack
	// jobs start, that one included. A job's JobFinished event comes when
	// its process ends, and its joblog record when its output was printed:
	// when that fails (ration's stdout gone), the Summary counts the job
	// failed (or stopped, once the run stopped for it) although its
	// JobFinished said Succeeded.
	KeepOrder bool
	// LineBuffer prints output line by line as jobs write it. With
	// KeepOrder only the job first in input order does; the others' output
	// is held until it is their turn (-k --line-buffer).
	LineBuffer bool

	// Joblog is the path of a joblog to write (package joblog's format;
	// "" for none); "-" writes it to Stdout, between the jobs' output
	// (--joblog -).
	Joblog string
	// JoblogAppend appends the records to the joblog's existing ones
	// (--joblog +FILE) instead of emptying it first; a
	// header is written only into an empty log.
	JoblogAppend bool
	// Resume skips the jobs the joblog records (as ended, whatever their
	// status); ResumeFailed skips only those recorded as succeeded. Both
	// append to the joblog and need Joblog. A job is matched to its
	// record by its command, inputs substituted (joblog.Skipper), so a
	// resume over inputs that changed runs each input that did not end
	// exactly once; --pipe blocks and commands holding the slot ({%})
	// are matched by job number. Run refuses, with an error wrapping
	// ErrOtherCommand, a joblog holding a record that Command could not
	// have written, unless ResumeAnyCommand.
	Resume, ResumeFailed bool
	// ResumeAnyCommand resumes a joblog written by another command: its
	// records match no job of this one, so every input runs.
	ResumeAnyCommand bool
	// InputFiles are the paths of the files the inputs are read from ("-"
	// for stdin): a Joblog that is one of them is refused before anything
	// is written (joblog.Options.Inputs).
	InputFiles []string
	// Shard restricts the run to one shard of the input.
	Shard Shard

	// Observer receives the run's events (nil: none). It is called
	// without the runner's locks held (see package event); a panic in it
	// stops the run (ErrObserverPanic) instead of leaving a job behind.
	Observer event.Observer
	// Stdout and Stderr receive the jobs' output (nil: discarded).
	Stdout, Stderr io.Writer
	// Logger receives warnings (nil: discarded).
	Logger *slog.Logger
	// OmitErrorLines leaves out the line ration writes into a job's stderr
	// when the job could not start or its worker task failed ("ration:
	// ..."); the JobFinished event's Err carries the same error. For runs
	// whose stderr must hold log records only (--log-format json).
	OmitErrorLines bool
	// Executor runs the attempts (nil: a ProcessExecutor). A panic in
	// its Exec fails the job and stops the run (ErrExecutorPanic).
	Executor Executor
	// OOMKills, when set, reads the oom_kill counter of the memory cgroup
	// the jobs run in (cgroup.OOMKills of ration's own memory cgroup). An
	// attempt that failed while the counter rose and whose process group
	// is gone was OOM-killed (event.CauseOOM; memory.Attribute: SIGKILL, or
	// exit 137 from a shell whose child was SIGKILLed): the job is
	// re-queued without counting against Retries (memory.OOMRetry: the
	// first kill always but see OOMAloneFails, a later one unless it ran
	// alone or it was the Admit.OOMAttempts'th), and that retry waits
	// until fewer than the pool size of other jobs run, so it runs at the
	// concurrency the controller (Adapt with HalveOnJobOOM) lowered on the
	// JobRetried event. Nil: no OOM classification. A failing read counts
	// as unknown. It is called from several goroutines, at most about
	// every 50 ms as jobs start plus a few times after each SIGKILL.
	OOMKills func() (int64, error)
	// OOMAloneFails fails a job at its first OOM kill while it ran alone
	// when its own peak resident memory was at least the memory for jobs
	// (the memory admission's, with Memory set; memory.Gate.Outgrew),
	// where a first kill is otherwise always re-queued once (the kernel may
	// have been pushed over the limit by a process that is not a job). Set
	// it where each OOM kill risks more than the job: under a memory guard
	// (memory.Guard), whose every stop of a job growing past the limit
	// races the kernel's group kill of the whole container.
	OOMAloneFails bool
	// Memory, when set, reads the memory cgroup the jobs share
	// (memory.NewSampler of ration's own): before each attempt starts, a
	// memory admission gate (package internal/memory, configured by Admit) checks
	// that one more job fits, and holds it until one does. Nil: attempts
	// start as soon as the pool has room.
	Memory *memory.Sampler
	// Admit tunes the memory admission (its zero value: admit's
	// defaults); the OOM re-queue bound applies also without Memory.
	Admit memory.Config
	// SpillBytes is the output of one stream of one job held in memory
	// before it goes to a temporary file in TempDir (0: DefaultSpill;
	// TempDir "": os.TempDir()).
	SpillBytes int
	TempDir    string
}

// check reports the first invalid field of c, in the Config's own terms:
// New refuses every Config that ration run's flags refuse.
func (c *Config) check() error {
	switch {
	case len(c.Command) == 0:
		return errors.New("runner: no command given")
	case (c.Resume || c.ResumeFailed) && c.Joblog == "":
		return errors.New("runner: Resume and ResumeFailed need Joblog")
	case (c.Resume || c.ResumeFailed || c.JoblogAppend) && c.Joblog == "-":
		return errors.New("runner: Resume, ResumeFailed and JoblogAppend need a Joblog file, not - (Stdout)")
	case c.Timeout < 0 || c.TermTimeout < 0 || c.Grace < 0 || c.Retries < 0:
		return errors.New("runner: negative Timeout, TermTimeout, Grace or Retries")
	case c.Shard.Count < 0 || (c.Shard.Count > 0 && (c.Shard.Index < 0 || c.Shard.Index >= c.Shard.Count)):
		return fmt.Errorf("runner: Shard %d/%d: want 0 <= Index < Count", c.Shard.Index, c.Shard.Count)
	}
	if err := c.Halt.check(); err != nil {
		return err
	}
	if c.Dialect == nil {
		return nil
	}
	return c.Dialect.Check(runhook.Settings{LineBuffer: c.LineBuffer, KeepOrder: c.KeepOrder, DryRun: c.DryRun, Retries: c.Retries})
}

// templateOptions are the options the command is parsed with: the
// dialect's, and Shell.
func (c *Config) templateOptions() template.Options {
	var o template.Options
	if c.Dialect != nil {
		o = c.Dialect.TemplateOptions()
	}
	o.Shell = c.Shell
	return o
}

// dialectHooks are the dialect's hooks for a run of the command tmpl (none
// without a dialect).
func (c *Config) dialectHooks(tmpl *template.Template) (runhook.Hooks, error) {
	if c.Dialect == nil {
		return runhook.Hooks{}, nil
	}
	e := runhook.Engine{Template: tmpl, Input: c.Input, LineBuffer: c.LineBuffer, Logger: c.Logger}
	if e.Logger == nil {
		e.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Shard.Count > 1 {
		shard := c.Shard
		e.Keep = shard.Contains
	}
	return c.Dialect.Install(e)
}

// withDefaults fills the zero values that have defaults.
func (c *Config) withDefaults() error {
	if c.Jobs <= 0 {
		d, err := limits.Decide(limits.Options{})
		if err != nil {
			return fmt.Errorf("runner: deciding Jobs: %w", err)
		}
		c.Jobs, c.JobsReason = d.Jobs, d.Reason
	}
	if c.Stdout == nil {
		c.Stdout = io.Discard
	}
	if c.Stderr == nil {
		c.Stderr = io.Discard
	}
	if c.SpillBytes <= 0 {
		c.SpillBytes = DefaultSpill
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}
