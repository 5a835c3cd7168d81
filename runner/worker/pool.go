package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner/adapt"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/internal/oomkill"
	"github.com/ration-run/ration/runner/reaper"
)

// Defaults for the zero values of Config.
const (
	DefaultMaxBreaks      = 2
	DefaultBreakWindow    = 10 * time.Second
	DefaultBackoff        = time.Second
	DefaultMaxRecreations = 5
	DefaultStopGrace      = 5 * time.Second
	DefaultStderrLines    = 20
	DefaultMaxLine        = 64 << 20
)

// Config configures a Pool. Command is required; every other zero value
// has a default.
type Config struct {
	// Command is the worker's argv, run without a shell.
	Command []string
	// Dir and Env are as in exec.Cmd (Env nil: ration's environment).
	Dir string
	Env []string
	// Size is the number of workers to start (the limits decision);
	// values below 1 mean 1.
	Size int
	// Timeout is the longest one task may take, from the moment it is
	// handed to a worker (for a fresh worker that includes its startup);
	// a worker that exceeds it is killed (cause timeout). 0: no timeout.
	Timeout time.Duration
	// MaxBreaks is the number of workers a task may break before it is
	// quarantined; 0 means DefaultMaxBreaks.
	MaxBreaks int
	// MaxTasks retires a worker after that many tasks, MaxRSS once the
	// resident set of its process tree exceeds that many bytes after a
	// task; a fresh worker replaces it. 0: never.
	MaxTasks int
	MaxRSS   int64
	// BreakWindow and the pool size define systemic breakage:
	// max(2, size/2) breaks within BreakWindow make the pool retire every
	// worker, wait Backoff (doubled for each recreation in a row, up to
	// 32 x) and start afresh. After MaxRecreations recreations in a row
	// without one successful task in between, the pool gives up and every
	// task fails with a *BrokenError. Zero values mean the defaults.
	BreakWindow    time.Duration
	Backoff        time.Duration
	MaxRecreations int
	// StopGrace is how long a retiring worker may take to exit after its
	// stdin is closed before it is killed; 0 means DefaultStopGrace.
	StopGrace time.Duration
	// Adapt configures the pool's concurrency controller (see
	// [Pool.Controller]); its Limit is taken from Size.
	Adapt adapt.Config
	// Observer receives the pool's events (never while the pool holds a
	// lock); nil: none.
	Observer event.Observer
	// Logger receives diagnostics; nil discards.
	Logger *slog.Logger
	// Stderr receives every worker's stderr, line by line, each line
	// prefixed with "[slot] "; nil means os.Stderr. Writes are serialized.
	Stderr io.Writer
	// StderrLines is how many of a worker's last stderr lines a
	// quarantined task reports; 0 means DefaultStderrLines.
	StderrLines int
	// MaxLine bounds one stdout line in bytes; a longer line is a
	// protocol break. 0 means DefaultMaxLine.
	MaxLine int
	// OnStart, when set, is called with the pid of every worker right
	// after it started and before it gets a task, e.g. to move it into a
	// cgroup. An error kills the worker and counts as a break.
	OnStart func(pid int) error
	// OOMKills, when set, reads the OOM-kill counter that covers every
	// worker. When nil, each worker's own memory cgroup is located when it
	// starts and its oom_kill counter is read (memory.oom_control on v1,
	// memory.events on v2). A worker killed by SIGKILL while that counter
	// rose during its task was OOM-killed.
	OOMKills func() (int64, error)
	// Reaper, when set, starts and waits for the worker processes, so that
	// a program running as PID 1 reaps orphans without taking the exit
	// status of its workers (see package reaper). Nil: exec.Cmd's own.
	Reaper *reaper.Reaper
}

// Task is one unit of work for a pool.
type Task struct {
	Seq   int64  // the job number reported in events ({#}); may be 0
	Input string // sent to the worker as "input"
	// Started, when set, is called each time a worker takes the task
	// (again after a re-dispatch), with the worker's slot and pid, before
	// the task is written to it, from the pool's goroutine. It must return
	// quickly.
	Started func(slot, pid int)
}

