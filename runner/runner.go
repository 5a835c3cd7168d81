package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ration-run/ration/internal/adapt"
	"github.com/ration-run/ration/internal/jobtable"
	"github.com/ration-run/ration/internal/memory"
	"github.com/ration-run/ration/internal/template"
	"github.com/ration-run/ration/pool"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/joblog"
)

// MaxJobs is the most jobs a Runner runs at once: a larger Config.Jobs
// or Resize is clamped to it (with a warning), so that a typo in -j
// cannot take the memory of a goroutine and its buffers per slot for
// millions of slots. Ten thousand processes at once is beyond what one
// machine's process and file limits usually allow anyway.
const MaxJobs = 10000

// Runner runs one Config. Its methods are safe for concurrent use; Run may
// be called once.
type Runner struct {
	cfg  Config
	tmpl *template.Template
	exec Executor
	log  *slog.Logger
	out  *sharedOut
	ctrl *adapt.Controller // nil without Config.Adapt
	obs  event.Observer    // Config.Observer, then ctrl

	mu        sync.Mutex
	running   map[int64]*runningJob
	pool      *pool.Pool
	size      int
	terminate context.CancelCauseFunc // cancels every running job; nil outside Run
	wake      chan struct{}           // closed and replaced when a job ends or the size changes
	reruns    *memory.Reruns          // OOM re-queued attempts waiting for room (waitForRoom), guarded by mu
	jl        *joblog.Writer          // the open joblog, for Abandon

	ran         atomic.Bool
	stopping    atomic.Bool // start no more jobs
	interrupted atomic.Bool
	halted      atomic.Bool
	outputLost  atomic.Bool // ration's stdout or stderr was found gone (outputFailed)
	drainOnce   sync.Once
	killOnce    sync.Once
	drainCh     chan struct{}
	killCh      chan struct{}
	stopOnce    sync.Once
	stopCh      chan struct{} // closed by stop

	succeeded, failed, killed, notStarted, skipped atomic.Int64
	quarantined, oomRetried                        atomic.Int64
	rss                                            rssHist
	// total is the number of jobs, known when a Halt percentage made
	// the runner read the whole input first; 0 when not known.
	total    atomic.Int64
	haltSt   haltStatus // the exit status Halt decided (HaltStatus)
	firstErr atomic.Pointer[error]

	oom   oomCounter
	adm   *admission // memory admission and OOM re-queue (admission.go)
	hooks attemptHooks
	live  liveOrder // -k --line-buffer (keeporder.go)
	slots slotTable // the jobs' slots, {%} (slots.go)
}

type runningJob struct {
	RunningJob
	out     *output
	started bool // the executor reported the current attempt started
	waiting bool // waiting for room to retry after an OOM kill
}

