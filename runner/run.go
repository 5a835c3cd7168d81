package runner

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/ration-run/ration/internal/runhook"
	"github.com/ration-run/ration/pool"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/joblog"
)

// item is one job's arguments on their way to it.
type item struct {
	seq int64
	// input is the arguments as events show them (see argsString).
	input string
	// fields are the flat list of the arguments' fields (nil: the one
	// field input); args are the arguments (nil: input alone).
	fields []string
	args   [][]string
	read   time.Time
	// pos is its place among the items pulled, 0-based: its place in
	// the order -k prints in.
	pos int64
}

// jobResult is what a job hands back to Run's loop.
type jobResult struct {
	out *output // KeepOrder: to print in order; nil when printed
}

// inputState is how far the input was read.
type inputState struct {
	done bool  // read to its end
	err  error // the error that stopped it
}

// Run runs the jobs and returns when every started job has ended. The
// error is non-nil when the input could not be read to its end (wrapping
// ErrInput), the joblog could not be read or written, the executor could
// not start (Starter), or output could not be written; the Summary is
// valid in every case. Run may be called once.
func (r *Runner) Run(ctx context.Context) (Summary, error) {
	if !r.ran.CompareAndSwap(false, true) {
		return Summary{}, errors.New("runner: Run called twice")
	}
	// A canceled ctx stops the run as Drain does, without its wait: no
	// job starts from then on, and what waits to start one (--delay, an
	// OOM re-queue) gives up at once instead of waiting out its time.
	defer context.AfterFunc(ctx, r.stop)()
	start := time.Now()
	sum := Summary{Jobs: r.cfg.Jobs, JobsReason: r.cfg.JobsReason}
	rec, jl, err := r.openJoblog()
	if err != nil {
		return sum, err
	}
	defer r.closeJoblog(jl) // an early return; Close after Close does nothing
	var in inputState
	items := r.items(rec, &in)
	switch {
	case r.cfg.DryRun:
		r.dryRun(items)
	default:
		if err := r.startExecutor(ctx); err != nil {
			return sum, err
		}
		r.runPool(ctx, items, jl)
		r.stopExecutor()
	}
	r.closeJoblog(jl)
	return r.summary(ctx, sum, start, in)
}

// startExecutor starts a Starter with the run's event stream.
func (r *Runner) startExecutor(ctx context.Context) error {
	s, ok := r.exec.(Starter)
	if !ok {
		return nil
	}
	if err := s.Start(ctx, event.Func(r.emit)); err != nil {
		return fmt.Errorf("runner: starting the executor: %w", err)
	}
	return nil
}

func (r *Runner) stopExecutor() {
	if s, ok := r.exec.(Starter); ok {
		s.Stop()
	}
}

// summary fills in the counts at the end of Run and joins its errors.
func (r *Runner) summary(ctx context.Context, sum Summary, start time.Time, in inputState) (Summary, error) {
	sum.Succeeded, sum.Failed, sum.Killed = r.succeeded.Load(), r.failed.Load(), r.killed.Load()
	sum.NotStarted, sum.Skipped = r.notStarted.Load(), r.skipped.Load()
	sum.Quarantined, sum.OOMRetried = r.quarantined.Load(), r.oomRetried.Load()
	sum.PeakRSSMax, sum.PeakRSSP95 = r.rss.max(), r.rss.quantile(0.95)
	sum.Interrupted = r.interrupted.Load() || ctx.Err() != nil
	sum.Halted = r.halted.Load()
	sum.MemoryBound = r.memoryBound()
	sum.InputDone = in.done
	sum.Wall = time.Since(start)
	var errs []error
	if in.err != nil {
		errs = append(errs, fmt.Errorf("%w: %w", ErrInput, in.err))
	}
	if p := r.firstErr.Load(); p != nil {
		errs = append(errs, *p)
	}
	return sum, errors.Join(errs...)
}

// dryRun prints each job's command (or Config.DryRunLine) instead of
// running it, after the dialect's prefix (runhook.Hooks.DryRunPrefix:
// --tag). The prefix is a Write of its own, before the line's:
// --shellquote's writer quotes the line and passes the prefix as it is. A
// failed write
// ends it with an error wrapping ErrOutputGone, as in a real run
// (`--dry-run ... | head` exits 141).
func (r *Runner) dryRun(items iter.Seq[item]) {
	for it := range items {
		line := ""
		if r.cfg.DryRunLine != nil {
			line = r.cfg.DryRunLine(it.input, it.seq)
		} else {
			line = r.displayOf(it, 1)
			if tag := r.hooks.DryRunPrefix(it.hook()); tag != nil {
				if _, err := r.cfg.Stdout.Write(tag); err != nil {
					r.setErr(fmt.Errorf("%w: %w", ErrOutputGone, err))
					return
				}
			}
		}
		if _, err := fmt.Fprintln(r.cfg.Stdout, line); err != nil {
			r.setErr(fmt.Errorf("%w: %w", ErrOutputGone, err))
			return
		}
		r.succeeded.Add(1)
	}
}