// Result is how a task ended.
type Result struct {
	// Output is the worker's "output" value when Err is nil.
	Output json.RawMessage
	// Err is nil on success; otherwise a *TaskError, a *QuarantinedError,
	// a *BrokenError, ErrClosed or the context's error.
	Err error
	// Outcome is Succeeded, Failed, Quarantined, or NotStarted when the
	// task never reached a worker.
	Outcome event.Outcome
	// Cause is the cause of the last break, CauseNone when no worker broke.
	Cause event.Cause
	// Attempts is the number of workers the task was given to.
	Attempts int
	// Slot and PID identify the worker of the last attempt.
	Slot, PID int
	// Start is when the first attempt started, Duration the time from
	// there to the end.
	Start    time.Time
	Duration time.Duration
	// PeakRSS is the resident set of the worker's process tree after the
	// task, sampled only when MaxRSS or Adapt.LearnMemory is set; 0
	// otherwise. A long-lived worker's RSS includes its warm state.
	PeakRSS int64
}

// Stats is a snapshot of a pool's counters.
type Stats struct {
	Size     int // the number of workers wanted now
	Live     int // workers running and not retiring
	Busy     int // workers running a task
	Retiring int // workers finishing their last task

	Starts       int64 // worker processes started
	Replacements int64 // workers started to replace a broken one
	Retired      int64 // workers retired on purpose (shrink, recycling, recreation, close)
	Recycled     int64 // of those, retired by MaxTasks or MaxRSS
	Recreations  int64 // systemic breakages that recreated the pool
	Breaks       map[event.Cause]int64

	Succeeded   int64
	Failed      int64
	Quarantined int64
	Retries     int64 // re-dispatches after a break

	Adapt adapt.Stats // the concurrency controller
}

// String summarizes s in one line for the end-of-run summary, e.g.
//
//	workers: 6 started, 2 replaced, 1 recreation, breaks: oom 2; tasks: 49 succeeded, 0 failed, 1 quarantined; concurrency 2 (limit 4): systemic OOM breakage at 4 jobs: halved to 2 (will grow back to at most 3)
func (s Stats) String() string {
	var b strings.Builder
	plural := func(n int64, one, many string) string {
		if n == 1 {
			return one
		}
		return many
	}
	fmt.Fprintf(&b, "workers: %d started, %d replaced, %d %s", s.Starts, s.Replacements, s.Recreations,
		plural(s.Recreations, "recreation", "recreations"))
	if s.Recycled > 0 {
		fmt.Fprintf(&b, ", %d recycled", s.Recycled)
	}
	if len(s.Breaks) > 0 {
		b.WriteString(", breaks:")
		for _, c := range slices.Sorted(maps.Keys(s.Breaks)) {
			fmt.Fprintf(&b, " %s %d", c, s.Breaks[c])
		}
	}
	fmt.Fprintf(&b, "; tasks: %d succeeded, %d failed, %d quarantined", s.Succeeded, s.Failed, s.Quarantined)
	fmt.Fprintf(&b, "; concurrency %d", s.Size)
	if s.Adapt.Limit != s.Size {
		fmt.Fprintf(&b, " (limit %d)", s.Adapt.Limit)
	}
	if s.Adapt.LearnedMemPerJob > 0 {
		fmt.Fprintf(&b, ", learned memory per job %s (p95 of %d)", limits.FormatSize(s.Adapt.LearnedMemPerJob), s.Adapt.Samples)
	}
	if s.Adapt.Reason != "" && s.Adapt.Size != s.Adapt.Limit {
		b.WriteString(": " + s.Adapt.Reason)
	}
	return b.String()
}

// Pool runs tasks on long-lived worker processes. It is safe for concurrent
// use. The zero value is not usable; call New.
type Pool struct {
	cfg  Config
	log  *slog.Logger
	ctrl *adapt.Controller
	obs  event.Observer

	taskq   chan *attempt  // first attempts
	retryq  chan *attempt  // re-dispatches: served first
	closing chan struct{}  // closed by Close
	killAll chan struct{}  // closed when Close gives up waiting
	failed  chan struct{}  // closed when the pool gives up
	nextID  atomic.Int64   // request ids
	nextTk  atomic.Int64   // task ids
	wg      sync.WaitGroup // worker goroutines and the recreation timer

	stderrMu sync.Mutex
	stderr   io.Writer

	mu          sync.Mutex
	size        int
	workers     map[*worker]struct{}
	slots       map[int]bool
	paused      bool
	pauseTimer  *time.Timer
	breaks      []breakRec
	recreateRun int
	closed      bool
	failErr     error
	lastBreak   *BreakError
	lastStderr  []string
	st          Stats
}