// New checks cfg and returns a Runner. Its errors name the Config field
// that is wrong.
func New(cfg Config) (*Runner, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	tmpl, err := template.ParseOptions(cfg.Command, cfg.templateOptions())
	if err != nil {
		return nil, fmt.Errorf("runner: Command: %w", err)
	}
	hooks, err := cfg.dialectHooks(tmpl)
	if err != nil {
		return nil, err
	}
	if err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	if cfg.Jobs > MaxJobs {
		cfg.Logger.Warn(fmt.Sprintf("-j %d is more than ration runs at once; using %d", cfg.Jobs, MaxJobs), "jobs", cfg.Jobs, "max", MaxJobs)
		cfg.JobsReason = fmt.Sprintf("%d, clamped from %d: %s", MaxJobs, cfg.Jobs, cfg.JobsReason)
		cfg.Jobs = MaxJobs
	}
	r := &Runner{
		cfg:     cfg,
		tmpl:    tmpl,
		exec:    cfg.Executor,
		log:     cfg.Logger,
		out:     &sharedOut{stdout: cfg.Stdout, stderr: cfg.Stderr},
		running: make(map[int64]*runningJob),
		size:    cfg.Jobs,
		wake:    make(chan struct{}),
		drainCh: make(chan struct{}),
		killCh:  make(chan struct{}),
		stopCh:  make(chan struct{}),
		oom:     oomCounter{read: cfg.OOMKills},
		adm:     newAdmission(cfg),
	}
	r.reruns = memory.NewReruns(&r.mu)
	r.reruns.Poll, r.reruns.Stop = 100*time.Millisecond, r.stopCh
	if r.exec == nil {
		r.exec = &ProcessExecutor{}
	}
	r.install(hooks)
	r.obs = cfg.Observer
	if cfg.Adapt != nil {
		ac := *cfg.Adapt
		ac.Limit = cfg.Jobs
		if ac.LimitReason == "" {
			ac.LimitReason = cfg.JobsReason
		}
		if ac.Logger == nil {
			ac.Logger = r.log
		}
		r.ctrl = adapt.New(adapt.ResizeFunc(r.resize), ac)
		// The caller's observers first: a PoolRecreated or JobRetried they
		// see comes before the PoolResized the controller's halving causes.
		r.obs = event.Multi{cfg.Observer, r.ctrl}
	}
	return r, nil
}

// emit passes e to the observers and the controller, stamped with the time
// when it has none.
//
// An observer is user code called from the middle of a job (JobStarted
// comes while the job's process runs): a panic that went on up would
// leave that process running unwaited and the job out of the Summary. So
// emit recovers it and stops the run as a failed output write does: no
// more jobs start, the running ones end and are counted, and Run's error
// wraps ErrObserverPanic with the panic's value and stack.
func (r *Runner) emit(e event.Event) {
	if r.obs == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	defer func() {
		if v := recover(); v != nil {
			err := fmt.Errorf("%w on %v: %v\n%s", ErrObserverPanic, e.Kind, v, debug.Stack())
			r.log.Error("the observer panicked; starting no more jobs", "event", e.Kind.String(), "panic", fmt.Sprint(v))
			r.setErr(err)
			r.stop()
		}
	}()
	r.obs.Observe(e)
}

// Controller returns the run's concurrency controller, nil without
// Config.Adapt. Feed it more (SetLimit from adapt.Watch, SetMemoryLimit)
// to adapt the run to changed limits; it sees every event of the run.
func (r *Runner) Controller() *adapt.Controller { return r.ctrl }

// Drain stops starting jobs at once, lets the running ones finish for
// Config.TermTimeout and then stops them. It returns at once; Run returns
// when the last job ended. Calling it again does nothing (call Kill).
func (r *Runner) Drain() {
	r.drainOnce.Do(func() {
		r.interrupted.Store(true)
		r.stop()
		close(r.drainCh)
	})
}

// stop makes the run start no more jobs (an interrupt, --halt, a failed
// output or joblog write) and wakes what waits to start one (--delay, an
// OOM re-queue), so that a stopped run does not wait out a delay first.
func (r *Runner) stop() {
	r.stopping.Store(true)
	r.stopOnce.Do(func() { close(r.stopCh) })
}

// Kill stops starting jobs and kills the running ones at once (SIGKILL to
// their process groups, also those in their SIGTERM grace).
func (r *Runner) Kill() {
	r.Drain()
	r.killOnce.Do(func() { close(r.killCh) })
	r.stopJobs(ErrInterrupted)
}

// stopJobs stops every running job (SIGTERM, then SIGKILL after Grace).
func (r *Runner) stopJobs(cause error) {
	r.mu.Lock()
	t := r.terminate
	r.mu.Unlock()
	if t != nil {
		t(cause)
	}
}

