package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/worker"
)

// WorkerExecutor runs each attempt as one task on a pool of long-lived
// worker processes (ration run --worker): the attempt's input is sent to a
// free worker, and the worker's answer is the job's output, one line on
// the job's stdout (worker.OutputText). A task that failed or was
// quarantined writes one line to the attempt's Diag (the job's stderr)
// naming its input and the error. So the runner's joblog, -k, --resume, summary and exit status work
// as with one process per job.
//
// Worker breakage is the pool's business: a broken worker is replaced and
// its task re-dispatched inside one attempt; a task that broke too many
// workers comes back Quarantined, with the cause of the last break. The
// attempt's PID and the job's slot in events are the worker's (the last
// one, after re-dispatches), its exit code 0 on success, 1 for a task
// error, and the worker's own exit status and signal for a quarantined
// task.
//
// Give the pool an observer that drops the job events (JobStarted,
// JobRetried, JobFinished; see WorkerEvents): the runner reports each job
// once itself. The zero value is not usable; set Pool.
type WorkerExecutor struct {
	Pool *worker.Pool
}

// Exec runs a on a worker. When ctx ends while a worker runs the task, the
// pool kills that worker and the attempt is Stopped; when the run drains
// (a.Drain) before a worker took the task, the attempt is NotStarted. (A
// drain at the very moment a worker takes the task may still stop it:
// the job is then counted as stopped, not lost.)
func (e *WorkerExecutor) Exec(ctx context.Context, a *Attempt) AttemptResult {
	res := AttemptResult{Start: time.Now()}
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var taken atomic.Bool
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-a.Drain:
			if !taken.Load() {
				cancel()
			}
		case <-done:
		}
	}()
	t := worker.Task{Seq: a.Seq, Input: a.Input, Started: func(slot, pid int) {
		taken.Store(true)
		switch {
		case a.StartedOn != nil:
			a.StartedOn(slot, pid)
		case a.Started != nil:
			a.Started(pid)
		}
	}}
	r := e.Pool.Run(tctx, t)
	res.PID, res.Duration, res.PeakRSS = r.PID, r.Duration, r.PeakRSS
	if !r.Start.IsZero() {
		res.Start = r.Start
	}
	var taskErr *worker.TaskError
	switch {
	case r.Outcome == event.Succeeded:
		fmt.Fprintln(a.Stdout, worker.OutputText(r.Output))
		return res
	case r.Outcome == event.NotStarted && tctx.Err() != nil:
		// Interrupted or drained while waiting for a worker.
		res.NotStarted, res.Stopped, res.ExitCode, res.Err = true, true, -1, r.Err
		return res
	case r.Outcome == event.Quarantined:
		res.Quarantined, res.Cause, res.ExitCode, res.Err = true, r.Cause, -1, r.Err
		var q *worker.QuarantinedError
		if errors.As(r.Err, &q) && q.Last != nil {
			res.ExitCode, res.Signal = q.Last.ExitCode, int(q.Last.Signal)
		}
	case !errors.As(r.Err, &taskErr) && tctx.Err() != nil:
		// The run stopped the task (timeout of the run, interrupt): the
		// pool killed its worker.
		res.Stopped, res.ExitCode, res.Err = true, -1, r.Err
		return res
	default:
		// A task error, or the pool gave up (*worker.BrokenError, also
		// before a worker took the task) or was closed.
		res.ExitCode, res.Err = 1, r.Err
		if taskErr == nil {
			res.Cause = r.Cause
		}
	}
	fmt.Fprintf(a.diag(), "ration: input %q: %s\n", a.Input, strings.ReplaceAll(r.Err.Error(), "\n", "; "))
	return res
}

// WorkerEvents returns an observer for a worker pool's Config.Observer
// that passes the pool's worker and pool events to obs and drops its job
// events, which the runner reports itself when the pool runs under a
// WorkerExecutor. onResize, when not nil, receives the pool's
// PoolResized events instead of obs (to resize the runner along with the
// pool: Runner.Resize reports the change).
func WorkerEvents(obs event.Observer, onResize func(n int, reason string)) event.Observer {
	return event.Func(func(e event.Event) {
		switch e.Kind {
		case event.JobStarted, event.JobRetried, event.JobFinished:
			return
		case event.PoolResized:
			if onResize != nil {
				onResize(e.Size, e.Reason)
				return
			}
		}
		if obs != nil {
			obs.Observe(e)
		}
	})
}