type breakRec struct {
	at    time.Time
	cause event.Cause
	task  int64 // the task in flight, 0 when idle
}

// attempt is one dispatch of a task to a worker.
type attempt struct {
	id     int64 // the task's pool-wide number, the same for every attempt
	task   Task
	n      int // attempt number, 1-based
	queued time.Time
	abort  chan struct{}      // closed by the task's owner when it gives up
	done   chan attemptResult // buffered: the worker never blocks on it
}

type attemptResult struct {
	output   json.RawMessage
	taskErr  *TaskError
	brk      *BreakError
	stderr   []string
	aborted  error // ctx error or ErrClosed: the attempt was cut short
	slot     int
	pid      int
	duration time.Duration
	rss      int64
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
}

// New validates cfg, starts cfg.Size worker processes (asynchronously:
// New does not wait for them) and returns the pool. It fails when the
// command is empty or cannot be found. ctx bounds only New itself.
// Call Close to stop the workers.
func New(ctx context.Context, cfg Config) (*Pool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(cfg.Command) == 0 || cfg.Command[0] == "" {
		return nil, errors.New("worker: empty worker command")
	}
	if _, err := exec.LookPath(cfg.Command[0]); err != nil {
		return nil, fmt.Errorf("worker: %w", err)
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
		workers: map[*worker]struct{}{}, slots: map[int]bool{},
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.stderr == nil {
		p.stderr = os.Stderr
	}
	ac := cfg.Adapt
	ac.Limit = cfg.Size
	if ac.Logger == nil {
		ac.Logger = p.log
	}
	p.ctrl = adapt.New(adapt.ResizeFunc(p.resize), ac)
	// The user's observer first: a PoolRecreated it sees comes before the
	// PoolResized the controller's halving causes.
	p.obs = event.Multi{cfg.Observer, p.ctrl}
	p.st.Breaks = map[event.Cause]int64{}
	p.mu.Lock()
	p.reconcileLocked(false)
	p.mu.Unlock()
	return p, nil
}

// Controller returns the pool's concurrency controller. It sees every event
// of the pool; feed it more (SetLimit from adapt.Watch, SetMemoryLimit) to
// adapt the pool to changed limits.
func (p *Pool) Controller() *adapt.Controller { return p.ctrl }

// Resize sets the pool's ceiling to n workers (at least 1), for example
// after the CPU limit changed. The pool runs min(n, its OOM and memory
// caps) workers: see package adapt. Shrinking retires the excess workers,
// idle ones first; a busy retiring worker finishes its task. Growing starts
// new workers at once. reason is reported in the PoolResized event.
func (p *Pool) Resize(n int, reason string) { p.ctrl.SetLimit(n, reason) }

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
// When ctx is done before a worker took the task, Run returns ctx's error
// with Outcome NotStarted; when it is done while a worker runs the task,
// that worker is killed (it is replaced; this is not a break) and Run
// returns ctx's error, unless the answer was already there.
func (p *Pool) Run(ctx context.Context, t Task) Result {
	var (
		res    = Result{Outcome: event.NotStarted}
		breaks int
		last   attemptResult
	)
	finish := func(outcome event.Outcome, err error) Result {
		res.Outcome, res.Err = outcome, err
		if !res.Start.IsZero() {
			res.Duration = time.Since(res.Start)
		}
		p.mu.Lock()
		switch outcome {
		case event.Succeeded:
			p.st.Succeeded++
			p.recreateRun = 0
		case event.Failed:
			p.st.Failed++
		case event.Quarantined:
			p.st.Quarantined++
		}
		p.mu.Unlock()
		if res.Attempts > 0 {
			code := 0
			sig := 0
			if err != nil {
				code = 1
			}
			if last.brk != nil && outcome == event.Quarantined {
				code, sig = last.brk.ExitCode, int(last.brk.Signal)
			}
			p.emit(event.Event{Kind: event.JobFinished, Seq: t.Seq, Slot: res.Slot, PID: res.PID, Input: t.Input,
				Attempt: res.Attempts, Duration: res.Duration, ExitCode: code, Signal: sig, PeakRSS: res.PeakRSS,
				Outcome: outcome, Cause: res.Cause, Err: err})
		}
		return res
	}
	tid := p.nextTk.Add(1)
	for {
		a := &attempt{id: tid, task: t, n: res.Attempts + 1, queued: time.Now(), abort: make(chan struct{}), done: make(chan attemptResult, 1)}
		q := p.taskq
		if a.n > 1 {
			q = p.retryq
		}
		if err := p.dispatch(ctx, q, a); err != nil {
			if res.Attempts == 0 {
				return finish(event.NotStarted, err)
			}
			return finish(event.Failed, err)
		}
		res.Attempts = a.n
		if res.Start.IsZero() {
			res.Start = time.Now()
		}
		var r attemptResult
		select {
		case r = <-a.done:
		case <-ctx.Done():
			close(a.abort)
			r = <-a.done // the worker answers at once: with the result if it had it
		}
		last = r
		res.Slot, res.PID = r.slot, r.pid
		switch {
		case r.aborted != nil:
			err := r.aborted
			if errors.Is(err, errAborted) {
				err = context.Cause(ctx)
			}
			return finish(event.Failed, err)
		case r.taskErr != nil:
			res.PeakRSS = r.rss
			return finish(event.Failed, r.taskErr)
		case r.brk == nil:
			res.Output, res.PeakRSS = r.output, r.rss
			return finish(event.Succeeded, nil)
		}
		breaks++
		res.Cause = r.brk.Cause
		if breaks >= p.cfg.MaxBreaks {
			return finish(event.Quarantined, &QuarantinedError{Cause: r.brk.Cause, Breaks: breaks, Last: r.brk, LastStderr: r.stderr})
		}
		p.mu.Lock()
		p.st.Retries++
		p.mu.Unlock()
		p.emit(event.Event{Kind: event.JobRetried, Seq: t.Seq, Slot: r.slot, PID: r.pid, Input: t.Input,
			Attempt: a.n, Duration: r.duration, Cause: r.brk.Cause, Err: r.brk})
	}
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

// Stats returns a snapshot of the pool's counters.
func (p *Pool) Stats() Stats {
	as := p.ctrl.Stats()
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.st
	s.Breaks = make(map[event.Cause]int64, len(p.st.Breaks))
	for k, v := range p.st.Breaks {
		s.Breaks[k] = v
	}
	s.Size = p.size
	s.Live, s.Busy, s.Retiring = 0, 0, 0
	for w := range p.workers {
		if w.retiring {
			s.Retiring++
		} else {
			s.Live++
		}
		if w.busy {
			s.Busy++
		}
	}
	s.Adapt = as
	return s
}

// WorkerInfo describes one worker process of a pool.
type WorkerInfo struct {
	Slot     int
	PID      int    // 0 while the process is starting
	Busy     bool   // running a task
	Input    string // the input of that task
	Retiring bool   // finishing its last task; never restarted
	Reason   string // why it is retiring
}

// Workers lists the pool's worker processes, ordered by slot, to show what
// every worker is doing (a hang is explained by the table).
func (p *Pool) Workers() []WorkerInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]WorkerInfo, 0, len(p.workers))
	for w := range p.workers {
		out = append(out, WorkerInfo{Slot: w.slot, PID: w.pid, Busy: w.busy, Input: w.input, Retiring: w.retiring, Reason: w.why})
	}
	slices.SortFunc(out, func(a, b WorkerInfo) int { return a.Slot - b.Slot })
	return out
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

