package worker

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ration-run/ration/internal/memory"
	"github.com/ration-run/ration/runner/event"
)

// Pool runs tasks on long-lived worker processes. It is safe for concurrent
// use. The zero value is not usable; call New.
type Pool struct {
	cfg Config
	log *slog.Logger
	obs event.Observer // nil: none

	taskq   chan *attempt // first attempts
	retryq  chan *attempt // re-dispatches: served first
	closing chan struct{} // closed by Close
	killAll chan struct{} // closed when Close gives up waiting
	failed  chan struct{} // closed when the pool gives up
	nextID  atomic.Int64  // request ids of tasks without a Seq

	answerHint atomic.Bool    // the hint about answers on stderr was given
	nextTk     atomic.Int64   // task ids
	wg         sync.WaitGroup // worker goroutines and the recreation timer

	stderrMu sync.Mutex
	stderr   io.Writer

	mu          sync.Mutex
	size        int
	workers     map[*worker]struct{}
	slots       map[int]bool
	paused      bool
	pauseTimer  *time.Timer
	breaks      []breakRec
	okGen       int64 // tasks a worker answered ok so far (breakRec.gen)
	recreateRun int
	closed      bool
	failErr     error
	lastBreak   *BreakError
	lastStderr  []string
	st          Stats

	// OOM re-dispatches (waitRoom, memory.Reruns, guarded by mu): while
	// one waits for room or has been let go and not yet taken, no worker
	// takes a first attempt, so that the number of tasks in flight really
	// drops; while one runs, first attempts keep the number in flight
	// under its below. signalLocked wakes them whenever what they wait for
	// changes (a worker's busy state, the size, the pool's end).
	reruns   *memory.Reruns
	held     bool          // holdingLocked() as of the last signalLocked
	holdWake chan struct{} // closed and replaced when held changes: idle workers look again
}

type breakRec struct {
	at    time.Time
	cause event.Cause
	task  int64 // the task in flight, 0 when idle
	slot  int
	gen   int64 // Pool.okGen at the break: equal to it while no task succeeded since
}

// attempt is one dispatch of a task to a worker.
type attempt struct {
	id    int64 // the task's pool-wide number, the same for every attempt
	task  Task
	n     int                // attempt number, 1-based
	below int                // > 0: a re-dispatch after an OOM kill (claimed in Pool.reruns, then running there)
	abort chan struct{}      // closed by the task's owner when it gives up
	done  chan attemptResult // buffered: the worker never blocks on it
}

type attemptResult struct {
	output   json.RawMessage
	taskErr  *TaskError
	brk      *BreakError
	stderr   []string
	aborted  error // ctx error or ErrClosed: the attempt was cut short
	slot     int
	pid      int
	start    time.Time // when the worker took the task (zero: it did not)
	duration time.Duration
	rss      int64
	others   int  // on a break: the other tasks in flight when it was seen
	notTaken bool // the worker was retiring when it received the attempt: dispatch it again
}

// worker is one worker process's life, from start to end. A worker is
// never restarted: a broken or retired worker ends, and the pool starts a
// new one when it is short of live workers. So a retiring worker that
// crashes cannot come back.
type worker struct {
	slot     int
	retire   chan struct{} // closed when the worker is asked to retire
	retiring bool          // under Pool.mu
	why      string        // retirement reason, under Pool.mu
	busy     bool          // under Pool.mu
	pid      int           // under Pool.mu, 0 before start
	input    string        // of the task it runs, under Pool.mu
	seq      int64         // of the task it runs, under Pool.mu
	since    time.Time     // when it was created, started, took its task or finished one; under Pool.mu
}

// New validates cfg, starts cfg.Size worker processes (asynchronously:
// New does not wait for them) and returns the pool. It fails when the
// command is empty or cannot be found. ctx bounds only New itself.
// Call Close to stop the workers.
func New(ctx context.Context, cfg Config) (*Pool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	cfg.Size = max(cfg.Size, 1)
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defD := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&cfg.MaxBreaks, DefaultMaxBreaks)
	def(&cfg.OOMAttempts, memory.DefaultOOMAttempts)
	def(&cfg.MaxRecreations, DefaultMaxRecreations)
	def(&cfg.StderrLines, DefaultStderrLines)
	def(&cfg.MaxLine, DefaultMaxLine)
	defD(&cfg.BreakWindow, DefaultBreakWindow)
	defD(&cfg.Backoff, DefaultBackoff)
	defD(&cfg.StopGrace, DefaultStopGrace)
	p := &Pool{
		cfg: cfg, log: cfg.Logger,
		taskq: make(chan *attempt), retryq: make(chan *attempt),
		closing: make(chan struct{}), killAll: make(chan struct{}), failed: make(chan struct{}),
		stderr: cfg.Stderr, size: cfg.Size,
		workers: map[*worker]struct{}{}, slots: map[int]bool{}, holdWake: make(chan struct{}),
	}
	p.reruns = memory.NewReruns(&p.mu)
	p.reruns.Changed, p.reruns.Stop = p.signalLocked, p.closing
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.stderr == nil {
		p.stderr = os.Stderr
	}
	p.obs = cfg.Observer
	p.st.Breaks = map[event.Cause]int64{}
	p.mu.Lock()
	p.reconcileLocked(false)
	p.mu.Unlock()
	return p, nil
}

