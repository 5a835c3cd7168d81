package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/ration-run/ration/internal/runhook"
	"github.com/ration-run/ration/runner/event"
)

// attemptHooks are the run's hooks (runhook.Hooks): the dialect's
// (Config.Dialect), with the engine's own where it has none. The engine
// runs them at fixed points for every job and knows none of the features
// behind them; as errgroup's and conc's pools keep one loop and take the
// work as a function, an attempt is one path: bound, prepare, skip or
// execute, classify.
type attemptHooks struct {
	runhook.Hooks
	// startGate waits, before each attempt starts and after the pool
	// has room, until the dialect's Gate lets it start (waitGate).
	startGate func(ctx context.Context, j *job) bool
	// bound is Config.Timeout's bound, then the dialect's.
	bound []func(ctx context.Context, j runhook.Job) (context.Context, context.CancelFunc)
}

// install sets the run's hooks: the dialect's h, Config.Timeout's bound
// first, and the engine's own for what h leaves nil.
func (r *Runner) install(h runhook.Hooks) {
	if r.cfg.Timeout > 0 {
		r.hooks.bound = append(r.hooks.bound, r.timeoutBound)
	}
	r.hooks.bound = append(r.hooks.bound, h.Bound...)
	if h.Source == nil && r.cfg.Input != nil {
		h.Source = r.inputs
	}
	if h.Argv == nil {
		h.Argv = func(it runhook.Item, slot int) []string { return r.tmpl.ExpandFields(it.FieldList(), it.Seq, slot) }
	}
	if h.Display == nil {
		h.Display = func(it runhook.Item, slot int) string { return r.tmpl.DisplayFields(it.FieldList(), it.Seq, slot) }
	}
	if h.BeforeStart == nil {
		h.BeforeStart = func(<-chan struct{}) bool { return true }
	}
	if h.DryRunPrefix == nil {
		h.DryRunPrefix = func(runhook.Item) []byte { return nil }
	}
	if h.SendSize == nil {
		h.SendSize = func(runhook.Job) int64 { return 0 }
	}
	if h.Ended == nil {
		h.Ended = func(runhook.Job, bool, time.Duration) {}
	}
	if h.Prepare == nil {
		h.Prepare = append(h.Prepare, r.countOutput)
	}
	r.hooks.Hooks = h
	r.hooks.startGate = r.waitGate
}

// countOutput gives an attempt the job's streams, counting into the
// joblog's Receive its stdout, with LineBuffer its stderr too: the
// engine's writers when no dialect routes the output.
func (r *Runner) countOutput(j runhook.Job, a *runhook.Attempt) (func(), error) {
	a.Stdout = j.Count(j.Stream(false))
	a.Stderr = j.Stream(true)
	if r.cfg.LineBuffer {
		a.Stderr = j.Count(a.Stderr)
	}
	return nil, nil
}

// inputs yields one job per input of Config.Input, numbered by its place
// in the input, the shard's only: the engine's source when the dialect
// has none.
func (r *Runner) inputs() iter.Seq2[runhook.Item, error] {
	return func(yield func(runhook.Item, error) bool) {
		var n int64
		for in, err := range r.cfg.Input {
			if err != nil {
				yield(runhook.Item{}, err)
				return
			}
			n++
			if r.cfg.Shard.Count > 1 && !r.cfg.Shard.Contains(in) {
				continue
			}
			if !yield(runhook.Item{Seq: n, Input: in, Fields: []string{in}}, nil) {
				return
			}
		}
	}
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
func (r *Runner) timeoutBound(ctx context.Context, _ runhook.Job) (context.Context, context.CancelFunc) {
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

// prepared copies what the prepare hooks set up into a.
func prepared(a *Attempt, p *runhook.Attempt) {
	a.Stdout, a.Stderr, a.Stdin, a.Dir = p.Stdout, p.Stderr, p.Stdin, p.Dir
	a.Nice, a.NiceSet, a.TermSeq, a.SlotVar = p.Nice, p.NiceSet, p.TermSeq, p.SlotVar
}

// runAttempt prepares attempt j.n of j and runs it on the executor,
// unless a prepare hook failed it or the skip hook ended it.
func (r *Runner) runAttempt(ctx context.Context, j *job, st *attemptStart) AttemptResult {
	a := r.newAttempt(j, st)
	p := &runhook.Attempt{Stdout: a.Stdout, Stderr: a.Stderr}
	for _, prepare := range r.hooks.Prepare {
		done, err := prepare(j, p)
		if done != nil {
			defer done()
		}
		if err != nil {
			// It does not run, and fails (so that neither a resumed run
			// nor the exit status takes it for done).
			prepared(a, p)
			fmt.Fprintf(a.Diagnostics(), "ration: %v\n", err)
			return AttemptResult{Outcome: event.Failed, Start: time.Now(), ExitCode: -1, Err: err}
		}
	}
	prepared(a, p)
	if r.hooks.Skip != nil && r.hooks.Skip(j) {
		st.started(j.slot, 0)
		return AttemptResult{Outcome: event.Succeeded, Start: time.Now()}
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
	for _, q := range r.hooks.Requeue {
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

// waitGate waits, before an attempt of j starts and after the pool has
// room, until the dialect's Gate lets it start or no other job runs. It
// returns false when the run stopped first.
func (r *Runner) waitGate(ctx context.Context, j *job) bool {
	g := r.hooks.Gate
	if g == nil {
		return true
	}
	return r.waitUntil(ctx, j.rj, func() bool {
		if r.othersRunningLocked(j.rj) == 0 {
			g.Allowed(time.Now())
			return true
		}
		// The gate may read files: not under r.mu.
		r.mu.Unlock()
		defer r.mu.Lock()
		return g.Open(time.Now())
	})
}

// hook is it as the hooks see it.
func (it item) hook() runhook.Item {
	return runhook.Item{Seq: it.seq, Input: it.input, Fields: it.fields, Args: it.args}
}

// argvOf is the argv of the job of it in slot.
func (r *Runner) argvOf(it item, slot int) []string { return r.hooks.Argv(it.hook(), slot) }

// displayOf is the command of the job of it in slot as a shell reads it:
// what --dry-run prints and the joblog's Command column holds.
func (r *Runner) displayOf(it item, slot int) string { return r.hooks.Display(it.hook(), slot) }

// The job as the hooks see it (runhook.Job).

func (j *job) Item() runhook.Item { return j.it.hook() }
func (j *job) Slot() int          { return j.slot }

func (j *job) Stream(stderr bool) io.Writer { return streamWriter{o: j.out, stderr: stderr} }

func (j *job) Count(w io.Writer) io.Writer { return receiveWriter{w: w, o: j.out} }

// YoungestOfSeveral reports whether j's attempt runs, another job runs
// too, and none of them has a higher job number.
func (j *job) YoungestOfSeveral() bool {
	r := j.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if !j.rj.started {
		return false
	}
	others := 0
	for _, rj := range r.running {
		if rj == j.rj || rj.waiting || !rj.started {
			continue
		}
		if rj.Seq > j.it.seq {
			return false
		}
		others++
	}
	return others > 0
}