// resize is the controller's Resizer: it sets the number of workers.
func (p *Pool) resize(n int, reason string) {
	n = max(n, 1)
	p.mu.Lock()
	if p.closed || n == p.size {
		p.mu.Unlock()
		return
	}
	p.size = n
	live := p.liveLocked()
	for len(live) > n {
		// Retire idle workers first, then the highest slots.
		pick := 0
		for i, w := range live {
			if w.busy != live[pick].busy {
				if !w.busy {
					pick = i
				}
				continue
			}
			if w.slot > live[pick].slot {
				pick = i
			}
		}
		p.retireLocked(live[pick], "pool shrunk: "+reason)
		live = append(live[:pick], live[pick+1:]...)
	}
	p.reconcileLocked(false)
	p.mu.Unlock()
	p.emit(event.Event{Kind: event.PoolResized, Size: n, Reason: reason})
}

func (p *Pool) liveLocked() []*worker {
	var live []*worker
	for w := range p.workers {
		if !w.retiring {
			live = append(live, w)
		}
	}
	return live
}

func (p *Pool) retireLocked(w *worker, why string) {
	if w.retiring {
		return
	}
	w.retiring, w.why = true, why
	close(w.retire)
}

func (p *Pool) retireAllLocked(why string) {
	for w := range p.workers {
		p.retireLocked(w, why)
	}
}