// Resize sets the number of workers to n (at least 1), for example after
// the CPU limit changed or a concurrency controller (package adapt, whose
// Resizer it is) halved it. Shrinking retires the excess workers, idle ones
// first; a busy retiring worker finishes its task. Growing starts new
// workers at once. The pool reports no event for it: the owner of the
// size does (the runner's PoolResized); reason names it in the retiring
// workers' WorkerRetired events.
func (p *Pool) Resize(n int, reason string) { p.resize(n, reason) }

// Do runs input on a worker and returns its output. See Run.
func (p *Pool) Do(ctx context.Context, input string) (json.RawMessage, error) {
	r := p.Run(ctx, Task{Input: input})
	return r.Output, r.Err
}

// Run runs one task and returns how it ended; it ends exactly once.
//
// Run blocks until a worker is free (there is no queue inside the pool),
// then gives it the task; each worker runs one task at a time, so a crash
// is always attributed to one task. When the worker breaks, the task is
// re-dispatched to another worker (re-dispatches are served before new
// tasks); once it has broken Config.MaxBreaks workers it is quarantined.
// A worker that broke before it read the task does not count.
// A worker OOM-killed under the task is not counted against MaxBreaks:
// the OOM rule of the package documentation applies instead.
// When ctx is done before a worker took the task, Run returns ctx's error
// with Outcome NotStarted; when it is done while a worker runs the task,
// that worker is killed (it is replaced; this is not a break) and Run
// returns ctx's error with Outcome Stopped, unless the answer was already
// there (also Stopped when ctx ends while the task waits to be
// re-dispatched).
//
// The pool reports worker events only: the task's own events (a job's
// start, retry and end) are its owner's to report (the runner's), from
// Task.Started and the Result.
func (p *Pool) Run(ctx context.Context, t Task) Result {
	res := Result{Outcome: event.NotStarted}
	tid := p.nextTk.Add(1)
	breaks, uncharged, oomKills := 0, 0, 0
	below := 0 // > 0: the next attempt follows an OOM kill and waits for fewer tasks in flight than this
	for {
		a := &attempt{id: tid, task: t, n: res.Attempts + 1, below: below, abort: make(chan struct{}), done: make(chan attemptResult, 1)}
		q := p.taskq
		if a.n > 1 {
			q = p.retryq
		}
		err := error(nil)
		if a.below > 0 {
			err = p.waitRoom(ctx, below)
		}
		if err == nil {
			if err = p.dispatch(ctx, q, a); err != nil && a.below > 0 {
				p.unclaim()
			}
		}
		if err != nil {
			switch {
			case res.Attempts == 0:
				return p.finish(res, event.NotStarted, err)
			case ownerStopped(err):
				return p.finish(res, event.Stopped, err)
			}
			return p.finish(res, event.Failed, err)
		}
		r := await(ctx, a)
		if r.notTaken {
			continue // a retiring worker received it; another will take it
		}
		res.Attempts = a.n
		if res.Start.IsZero() {
			// When the first attempt started, not when it ended: the
			// Result's Duration (and the joblog's Starttime and
			// JobRuntime) count from here.
			res.Start = r.start
			if res.Start.IsZero() {
				res.Start = time.Now()
			}
		}
		res.Slot, res.PID = r.slot, r.pid
		if r.brk == nil {
			outcome, err := settle(ctx, r, &res)
			return p.finish(res, outcome, err)
		}
		res.Cause = r.brk.Cause
		if r.brk.unread {
			// The worker broke before it read the task (it died idle
			// as the task reached it, or was killed with the request
			// unread in its stdin): as with a break while idle, the
			// task goes to another worker, and nothing is charged.
			waiting(t, r.slot)
			p.mu.Lock()
			p.st.Retries++
			p.mu.Unlock()
			continue
		}
		if r.brk.Cause == event.CauseOOM {
			oomKills++
			v := p.oomVerdict(oomKills, r.others)
			if !v.Requeue {
				return p.finish(res, event.Quarantined, &QuarantinedError{Cause: r.brk.Cause, Breaks: breaks + oomKills,
					Last: r.brk, LastStderr: r.stderr, Reason: v.Reason})
			}
			waiting(t, r.slot)
			below = memory.OOMRetry{}.Below(r.others)
			p.log.Warn("task OOM-killed: re-dispatched once fewer tasks are in flight", "seq", t.Seq,
				"others", r.others, "below", below, "why", v.Reason)
			p.mu.Lock()
			p.st.Retries++
			p.mu.Unlock()
			continue
		}
		below = 0
		if r.brk.workerOnly && uncharged < p.cfg.MaxBreaks {
			// The worker answered another task's id: its fault, not this
			// task's, which goes to another worker without a break
			// counted (a bounded number of times, in case every worker
			// does it).
			uncharged++
		} else {
			breaks++
		}
		if breaks >= p.cfg.MaxBreaks {
			return p.finish(res, event.Quarantined, &QuarantinedError{Cause: r.brk.Cause, Breaks: breaks + oomKills, Last: r.brk, LastStderr: r.stderr})
		}
		waiting(t, r.slot)
		p.mu.Lock()
		p.st.Retries++
		p.mu.Unlock()
	}
}

