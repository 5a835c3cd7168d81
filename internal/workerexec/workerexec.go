// Package workerexec runs a runner's attempts as tasks on a pool of
// long-lived worker processes (package worker; ration run --worker): the
// attempt's input is sent to a free worker, and the worker's answer is the
// job's output, one line on the job's stdout (worker.OutputText). A task
// that failed or was quarantined writes one line to the attempt's
// diagnostics (the job's stderr) naming its input and the error. So the
// runner's joblog, -k, --resume, summary and exit status work as with one
// process per job.
//
// It lives apart from package runner so that importing the runner does not
// pull in the worker pool and its process inspection (gopsutil).
package workerexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/worker"
)

// DefaultStopTimeout is how long Stop lets the workers exit before it
// kills them.
const DefaultStopTimeout = 5 * time.Second

// Executor is a runner.Starter: the run starts its worker pool (Start) and
// closes it (Stop), and resizes it along with the run's concurrency
// (Resize). The pool reports its worker and pool events to the run's
// observers; the runner reports each job once itself.
//
// Worker breakage is the pool's business: a broken worker is replaced and
// its task re-dispatched inside one attempt; a task that broke too many
// workers, or whose worker was OOM-killed while it ran alone (package
// worker's OOM rule, the runner's memory.OOMRetry), comes back
// Quarantined, with the cause of the last break. The
// attempt's PID and the job's slot in events are the worker's (the last
// one, after re-dispatches), its exit code 0 on success, 1 for a task
// error, and the worker's own exit status and signal for a quarantined
// task.
type Executor struct {
	cfg worker.Config
	// StopTimeout is how long Stop waits for the workers to exit after
	// their stdin is closed before it kills them (0: DefaultStopTimeout).
	StopTimeout time.Duration

	mu   sync.Mutex
	pool *worker.Pool // nil before Start
	run  runStop      // how the run stops, from its attempts
}

// runStop is how the run stops, as its attempts carry it: every attempt
// of a run has the same Drain and Kill channels and Grace.
type runStop struct {
	drain, kill <-chan struct{}
	grace       time.Duration
}

// closed reports whether ch is closed (false for nil).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// New checks cfg (worker.Config.Check) and returns an Executor whose pool
// starts with the run. cfg.Observer, when set, receives the pool's events
// before the run's observers do.
func New(cfg worker.Config) (*Executor, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	return &Executor{cfg: cfg}, nil
}

// Start starts the worker pool; its events go to obs.
func (e *Executor) Start(ctx context.Context, obs event.Observer) error {
	cfg := e.cfg
	cfg.Observer = event.Multi{cfg.Observer, obs}
	p, err := worker.New(ctx, cfg)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.pool, e.run = p, runStop{} // this run's attempts will say how it stops
	e.mu.Unlock()
	return nil
}

// Stop closes the pool: each worker gets its stdin closed and StopTimeout
// to exit, then it is killed (logged as a warning). When the run was
// interrupted (its attempts' Drain is closed), a worker gets at most the
// run's grace (Attempt.Grace), as a stopped job gets between SIGTERM and
// SIGKILL; when it was killed (Attempt.Kill), none: the workers are killed
// at once. So an interrupted run ends when ration's signal handling
// expects it to, however long a worker would take to exit.
func (e *Executor) Stop() {
	p := e.Pool()
	if p == nil {
		return
	}
	d := e.StopTimeout
	if d <= 0 {
		d = DefaultStopTimeout
	}
	e.mu.Lock()
	run := e.run
	e.mu.Unlock()
	killed := closed(run.kill)
	switch {
	case killed:
		d = 0
	case closed(run.drain):
		grace := run.grace
		if grace <= 0 {
			grace = runner.DefaultGrace
		}
		d = min(d, grace)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := p.Close(ctx); err != nil && !killed {
		log := e.cfg.Logger
		if log == nil {
			log = slog.New(slog.DiscardHandler)
		}
		log.Warn("workers did not stop in time: killed", "err", err)
	}
}

// Resize sets the number of workers (adapt.Resizer); before Start it
// sets the size the pool starts with.
func (e *Executor) Resize(n int, reason string) {
	e.mu.Lock()
	p := e.pool
	if p == nil {
		e.cfg.Size = n
	}
	e.mu.Unlock()
	if p != nil {
		p.Resize(n, reason)
	}
}

// WriteStatus writes what every worker is doing (worker.Pool.WriteStatus)
// for the run's SIGUSR1 report (runner.StatusWriter); nothing before
// Start.
func (e *Executor) WriteStatus(w io.Writer, now time.Time) error {
	if p := e.Pool(); p != nil {
		return p.WriteStatus(w, now)
	}
	return nil
}

var _ runner.StatusWriter = (*Executor)(nil)

// Pool returns the worker pool, nil before Start.
func (e *Executor) Pool() *worker.Pool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.pool
}