// reconcileLocked starts workers until the pool has size live ones. It is
// the only place workers start, and it counts live workers only, so a
// retiring worker is never replaced by its own restart.
func (p *Pool) reconcileLocked(replacement bool) {
	if p.closed || p.paused || p.failErr != nil {
		return
	}
	for n := len(p.liveLocked()); n < p.size; n++ {
		slot := 1
		for p.slots[slot] {
			slot++
		}
		p.slots[slot] = true
		w := &worker{slot: slot, retire: make(chan struct{})}
		p.workers[w] = struct{}{}
		p.st.Starts++
		if replacement {
			p.st.Replacements++
			replacement = false
		}
		p.wg.Add(1)
		go p.runWorker(w)
	}
}

// ended is called once per worker when its process is gone. brk is non-nil
// when it broke, task the id of the task it broke on (0: none).
func (p *Pool) ended(w *worker, brk *BreakError, stderr []string, task int64) {
	var evs []event.Event
	p.mu.Lock()
	delete(p.workers, w)
	delete(p.slots, w.slot)
	if brk != nil && w.retiring {
		// A retiring worker is leaving anyway: its break is counted and
		// its task re-dispatched, but it says nothing about the health
		// of the pool that stays.
		p.st.Breaks[brk.Cause]++
	} else if brk != nil {
		p.st.Breaks[brk.Cause]++
		p.lastBreak, p.lastStderr = brk, stderr
		now := time.Now()
		p.breaks = append(p.breaks, breakRec{at: now, cause: brk.Cause, task: task})
		for len(p.breaks) > 0 && now.Sub(p.breaks[0].at) > p.cfg.BreakWindow {
			p.breaks = p.breaks[1:]
		}
		if !p.closed && !p.paused && p.failErr == nil && p.systemicLocked() {
			evs = append(evs, p.recreateLocked())
		}
	} else {
		p.st.Retired++
	}
	p.reconcileLocked(brk != nil && !w.retiring)
	p.mu.Unlock()
	for _, e := range evs {
		p.emit(e)
	}
}

// systemicLocked reports whether the breaks in the window are systemic:
// at least max(2, size/2) of them, where the breaks caused by one task
// count once. A single poison task that breaks MaxBreaks workers is
// quarantined; it is not a reason to recreate the pool.
func (p *Pool) systemicLocked() bool {
	tasks := map[int64]bool{}
	n := 0
	for _, b := range p.breaks {
		if b.task != 0 {
			if tasks[b.task] {
				continue
			}
			tasks[b.task] = true
		}
		n++
	}
	return n >= max(2, p.size/2)
}

// recreateLocked handles systemic breakage: retire every worker, pause,
// and schedule the restart after the backoff; or give up.
func (p *Pool) recreateLocked() event.Event {
	counts := map[event.Cause]int{}
	cause := event.CauseNone
	for _, b := range p.breaks {
		counts[b.cause]++
		if counts[b.cause] > counts[cause] || (counts[b.cause] == counts[cause] && b.cause == event.CauseOOM) {
			cause = b.cause
		}
	}
	n := len(p.breaks)
	p.breaks = nil
	p.st.Recreations++
	p.recreateRun++
	if p.recreateRun > p.cfg.MaxRecreations {
		p.failErr = &BrokenError{Recreations: p.recreateRun - 1, Last: p.lastBreak, LastStderr: p.lastStderr}
		close(p.failed)
		p.retireAllLocked("pool gave up")
		return event.Event{Kind: event.PoolRecreated, Size: 0, Cause: cause, Err: p.failErr,
			Reason: fmt.Sprintf("%d workers broke within %v (mostly %s); giving up: %v", n, p.cfg.BreakWindow, cause, p.failErr)}
	}
	backoff := p.cfg.Backoff << min(p.recreateRun-1, 5)
	p.paused = true
	p.retireAllLocked("pool recreated")
	p.wg.Add(1)
	p.pauseTimer = time.AfterFunc(backoff, p.unpause)
	return event.Event{Kind: event.PoolRecreated, Size: p.size, Cause: cause,
		Reason: fmt.Sprintf("%d workers broke within %v (mostly %s): retired all workers, restarting in %v", n, p.cfg.BreakWindow, cause, backoff)}
}