// waiting tells t's owner that the worker that ran t broke and t waits to
// be re-dispatched: Started with pid 0, so that what shows the running
// jobs (the SIGUSR1 and stall tables, slow-job warnings) does not name a
// dead worker's pid while t waits, through a recreation's backoff too.
func waiting(t Task, slot int) {
	if t.Started != nil {
		t.Started(slot, 0)
	}
}

// await waits for the attempt's result; when ctx ends first, it aborts
// the attempt, and the worker answers at once (with the result if it had
// it).
func await(ctx context.Context, a *attempt) attemptResult {
	select {
	case r := <-a.done:
		return r
	case <-ctx.Done():
		close(a.abort)
		return <-a.done
	}
}

// ownerStopped reports whether err, which ended a task that a worker had
// taken before, is its context's (its owner stopped it) rather than the
// pool's (closed, or given up).
func ownerStopped(err error) bool {
	var be *BrokenError
	return !errors.Is(err, ErrClosed) && !errors.As(err, &be)
}

// settle is the outcome and error of an attempt whose worker did not
// break, with its output and RSS put into res. An attempt cut short by
// its context is Stopped, as a job the run stopped is: neither a success
// nor a failure (the runner runs it again on --resume).
func settle(ctx context.Context, r attemptResult, res *Result) (event.Outcome, error) {
	switch {
	case errors.Is(r.aborted, errAborted):
		return event.Stopped, context.Cause(ctx)
	case r.aborted != nil:
		return event.Failed, r.aborted
	case r.taskErr != nil:
		res.PeakRSS = r.rss
		return event.Failed, r.taskErr
	}
	res.Output, res.PeakRSS = r.output, r.rss
	return event.Succeeded, nil
}

// finish ends a task: its outcome, error, duration and the pool's counts.
func (p *Pool) finish(res Result, outcome event.Outcome, err error) Result {
	res.Outcome, res.Err = outcome, err
	if !res.Start.IsZero() {
		res.Duration = time.Since(res.Start)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch outcome {
	case event.Succeeded:
		p.st.Succeeded++
		p.recreateRun = 0
	case event.Failed:
		p.st.Failed++
	case event.Quarantined:
		p.st.Quarantined++
	case event.Stopped:
		p.st.Stopped++
	case event.NotStarted:
		// No worker took it, but the pool itself failed it (it gave up,
		// or was closed): a failed task for the counts, which must add
		// up to the tasks the owner saw fail. A context's end is the
		// owner's doing, not the pool's.
		var be *BrokenError
		if errors.As(err, &be) || errors.Is(err, ErrClosed) {
			p.st.Failed++
		}
	}
	return res
}

// dispatch hands a to a free worker.
func (p *Pool) dispatch(ctx context.Context, q chan *attempt, a *attempt) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	select {
	case <-p.closing:
		return ErrClosed
	case <-p.failed:
		return p.failure()
	default:
	}
	select {
	case q <- a:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-p.closing:
		return ErrClosed
	case <-p.failed:
		return p.failure()
	}
}

func (p *Pool) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failErr
}

// Close stops the pool: tasks waiting for a worker fail with ErrClosed,
// running tasks finish, and every worker is retired (stdin closed, then
// killed after Config.StopGrace). When ctx is done first, the remaining
// workers are killed at once, their tasks fail with ErrClosed, and Close
// returns ctx's error. Close returns when every worker process is reaped
// and every goroutine of the pool has ended. Calling Close again waits
// the same way and returns nil.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.closing)
		if p.pauseTimer != nil && p.pauseTimer.Stop() {
			p.wg.Done()
		}
		p.retireAllLocked(event.ReasonPoolClosed)
	}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		select {
		case <-p.killAll:
		default:
			close(p.killAll)
		}
		p.mu.Unlock()
		<-done
		return context.Cause(ctx)
	}
}

func (p *Pool) emit(e event.Event) {
	if p.obs == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	p.obs.Observe(e)
}

func (p *Pool) writeStderr(s string) {
	p.stderrMu.Lock()
	defer p.stderrMu.Unlock()
	io.WriteString(p.stderr, s)
}