// Stats returns the pool's counters (zero before Start). Each pool task
// is one attempt of a job (--retries runs a failed job again), so its
// outcome counts are attempts', and Stats names them so (TaskNoun).
func (e *Executor) Stats() worker.Stats {
	s := worker.Stats{}
	if p := e.Pool(); p != nil {
		s = p.Stats()
	}
	s.TaskNoun = "job attempts"
	return s
}

// Exec runs a on a worker. When ctx ends while a worker runs the task, the
// pool kills that worker and the attempt is Stopped; when the run drains
// (a.Drain) before a worker took the task, the attempt is NotStarted. (A
// drain at the very moment a worker takes the task may still stop it:
// the job is then counted as stopped, not lost.)
func (e *Executor) Exec(ctx context.Context, a *runner.Attempt) runner.AttemptResult {
	p := e.Pool()
	if p == nil {
		return runner.AttemptResult{Outcome: event.NotStarted, Start: time.Now(), ExitCode: -1,
			Err: errors.New("workerexec: Exec before Start")}
	}
	e.mu.Lock()
	if e.run.drain == nil && e.run.kill == nil {
		e.run = runStop{drain: a.Drain, kill: a.Kill, grace: a.Grace}
	}
	e.mu.Unlock()
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var taken atomic.Bool
	stopDrain := cancelOnDrain(a.Drain, &taken, cancel)
	defer stopDrain()
	t := worker.Task{Seq: a.Seq, Input: a.Input, Started: func(slot, pid int) {
		taken.Store(true)
		if a.Started != nil {
			a.Started(slot, pid)
		}
	}}
	r := p.Run(tctx, t)
	res := result(r, tctx.Err() != nil)
	if res.Outcome != event.Succeeded && res.Outcome != event.NotStarted && !res.Stopped {
		fmt.Fprintf(a.Diagnostics(), "ration: input %q: %s\n", a.Input, strings.ReplaceAll(r.Err.Error(), "\n", "; "))
	}
	if res.Outcome == event.Succeeded {
		fmt.Fprintln(a.Stdout, worker.OutputText(r.Output))
	}
	return res
}

// cancelOnDrain cancels a task that no worker took yet when the run
// drains; the returned func ends the watch.
func cancelOnDrain(drain <-chan struct{}, taken *atomic.Bool, cancel context.CancelFunc) func() {
	done := make(chan struct{})
	go func() {
		select {
		case <-drain:
			if !taken.Load() {
				cancel()
			}
		case <-done:
		}
	}()
	return func() { close(done) }
}

// result converts a task's Result; stopped reports that the task's
// context ended (the run stopped it, or drained before it started).
func result(r worker.Result, stopped bool) runner.AttemptResult {
	res := runner.AttemptResult{Outcome: r.Outcome, Start: r.Start, PID: r.PID, Duration: r.Duration, PeakRSS: r.PeakRSS}
	if res.Start.IsZero() {
		res.Start = time.Now()
	}
	var taskErr *worker.TaskError
	switch {
	case r.Outcome == event.Succeeded:
	case r.Outcome == event.NotStarted && stopped:
		// Interrupted or drained while waiting for a worker.
		res.Stopped, res.ExitCode, res.Err = true, -1, r.Err
	case r.Outcome == event.Quarantined:
		res.Cause, res.ExitCode, res.Err = r.Cause, -1, r.Err
		var q *worker.QuarantinedError
		if errors.As(r.Err, &q) && q.Last != nil {
			res.ExitCode, res.Signal = q.Last.ExitCode, int(q.Last.Signal)
		}
	case r.Outcome == event.Stopped || (!errors.As(r.Err, &taskErr) && stopped):
		// The run stopped the task (its timeout, an interrupt, --halt
		// now): the pool killed its worker, or the task waited to be
		// re-dispatched.
		res.Outcome, res.Stopped, res.ExitCode, res.Err = event.Failed, true, -1, r.Err
	default:
		// A task error, or the pool gave up (*worker.BrokenError, also
		// before a worker took the task) or was closed.
		res.Outcome, res.ExitCode, res.Err = event.Failed, 1, r.Err
		if taskErr == nil {
			res.Cause = r.Cause
		}
	}
	return res
}
