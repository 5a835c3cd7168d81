package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/ration-run/ration/runner/event"
)

// attemptHooks are what configures an attempt beyond running its command:
// each bounds the attempt's context, prepares its Attempt, or ends it
// without running a command. The core runs them in order for every
// attempt and knows none of the features behind them; New installs the
// core's own (Config.Timeout) and the dialect's (installDialect). As
// errgroup's and conc's pools keep one loop and take the work as a
// function, an attempt is one path: bound, prepare, skip or execute,
// classify.
type attemptHooks struct {
	// bound wrap the attempt's context, outermost first. A bound that
	// cancels it with ErrTimeout (or an error wrapping it) timed the
	// attempt out; with one of requeue, stopped it to run it again.
	bound []func(ctx context.Context, j *job) (context.Context, context.CancelFunc)
	// requeue are the causes with which a bound stops an attempt that
	// then runs again without counting against Config.Retries.
	requeue []error
	// prepare set up the attempt's writers, directory and stdin, in
	// order. done, when not nil, is called once the attempt ended. An
	// error fails the attempt without running it (its output or input
	// has nowhere to go); no later prepare runs.
	prepare []func(j *job, a *Attempt) (done func(), err error)
	// skip end an attempt that needs no command (ok), before it runs;
	// a skip that ends it reports its start (attemptStart.started).
	skip []func(j *job, st *attemptStart) (res AttemptResult, ok bool)

	// The run's own hooks, set by New (never nil after it).
	//
	// startGate waits, before each attempt starts and after the pool
	// has room, until the machine lets it start; it returns false when
	// the run stopped first.
	startGate func(ctx context.Context, j *job) bool
	// beforeStart is called before each job is handed to the pool; it
	// may wait, and returns false when the run stopped (stop closed)
	// meanwhile.
	beforeStart func(stop <-chan struct{}) bool
	// dryRunPrefix is what DryRun writes before a job's line, in its own
	// Write (nil: nothing).
	dryRunPrefix func(it item) []byte
	// compressSpill deflates the output a job spills to a file.
	compressSpill bool
	// source yields the run's jobs, numbered, from its input (nil: the
	// run has none).
	source func() iter.Seq2[item, error]
	// sendSize is the joblog's Send of an ended job.
	sendSize func(j *job) int64
	// records are sinks that record each ended job before the joblog
	// does (a table of results); an error fails the job, as a failed
	// output does (outputFailed).
	records []func(j *job, send, received int64) error
}

// installCore installs the core's hooks: Config.Timeout's bound, and the
// run's hooks doing nothing.
func (r *Runner) installCore() {
	if r.cfg.Timeout > 0 {
		r.hooks.bound = append(r.hooks.bound, r.timeoutBound)
	}
	r.hooks.beforeStart = func(<-chan struct{}) bool { return true }
	r.hooks.startGate = func(context.Context, *job) bool { return true }
	r.hooks.dryRunPrefix = func(item) []byte { return nil }
	r.hooks.sendSize = func(*job) int64 { return 0 }
}

// boundContext is ctx bounded by every bound hook, and the function that
// releases them, innermost first.
func (h *attemptHooks) boundContext(ctx context.Context, j *job) (context.Context, context.CancelFunc) {
	cancels := make([]context.CancelFunc, 0, len(h.bound))
	for _, b := range h.bound {
		var cancel context.CancelFunc
		ctx, cancel = b(ctx, j)
		cancels = append(cancels, cancel)
	}
	return ctx, func() {
		for i := len(cancels) - 1; i >= 0; i-- {
			cancels[i]()
		}
	}
}

// timeoutBound is Config.Timeout's bound.
func (r *Runner) timeoutBound(ctx context.Context, _ *job) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, r.cfg.Timeout, ErrTimeout)
}

// newAttempt is attempt j.n of j before the prepare hooks: its output
// goes to the job's streams.
func (r *Runner) newAttempt(j *job, st *attemptStart) *Attempt {
	a := &Attempt{
		Seq: j.it.seq, Slot: j.slot, Input: j.it.input, Attempt: j.n, Argv: j.argv,
		Stdout: streamWriter{o: j.out}, Stderr: streamWriter{o: j.out, stderr: true},
		Grace: r.cfg.Grace, Kill: r.killCh, Drain: r.drainCh, Started: st.started,
	}
	if r.cfg.OmitErrorLines {
		a.Diag = io.Discard
	}
	return a
}

// runAttempt prepares attempt j.n of j and runs it on the executor,
// unless a prepare hook failed it or a skip hook ended it.
func (r *Runner) runAttempt(ctx context.Context, j *job, st *attemptStart) AttemptResult {
	a := r.newAttempt(j, st)
	for _, prepare := range r.hooks.prepare {
		done, err := prepare(j, a)
		if done != nil {
			defer done()
		}
		if err != nil {
			// It does not run, and fails (so that neither a resumed run
			// nor the exit status takes it for done).
			fmt.Fprintf(a.Diagnostics(), "ration: %v\n", err)
			return AttemptResult{Outcome: event.Failed, Start: time.Now(), ExitCode: -1, Err: err}
		}
	}
	for _, skip := range r.hooks.skip {
		if res, ok := skip(j, st); ok {
			return res
		}
	}
	return r.execute(ctx, a)
}

// stoppedBy records on j why the runner stopped its attempt, from the
// cause of the attempt's context actx: its timeout (j.timedOut, the
// cause) or a requeue cause (j.requeued; res.Err becomes it when nil).
// An attempt stopped because the run's ctx ended is neither.
func (r *Runner) stoppedBy(ctx, actx context.Context, j *job, res *AttemptResult) {
	j.timedOut, j.requeued = nil, false
	if !res.Stopped || ctx.Err() != nil {
		return
	}
	cause := context.Cause(actx)
	if errors.Is(cause, ErrTimeout) {
		j.timedOut = cause
		return
	}
	for _, q := range r.hooks.requeue {
		if errors.Is(cause, q) {
			j.requeued = true
			if res.Err == nil {
				res.Err = q
			}
			return
		}
	}
}

// reportStart reports the start of an attempt whose executor did not (a
// later attempt that never started, or an executor that did not report
// it), so that events stay balanced: one JobStarted per attempt. It
// returns false when it was the job's first attempt and it never started.
func (r *Runner) reportStart(j *job, st *attemptStart, res *AttemptResult) bool {
	if st.reported.Load() {
		return true
	}
	if j.n == 1 && res.Outcome == event.NotStarted {
		return false
	}
	st.started(j.slot, res.PID)
	if res.Outcome == event.NotStarted {
		res.Stopped = true
	}
	return true
}
