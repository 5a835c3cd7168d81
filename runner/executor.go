package runner

import (
	"context"
	"io"
	"syscall"
	"time"

	"github.com/ration-run/ration/internal/runhook"
	"github.com/ration-run/ration/runner/event"
)

// DefaultGrace is the time between SIGTERM and SIGKILL when a job is
// stopped and Config.Grace is 0.
const DefaultGrace = 2 * time.Second

// Attempt is one attempt to run a job, as the runner hands it to an
// Executor.
type Attempt struct {
	Seq     int64  // job number, 1-based in the full input ({#})
	Slot    int    // job slot, 1-based ({%})
	Input   string // the input, as read
	Attempt int    // 1 for the first attempt
	// Argv is the expanded command: argv[0] is looked up in PATH when it
	// holds no slash. With --shell it is ["/bin/sh", "-c", script].
	Argv []string
	// Stdout and Stderr receive the job's output. They are safe for
	// concurrent use and never block for long.
	Stdout, Stderr io.Writer
	// Diag receives ration's own one-line diagnostics about the attempt
	// (the command could not start; a worker task failed, with its input):
	// the job's stderr, or io.Discard with Config.OmitErrorLines. Nil
	// means Stderr.
	Diag io.Writer
	// Started must be called as soon as the job runs, with the slot it
	// runs in and its process id (0 if there is none). An executor that
	// runs attempts on workers of its own, numbered from 1, passes the
	// worker's slot: it replaces Slot in the job's events and in
	// Runner.Running, so they name the same slot as the workers' own
	// reports ({%} keeps Slot); any other executor passes Slot. An
	// executor that moves the attempt to another process (a task
	// re-dispatched after its worker broke) may call it again; only the
	// first call starts the attempt's clock and is reported as
	// event.JobStarted. An executor that returns without calling it must
	// return Outcome NotStarted. Nil: nobody listens.
	Started func(slot, pid int)
	// Grace is how long a stopped job gets between SIGTERM and SIGKILL.
	Grace time.Duration
	// Kill is closed when the job must be killed at once (a second
	// interrupt): skip or cut short the grace.
	Kill <-chan struct{}
	// Stdin, when not nil, is the job's stdin (a block of ration's
	// stdin), fresh for every attempt; nil means /dev/null.
	// ProcessExecutor feeds it; workerexec does not (ration run rejects
	// --pipe with --worker).
	Stdin io.Reader
	// Drain is closed when the run stops starting jobs (an interrupt,
	// --halt): an executor still waiting to start the attempt (for a free
	// worker) must not start it, and returns Outcome NotStarted.
	Drain <-chan struct{}
	// Nice, with NiceSet, is the niceness the job starts at: the
	// ProcessExecutor forks it from a thread of that niceness (Linux).
	Nice    int
	NiceSet bool
	// TermSeq, when set, replaces SIGTERM, Grace, SIGKILL when the job is
	// stopped.
	TermSeq TermSeq
	// SlotVar names the variable of the job's environment that holds its
	// slot less one; "": DefaultSlotVar.
	SlotVar string
	// Dir is the directory the job runs in ("": ration's); the runner
	// made it.
	Dir string
}

// TermSeq is how a stopped job is signalled: the signals it gets, in
// order, each followed by the longest wait for the job to end before the
// next one (see Attempt.TermSeq).
type TermSeq = runhook.TermSeq

// TermStep is one step of a TermSeq.
type TermStep = runhook.TermStep

// termSeq is the sequence a stopped attempt gets: its own, else SIGTERM,
// grace, SIGKILL.
func (a *Attempt) termSeq() TermSeq {
	if len(a.TermSeq) > 0 {
		return a.TermSeq
	}
	grace := a.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	return TermSeq{{Signal: syscall.SIGTERM, Wait: grace}, {Signal: syscall.SIGKILL}}
}

// Diagnostics returns where diagnostics about a go: Diag, or Stderr when
// Diag is nil, or io.Discard when both are.
func (a *Attempt) Diagnostics() io.Writer {
	if a.Diag != nil {
		return a.Diag
	}
	if a.Stderr != nil {
		return a.Stderr
	}
	return io.Discard
}

// started calls a.Started, if set.
func (a *Attempt) started(slot, pid int) {
	if a.Started != nil {
		a.Started(slot, pid)
	}
}

// AttemptResult is how an attempt ended, as the executor saw it; the
// runner adds what only it knows (its timeout, an OOM kill, whether the run
// stopped the job) before it reports the job.
type AttemptResult struct {
	// Outcome is Succeeded, Failed, Quarantined (the executor set the job
	// aside for good, e.g. its task broke too many workers: the runner
	// does not retry it) or NotStarted (Started was never called: the
	// attempt's context ended or the run drained while it waited).
	Outcome event.Outcome
	// Cause, when not event.CauseNone, is why the attempt ended abnormally
	// as the executor knows it (a worker's break); otherwise the runner
	// classifies the attempt itself (timeout, OOM kill, signal).
	Cause event.Cause
	// Err says why the attempt failed, as the user should read it; nil
	// when the job merely exited non-zero or by a signal.
	Err error
	// Stopped reports that the executor stopped the job because its
	// context was done (timeout, halt, interrupt). A job that ended on its
	// own before that is not Stopped, even if the context is done by now.
	Stopped bool

	PID      int
	Start    time.Time
	Duration time.Duration
	// ExitCode is the exit status, -1 when a signal ended the job. A job
	// that could not be started gets 127 (not found) or 126 (not
	// executable), as from a shell, and Err says why.
	ExitCode int
	Signal   int   // the signal that ended the job, 0 if none
	PeakRSS  int64 // peak resident set size in bytes (0 if unknown)
}

// Executor runs one attempt of a job. The runner calls Exec concurrently
// from several goroutines, at most once per slot at a time.
//
// When ctx is done before the job ends, the executor must stop it: SIGTERM
// (or the equivalent), then SIGKILL after a.Grace (a.TermSeq's signals and
// waits instead, when set), or at once when a.Kill is closed; it returns
// only when the job and everything it started are gone.
// The default executor is ProcessExecutor; package internal/workerexec runs
// attempts as tasks on long-lived workers.
type Executor interface {
	Exec(ctx context.Context, a *Attempt) AttemptResult
}

// A Starter is an Executor that holds processes for a whole run (a pool of
// workers). Run calls Start before the first attempt, with the observer of
// the run's events: the executor reports its own worker and pool events
// there (never job events, which are the runner's), and the run's
// concurrency controller sees them. Run calls Stop after the last attempt
// ended; Stop returns when everything the executor started is gone. A
// Start error ends Run before any job starts. A dry run calls neither.
//
// An executor that is also an adapt.Resizer is resized along with the
// runner (Resize, and the controller of Config.Adapt).
type Starter interface {
	Executor
	Start(ctx context.Context, obs event.Observer) error
	Stop()
}

// A StatusWriter is an Executor with processes of its own to show (a pool
// of workers): the SIGUSR1 report (Runner.WriteStatus) adds what
// WriteStatus writes after the running-jobs table, so that a hang in
// those processes is explained too. now is the report's time.
type StatusWriter interface {
	Executor
	WriteStatus(w io.Writer, now time.Time) error
}