// items yields the source's jobs (the dialect's, or inputs), skips the
// recorded ones, waits before each start as the dialect says
// (BeforeStart: --delay), and stops at the first input error or once the
// run is stopping. It runs on Run's goroutine (the
// pool pulls on the consumer's goroutine).
func (r *Runner) items(rec *joblog.Record, st *inputState) iter.Seq[item] {
	return func(yield func(item) bool) {
		if r.hooks.Source == nil {
			st.done = true
			return
		}
		src := items(r.hooks.Source())
		if r.cfg.Halt.Percent > 0 {
			// A percentage is of every job, so the whole input is read
			// first to know how many there are.
			src = r.counted(src)
		}
		var skip *joblog.Skipper
		if rec != nil && r.byCommand() {
			skip = rec.Skipper(!r.cfg.Resume)
		}
		var pos int64
		for it, err := range src {
			if err != nil {
				// Stop reading; the jobs already pulled still run.
				st.err = err
				return
			}
			if r.done(rec, skip, &it) {
				r.skipped.Add(1)
				r.emit(event.Event{Kind: event.JobSkipped, Seq: it.seq, Input: it.input})
				continue
			}
			if r.stopping.Load() || !r.hooks.BeforeStart(r.stopCh) {
				return
			}
			it.read, it.pos = time.Now(), pos
			pos++
			if !yield(it) {
				return
			}
		}
		st.done = true
	}
}

// byCommand reports whether a resumed run matches its jobs to the joblog's
// records by command (joblog.Skipper). A --pipe block has no identity but
// its place in the input, and a command holding the slot ({%}) records a
// slot that a job of this run cannot know before it starts: these are
// matched by number, as a joblog written before matching by command was
// (runhook.Hooks.BySeq says which).
func (r *Runner) byCommand() bool {
	return !r.hooks.BySeq && (r.hooks.AnyCommand || !r.tmpl.HasSlot())
}

// done reports whether the joblog says job it ended (see Config.Resume),
// and otherwise sets the number it runs under.
func (r *Runner) done(rec *joblog.Record, skip *joblog.Skipper, it *item) bool {
	switch {
	case rec == nil:
		return false
	case skip == nil:
		return rec.Succeeded(it.seq) || (r.cfg.Resume && rec.Ended(it.seq))
	}
	done, seq := skip.Next(r.displayOf(*it, 1), it.seq)
	it.seq = seq
	return done
}

// counted reads every job of src before yielding the first, and sets the
// number of jobs for --halt's percentages.
func (r *Runner) counted(src iter.Seq2[item, error]) iter.Seq2[item, error] {
	return func(yield func(item, error) bool) {
		var all []item
		var last error
		for it, err := range src {
			if err != nil {
				last = err
				break
			}
			all = append(all, it)
		}
		r.total.Store(int64(len(all)))
		for _, it := range all {
			if !yield(it, nil) {
				return
			}
		}
		if last != nil {
			yield(item{}, last)
		}
	}
}

// runPool runs the items' jobs on a bounded pool until the items end or
// the run stops, and prints the output of -k jobs in order.
func (r *Runner) runPool(ctx context.Context, items iter.Seq[item], jl *joblog.Writer) {
	jobsCtx, terminate := context.WithCancelCause(ctx)
	defer terminate(nil)
	r.mu.Lock()
	p := pool.New(r.size)
	r.pool = p
	r.terminate = terminate
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.terminate = nil
		r.mu.Unlock()
		_, _ = p.Close(context.Background())
	}()
	select {
	case <-r.killCh:
		terminate(ErrInterrupted)
	default:
	}
	runDone := make(chan struct{})
	defer close(runDone)
	go r.drainClock(terminate, runDone)

	fn := func(ctx context.Context, it item) (jobResult, error) {
		return r.runJob(ctx, it, jl), nil
	}
	var results iter.Seq[pool.Result[item, jobResult]]
	if r.cfg.KeepOrder {
		results = pool.MapOrdered(jobsCtx, p, items, fn)
	} else {
		results = pool.Map(jobsCtx, p, items, fn)
	}
	for res := range results {
		switch {
		case res.Err == nil:
			r.deliver(res.Value.out)
		case errors.Is(res.Err, pool.ErrNotStarted) || errors.Is(res.Err, pool.ErrClosed):
			r.slots.skip(res.Input.pos)
			r.jobNotStarted(res.Input)
		default:
			// A panic in the runner's own code: report it, keep the run.
			r.slots.skip(res.Input.pos)
			r.setErr(fmt.Errorf("job %d: %w", res.Input.seq, res.Err))
		}
		if r.printsLive() {
			// -k yields in input order: the next job's turn.
			r.liveNext(res.Input.pos + 1)
		}
	}
}

// drainClock stops the running jobs when Drain's TermTimeout runs out,
// unless the run ends first.
func (r *Runner) drainClock(terminate context.CancelCauseFunc, runDone <-chan struct{}) {
	select {
	case <-r.drainCh:
	case <-runDone:
		return
	}
	t := time.NewTimer(r.cfg.TermTimeout)
	defer t.Stop()
	select {
	case <-t.C:
		terminate(ErrInterrupted)
	case <-runDone:
	}
}

// jobNotStarted records a pulled job that never started.
func (r *Runner) jobNotStarted(it item) {
	r.notStarted.Add(1)
	r.emit(event.Event{Kind: event.JobFinished, Seq: it.seq, Input: it.input, Outcome: event.NotStarted})
}

// items are the source's jobs as the engine numbers them.
func items(src iter.Seq2[runhook.Item, error]) iter.Seq2[item, error] {
	return func(yield func(item, error) bool) {
		for it, err := range src {
			if !yield(item{seq: it.Seq, input: it.Input, fields: it.Fields, args: it.Args}, err) {
				return
			}
		}
	}
}

// Stopping reports whether the run stopped taking inputs (a halt, a
// signal, ration's output gone): for an input source that waits on the
// jobs themselves (a stream of blocks dealt to them), which must not wait
// on after it.
func (r *Runner) Stopping() bool { return r.stopping.Load() }