// Resize sets the number of jobs run at once to n (at least 1) and emits
// event.PoolResized with reason. Shrinking lets running jobs finish. With
// Config.Adapt, n is the controller's new ceiling (Controller.SetLimit):
// the run goes to min(n, the controller's OOM and memory caps).
func (r *Runner) Resize(n int, reason string) {
	if r.ctrl != nil {
		r.ctrl.SetLimit(n, reason)
		return
	}
	r.resize(n, reason)
}

// resize applies a size: the job pool's, and the executor's when it sizes
// processes of its own.
func (r *Runner) resize(n int, reason string) {
	n = min(max(n, 1), MaxJobs)
	r.mu.Lock()
	r.size = n
	p := r.pool
	r.wakeLocked()
	r.mu.Unlock()
	if p != nil {
		p.Resize(n)
	}
	if rs, ok := r.exec.(adapt.Resizer); ok {
		rs.Resize(n, reason)
	}
	r.emit(event.Event{Kind: event.PoolResized, Size: n, Reason: reason})
}

// Running returns the jobs running now, by slot. A job whose attempt the
// executor has not started yet (a task waiting for a free worker) is not
// running.
func (r *Runner) Running() []RunningJob {
	r.mu.Lock()
	out := make([]RunningJob, 0, len(r.running))
	outs := make([]*output, 0, len(r.running))
	for _, j := range r.running {
		if !j.started {
			continue
		}
		out = append(out, j.RunningJob)
		outs = append(outs, j.out)
	}
	r.mu.Unlock()
	for i, o := range outs {
		out[i].LastLine = o.lastLine()
	}
	slices.SortFunc(out, func(a, b RunningJob) int { return a.Slot - b.Slot })
	return out
}

// PoolStats returns the pool's counters (zero before Run).
func (r *Runner) PoolStats() pool.Stats {
	r.mu.Lock()
	p := r.pool
	r.mu.Unlock()
	if p == nil {
		return pool.Stats{}
	}
	return p.Stats()
}

// Rows returns the running jobs as the rows of the running-jobs table
// (the stall watchdog's too), so that the SIGUSR1 report and the stall
// report show the same table.
func (r *Runner) Rows() []event.Row {
	jobs := r.Running()
	rows := make([]event.Row, len(jobs))
	for i, j := range jobs {
		rows[i] = event.Row{Slot: j.Slot, PID: j.PID, Seq: j.Seq, Input: j.Input, Started: j.Start, LastLine: j.LastLine}
	}
	return rows
}

// WriteStatus writes the SIGUSR1 report to w: one line of counters, then
// the running-jobs table (jobtable.WriteTable, as the stall watchdog writes
// it), then, with an executor that is a StatusWriter, its own processes
// (ration run --worker: the workers). The report goes out in one Write
// call.
func (r *Runner) WriteStatus(w io.Writer) error {
	rows := r.Rows()
	st := r.PoolStats()
	now := time.Now()
	var b bytes.Buffer
	fmt.Fprintf(&b, "ration: %d running, %d done, %d failed, %d stopped; pool size %d, busy %d, completed %d\n",
		len(rows), r.succeeded.Load(), r.failed.Load(), r.killed.Load(), st.Size, st.Busy, st.Completed)
	_ = jobtable.WriteTable(&b, rows, now) // a bytes.Buffer does not fail
	if sw, ok := r.exec.(StatusWriter); ok {
		_ = sw.WriteStatus(&b, now)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("runner: write status: %w", err)
	}
	return nil
}

func (r *Runner) setErr(err error) {
	r.firstErr.CompareAndSwap(nil, &err)
}

// wakeLocked wakes the jobs waiting to start (waitUntil) and for room
// (waitForRoom).
func (r *Runner) wakeLocked() {
	close(r.wake)
	r.wake = make(chan struct{})
	r.reruns.Signal()
}

// halt applies --halt once its condition held.
func (r *Runner) halt() {
	if r.halted.Swap(true) {
		return
	}
	r.stop()
	if r.cfg.Halt.When == HaltNow {
		r.stopJobs(ErrHalted)
	}
}