func (p *Pool) unpause() {
	defer p.wg.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = false
	p.pauseTimer = nil
	p.breaks = nil
	p.reconcileLocked(false)
}

// workerEnd is how serve ended.
type workerEnd struct {
	brk     *BreakError // the worker broke
	stderr  []string    // its last stderr lines, when it broke
	pending *attempt    // the attempt it broke on, to hand back after the pool knows
	result  attemptResult
	killed  string // it was killed on purpose (its task was cancelled, or Close gave up)
}

// runWorker is one worker's life: start, serve tasks one at a time, end.
func (p *Pool) runWorker(w *worker) {
	defer p.wg.Done()
	pr, err := p.startProc(w.slot)
	if err != nil {
		brk := &BreakError{Cause: event.CauseExit, Slot: w.slot, ExitCode: -1, Detail: err.Error()}
		p.log.Warn("worker failed to start", "slot", w.slot, "err", err)
		p.emit(event.Event{Kind: event.WorkerBroken, Slot: w.slot, Cause: brk.Cause, ExitCode: -1, Err: brk})
		p.ended(w, brk, nil, 0)
		return
	}
	p.mu.Lock()
	w.pid = pr.pid
	p.mu.Unlock()
	p.emit(event.Event{Kind: event.WorkerStarted, Slot: w.slot, PID: pr.pid})

	end := p.serve(w, pr)
	pr.release()
	var task int64
	switch {
	case end.brk != nil:
		e := event.Event{Kind: event.WorkerBroken, Slot: w.slot, PID: pr.pid, Cause: end.brk.Cause,
			ExitCode: end.brk.ExitCode, Signal: int(end.brk.Signal), Err: end.brk}
		if a := end.pending; a != nil {
			task = a.id
			e.Seq, e.Input, e.Attempt = a.task.Seq, a.task.Input, a.n
		}
		p.mu.Lock()
		if w.retiring {
			e.Reason = "broke while retiring (" + w.why + "); not restarted"
		}
		p.mu.Unlock()
		p.emit(e)
	default:
		why := end.killed
		if why == "" {
			p.mu.Lock()
			why = w.why
			p.mu.Unlock()
		}
		p.emit(event.Event{Kind: event.WorkerRetired, Slot: w.slot, PID: pr.pid, Reason: why})
	}
	p.ended(w, end.brk, end.stderr, task)
	if end.pending != nil {
		// Handed back only now, so a re-dispatch finds the replacement
		// already starting and the systemic-breakage check already done.
		end.pending.done <- end.result
	}
}

// serve runs tasks on pr until the worker retires, is killed or breaks. On
// return the process has been reaped.
func (p *Pool) serve(w *worker, pr *proc) workerEnd {
	tasks := 0
	for {
		a, brk := p.next(w, pr)
		if brk != nil {
			pr.killAndWait()
			return workerEnd{brk: brk, stderr: pr.lastStderr()}
		}
		if a == nil {
			p.stop(pr)
			return workerEnd{}
		}
		r, brk := p.runTask(w, pr, a)
		p.mu.Lock()
		w.busy, w.input = false, ""
		p.mu.Unlock()
		if brk != nil {
			r.brk, r.stderr = brk, pr.lastStderr()
			return workerEnd{brk: brk, stderr: r.stderr, pending: a, result: r}
		}
		a.done <- r
		if r.aborted != nil {
			return workerEnd{killed: "killed: " + r.aborted.Error()}
		}
		tasks++
		recycle := ""
		if p.cfg.MaxTasks > 0 && tasks >= p.cfg.MaxTasks {
			recycle = fmt.Sprintf("recycled after %d tasks", tasks)
		} else if p.cfg.MaxRSS > 0 && r.rss > p.cfg.MaxRSS {
			recycle = fmt.Sprintf("recycled: process tree RSS %d bytes > %d", r.rss, p.cfg.MaxRSS)
		}
		if recycle != "" {
			p.mu.Lock()
			if !w.retiring {
				p.st.Recycled++
				p.retireLocked(w, recycle)
				p.reconcileLocked(false) // the fresh worker starts while this one stops
			}
			p.mu.Unlock()
		}
	}
}

// next waits for the worker's next task. It returns (nil, nil) when the
// worker is to retire, and a break when the worker died or wrote while idle.
func (p *Pool) next(w *worker, pr *proc) (*attempt, *BreakError) {
	if p.isRetiring(w) {
		return nil, nil
	}
	select {
	case a := <-p.retryq:
		return p.take(w, a), nil
	default:
	}
	select {
	case a := <-p.retryq:
		return p.take(w, a), nil
	case a := <-p.taskq:
		return p.take(w, a), nil
	case <-w.retire:
		return nil, nil
	case <-p.killAll:
		return nil, nil
	case m, ok := <-pr.lines:
		if !ok {
			if !waitExit(pr, time.Second) {
				return nil, &BreakError{Cause: event.CauseProtocol, Slot: w.slot, PID: pr.pid, ExitCode: -1, Detail: "closed its stdout"}
			}
			if p.isRetiring(w) {
				return nil, nil
			}
			return nil, p.exitBreak(w, pr, -1, "while idle")
		}
		return nil, &BreakError{Cause: event.CauseProtocol, Slot: w.slot, PID: pr.pid, ExitCode: -1,
			Detail: "wrote while it had no task: " + quoteLine(m.line)}
	case <-pr.exited:
		if p.isRetiring(w) {
			return nil, nil // a retiring worker may go; it is not restarted either way
		}
		return nil, p.exitBreak(w, pr, -1, "while idle")
	}
}

func (p *Pool) isRetiring(w *worker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return w.retiring
}

func (p *Pool) take(w *worker, a *attempt) *attempt {
	p.mu.Lock()
	w.busy, w.input = true, a.task.Input
	p.mu.Unlock()
	return a
}

// waitExit waits up to d for the worker to be reaped.
func waitExit(pr *proc, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-pr.exited:
		return true
	case <-t.C:
		return false
	}
}

// stop ends a retiring worker: close its stdin (the protocol's "exit
// now"), give it StopGrace, then kill its process group.
func (p *Pool) stop(pr *proc) {
	pr.stdin.Close()
	t := time.NewTimer(p.cfg.StopGrace)
	defer t.Stop()
	select {
	case <-pr.exited:
	case <-t.C:
	case <-p.killAll:
	}
	pr.killAndWait()
}

// exitBreak classifies a worker that ended on its own. base is the OOM
// counter before the task, -1 when unknown.
func (p *Pool) exitBreak(w *worker, pr *proc, base int64, when string) *BreakError {
	code, sig := pr.status()
	b := &BreakError{Slot: w.slot, PID: pr.pid, ExitCode: code, Signal: sig, When: when}
	switch {
	case sig == syscall.SIGKILL && base >= 0 && oomkill.Rose(pr.oomKills, base):
		b.Cause = event.CauseOOM
	case sig != 0:
		b.Cause = event.CauseSignal
	default:
		b.Cause = event.CauseExit
	}
	return b
}

var errAborted = errors.New("worker: task aborted")

// runTask runs one attempt on the worker. A non-nil break means the worker
// is dead and reaped.
func (p *Pool) runTask(w *worker, pr *proc, a *attempt) (attemptResult, *BreakError) {
	id := p.nextID.Add(1)
	start := time.Now()
	r := attemptResult{slot: w.slot, pid: pr.pid}
	if a.task.Started != nil {
		a.task.Started(w.slot, pr.pid)
	}
	p.emit(event.Event{Kind: event.JobStarted, Seq: a.task.Seq, Slot: w.slot, PID: pr.pid, Input: a.task.Input,
		Attempt: a.n, QueueWait: start.Sub(a.queued)})
	base := pr.oomKills()

	// The write runs on its own goroutine so that a worker that does not
	// read its stdin cannot hold us past the timeout or a cancellation.
	written := make(chan error, 1)
	req := encodeRequest(id, a.task.Input)
	go func() { _, err := pr.stdin.Write(req); written <- err }()
	writing := true
	waitWrite := func() {
		if !writing {
			return
		}
		writing = false
		t := time.NewTimer(time.Second)
		defer t.Stop()
		select {
		case <-written: // at once when the process is dead
		case <-t.C:
			// Someone outside the process group still holds the pipe:
			// closing our end makes the write return.
			pr.stdin.Close()
			<-written
		}
	}
	var timeout <-chan time.Time
	if p.cfg.Timeout > 0 {
		t := time.NewTimer(p.cfg.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	fail := func(b *BreakError) (attemptResult, *BreakError) {
		pr.killAndWait()
		waitWrite()
		r.duration = time.Since(start)
		return r, b
	}
	protocol := func(detail string) (attemptResult, *BreakError) {
		return fail(&BreakError{Cause: event.CauseProtocol, Slot: w.slot, PID: pr.pid, ExitCode: -1, Detail: detail})
	}
	answer := func(m lineMsg) (attemptResult, *BreakError, bool) {
		if m.err != nil {
			res, b := protocol(fmt.Sprintf("%v (%d bytes): %s", m.err, p.cfg.MaxLine, quoteLine(m.line)))
			return res, b, true
		}
		resp, err := parseResponse(m.line, id)
		if err != nil {
			res, b := protocol(err.Error())
			return res, b, true
		}
		r.duration = time.Since(start)
		if *resp.OK {
			r.output = resp.Output
		} else {
			r.taskErr = &TaskError{Message: *resp.Error}
		}
		return r, nil, false
	}
	for {
		var wch chan error
		if writing {
			wch = written
		}
		select {
		case err := <-wch:
			writing = false
			if err != nil {
				// The worker closed its stdin or died; its exit says why.
				if !waitExit(pr, time.Second) {
					return protocol("closed its stdin while a task was pending")
				}
				return fail(p.exitBreak(w, pr, base, "before reading its task"))
			}
		case m, ok := <-pr.lines:
			if !ok {
				if !waitExit(pr, time.Second) {
					return protocol("closed its stdout while a task was pending")
				}
				return fail(p.exitBreak(w, pr, base, "while running a task"))
			}
			res, b, broke := answer(m)
			if broke {
				return res, b
			}
			if writing {
				// It answered before our write returned: fine for a
				// request that fits the pipe; otherwise it answered a line
				// it had not read in full.
				select {
				case err := <-written:
					writing = false
					if err != nil {
						return protocol("answered a task it could not have read")
					}
				case <-time.After(time.Second):
					return protocol("answered before reading its whole task line")
				}
			}
			if p.cfg.MaxRSS > 0 || p.cfg.Adapt.LearnMemory {
				if rss, err := treeRSS(pr.pid); err == nil {
					res.rss = rss
				}
			}
			return res, nil
		case <-pr.exited:
			// It may have answered just before it died: drain stdout.
			t := time.NewTimer(time.Second)
		drain:
			for {
				select {
				case m, ok := <-pr.lines:
					if !ok {
						break drain
					}
					if res, b, broke := answer(m); !broke {
						t.Stop()
						waitWrite()
						return res, nil // the death is noticed by next, as a break while idle
					} else {
						t.Stop()
						return res, b
					}
				case <-t.C:
					break drain
				}
			}
			t.Stop()
			return fail(p.exitBreak(w, pr, base, "while running a task"))
		case <-timeout:
			b := &BreakError{Cause: event.CauseTimeout, Slot: w.slot, PID: pr.pid, ExitCode: -1, Timeout: p.cfg.Timeout}
			res, b := fail(b)
			// The signal that ended it (our SIGKILL, unless it died of
			// something else first) goes into the joblog of a
			// quarantined task.
			_, b.Signal = pr.status()
			return res, b
		case <-a.abort:
			pr.killAndWait()
			waitWrite()
			r.aborted = errAborted
			return r, nil
		case <-p.killAll:
			pr.killAndWait()
			waitWrite()
			r.aborted = ErrClosed
			return r, nil
		}
	}
}
