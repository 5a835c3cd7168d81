// Package runner runs a command once per input, in parallel, the way GNU
// parallel and xargs -P do, within a job count decided elsewhere (package
// limits), and never loses track of a job: every job that starts ends with
// one event, one joblog line (unless the run itself stopped it) and one
// count in the Summary, even when the run is interrupted.
//
// Inputs are pulled lazily from an input.Seq through a bounded pool, so the
// first jobs start before the input ends and memory stays flat whatever the
// input's length. Each job's argv comes from a template.Template; each
// attempt runs through an Executor: by default one process per attempt, in
// its own process group (ProcessExecutor), or a task on a long-lived worker
// process (WorkerExecutor).
//
// # Out of memory
//
// With Config.OOMKills, an attempt killed by SIGKILL while the memory
// cgroup's oom_kill counter rose is OOM-killed (event.CauseOOM). The job
// gets one more attempt that does not count against Retries, and that
// attempt waits until fewer jobs than the pool size run beside it: an
// observer that lowers the size on the JobRetried event (adapt.Controller
// with HalveOnJobOOM, resizing through Resize) makes the retry run at the
// lower concurrency.
//
// # Stopping
//
// Drain stops starting jobs at once (inputs already pulled do not start),
// lets the running jobs finish for Config.TermTimeout, then stops them
// (SIGTERM to their process groups, SIGKILL after Config.Grace). Kill stops
// them at once with SIGKILL. Canceling Run's context is like Drain with no
// wait. Jobs the run stopped are not written to the joblog, so --resume runs
// them again; they count as Killed, not Failed.
//
// # Events
//
// The runner emits one event.JobStarted per attempt, event.JobRetried
// between attempts, exactly one event.JobFinished per job pulled from the
// input (Outcome NotStarted for pulled jobs that never started,
// Quarantined for a job its executor set aside), event.JobSkipped and
// event.PoolResized to Config.Observer, never while holding a lock. So
// started = succeeded + failed + quarantined + running holds for the
// observers (runner/metrics) whatever the executor.
package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/pool"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/input"
	"github.com/ration-run/ration/runner/internal/oomkill"
	"github.com/ration-run/ration/runner/joblog"
	"github.com/ration-run/ration/runner/template"
	"github.com/ration-run/ration/runner/watchdog"
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
	// was OOM-killed.
	ErrOOMKilled = errors.New("OOM-killed (SIGKILL with a rise of the memory cgroup's oom_kill counter)")
	// ErrInput is wrapped by Run's error when the input could not be read
	// to its end; the jobs already started were run and recorded.
	ErrInput = errors.New("input error")
)

// Config is everything a run needs. The zero value of each field is a
// usable default unless its comment says otherwise.
type Config struct {
	// Command is the command template (required); see package template.
	Command []string
	// Shell runs the command through sh -c with quoted substitutions.
	Shell bool
	// Input yields the inputs; nil means none.
	Input input.Seq

	// Jobs is the number of jobs run at once; <= 0 asks limits.Decide
	// with default options. JobsReason says why, for the summary.
	Jobs       int
	JobsReason string

	// Timeout stops an attempt that runs longer (0: no limit).
	Timeout time.Duration
	// TermTimeout is how long Drain lets running jobs finish before
	// stopping them (0: stop them at once).
	TermTimeout time.Duration
	// Grace is the time between SIGTERM and SIGKILL when a job is stopped
	// (0: DefaultGrace).
	Grace time.Duration
	// Retries is the number of attempts a failing job gets in all, as in
	// GNU parallel (0 and 1: one attempt). Only the last attempt's output is
	// printed and logged.
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
	// output waits for the jobs before it, within a window of Jobs+1 jobs.
	KeepOrder bool
	// LineBuffer prints output line by line as jobs write it; it cannot be
	// combined with KeepOrder.
	LineBuffer bool

	// Joblog is the path of a GNU parallel joblog to write ("" for none).
	Joblog string
	// Resume skips the jobs the joblog records (as ended, whatever their
	// status); ResumeFailed skips only those recorded as succeeded. Both
	// append to the joblog and need Joblog.
	Resume, ResumeFailed bool
	// Shard restricts the run to one shard of the input.
	Shard Shard

	// Observer receives the run's events (nil: none).
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
	// Executor runs the attempts (nil: a ProcessExecutor).
	Executor Executor
	// OOMKills, when set, reads the oom_kill counter of the memory cgroup
	// the jobs run in (cgroup.OOMKills of ration's own memory cgroup). An
	// attempt killed by SIGKILL while the counter rose was OOM-killed
	// (event.CauseOOM): the job is retried once more without counting
	// against Retries, and that retry waits until fewer than the pool
	// size of other jobs run, so it runs at the concurrency an observer
	// (adapt.Controller with HalveOnJobOOM) lowered on the JobRetried
	// event. Nil: no OOM classification. A failing read counts as unknown.
	// It is called from several goroutines, at most about every 50 ms as
	// jobs start plus a few times after each SIGKILL.
	OOMKills func() (int64, error)
	// SpillBytes is the output of one stream of one job held in memory
	// before it goes to a temporary file in TempDir (0: DefaultSpill;
	// TempDir "": os.TempDir()).
	SpillBytes int
	TempDir    string
}

// RunningJob describes a job that is running now.
type RunningJob struct {
	Slot     int
	PID      int // 0 until the process started
	Seq      int64
	Input    string
	Attempt  int
	Start    time.Time
	LastLine string // the last line the job wrote, "" if none
}

// Summary is what a run did. Succeeded+Failed+Killed+NotStarted is the
// number of jobs pulled from the input (in this shard, not skipped).
type Summary struct {
	Succeeded int64 // ended with status 0
	Failed    int64 // ended otherwise on their own, or timed out
	Killed    int64 // stopped by the run (interrupt, --halt now)
	// Quarantined counts the failed jobs (included in Failed) that an
	// executor set aside because they broke too many workers.
	Quarantined int64
	// OOMRetried counts the jobs retried because they were OOM-killed.
	OOMRetried int64
	NotStarted int64 // pulled from the input, never started
	Skipped    int64 // recorded in the joblog (--resume)

	Wall       time.Duration
	Jobs       int    // jobs at once, at the start
	JobsReason string // why
	// PeakRSSMax and PeakRSSP95 are the largest and the 95th percentile
	// (estimated within 25%) of the jobs' peak RSS in bytes.
	PeakRSSMax, PeakRSSP95 int64

	Interrupted bool // Drain, Kill or the context stopped the run
	Halted      bool // --halt stopped the run
	// InputDone reports that the input was read to its end.
	InputDone bool
}

// String returns the one-line summary printed at the end of a run.
func (s Summary) String() string {
	line := fmt.Sprintf("%d done, %d failed", s.Succeeded, s.Failed)
	if s.Quarantined > 0 {
		line += fmt.Sprintf(" (%d quarantined)", s.Quarantined)
	}
	if s.OOMRetried > 0 {
		line += fmt.Sprintf(", %d retried after an OOM kill", s.OOMRetried)
	}
	if s.Killed > 0 {
		line += fmt.Sprintf(", %d killed", s.Killed)
	}
	if s.NotStarted > 0 || !s.InputDone {
		line += fmt.Sprintf(", %d not started", s.NotStarted)
		if !s.InputDone {
			line += " (and the unread input)"
		}
	}
	line += fmt.Sprintf(", %d skipped in %s; %d jobs", s.Skipped, s.Wall.Round(time.Millisecond), s.Jobs)
	if s.JobsReason != "" {
		line += " (" + s.JobsReason + ")"
	}
	if s.PeakRSSMax > 0 {
		line += fmt.Sprintf("; peak RSS max %s, p95 %s", limits.FormatSize(s.PeakRSSMax), limits.FormatSize(s.PeakRSSP95))
	}
	return line
}

// Runner runs one Config. Its methods are safe for concurrent use; Run may
// be called once.
type Runner struct {
	cfg  Config
	tmpl *template.Template
	exec Executor
	log  *slog.Logger
	out  *sharedOut

	mu        sync.Mutex
	running   map[int64]*runningJob
	pool      *pool.Pool
	size      int
	terminate context.CancelCauseFunc // cancels every running job; nil outside Run
	wake      chan struct{}           // closed and replaced when a job ends or the size changes

	ran         atomic.Bool
	stopping    atomic.Bool // start no more jobs
	interrupted atomic.Bool
	halted      atomic.Bool
	drainOnce   sync.Once
	killOnce    sync.Once
	drainCh     chan struct{}
	killCh      chan struct{}

	succeeded, failed, killed, notStarted, skipped atomic.Int64
	quarantined, oomRetried                        atomic.Int64
	rss                                            rssHist
	firstErr                                       atomic.Pointer[error]

	oomMu   sync.Mutex // guards oomSeen and oomAt, never held across Config.OOMKills
	oomSeen int64      // the OOM-kill count last read
	oomAt   time.Time  // when it was read; zero: never
}

type runningJob struct {
	RunningJob
	out     *output
	started bool // the executor reported the current attempt started
	waiting bool // waiting for room to retry after an OOM kill
}

// New checks cfg and returns a Runner. Errors wrap ErrUsage.
func New(cfg Config) (*Runner, error) {
	tmpl, err := template.Parse(cfg.Command, cfg.Shell)
	if err != nil {
		return nil, fmt.Errorf("%w: no command given", ErrUsage)
	}
	switch {
	case cfg.KeepOrder && cfg.LineBuffer:
		return nil, fmt.Errorf("%w: --line-buffer and --keep-order cannot be combined", ErrUsage)
	case (cfg.Resume || cfg.ResumeFailed) && cfg.Joblog == "":
		return nil, fmt.Errorf("%w: --resume and --resume-failed need --joblog", ErrUsage)
	case cfg.Timeout < 0 || cfg.TermTimeout < 0 || cfg.Grace < 0 || cfg.Retries < 0:
		return nil, fmt.Errorf("%w: negative duration or retries", ErrUsage)
	case cfg.Shard.Count < 0 || (cfg.Shard.Count > 0 && (cfg.Shard.Index < 0 || cfg.Shard.Index >= cfg.Shard.Count)):
		return nil, fmt.Errorf("%w: shard %d/%d", ErrUsage, cfg.Shard.Index, cfg.Shard.Count)
	}
	if cfg.Jobs <= 0 {
		d, err := limits.Decide(limits.Options{})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		cfg.Jobs, cfg.JobsReason = d.Jobs, d.Reason
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	if cfg.SpillBytes <= 0 {
		cfg.SpillBytes = DefaultSpill
	}
	if cfg.Grace == 0 {
		cfg.Grace = DefaultGrace
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
	}
	if r.exec == nil {
		r.exec = &ProcessExecutor{}
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r, nil
}

func (r *Runner) emit(e event.Event) {
	if r.cfg.Observer != nil {
		if e.Time.IsZero() {
			e.Time = time.Now()
		}
		r.cfg.Observer.Observe(e)
	}
}

// Drain stops starting jobs at once, lets the running ones finish for
// Config.TermTimeout and then stops them. It returns at once; Run returns
// when the last job ended. Calling it again does nothing (call Kill).
func (r *Runner) Drain() {
	r.drainOnce.Do(func() {
		r.interrupted.Store(true)
		r.stopping.Store(true)
		close(r.drainCh)
	})
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
// event.PoolResized with reason. Shrinking lets running jobs finish.
func (r *Runner) Resize(n int, reason string) {
	n = max(n, 1)
	r.mu.Lock()
	r.size = n
	p := r.pool
	r.wakeLocked()
	r.mu.Unlock()
	if p != nil {
		p.Resize(n)
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

// Rows returns the running jobs as the stall watchdog's rows, so that the
// SIGUSR1 report and the stall report show the same table.
func (r *Runner) Rows() []watchdog.Row {
	jobs := r.Running()
	rows := make([]watchdog.Row, len(jobs))
	for i, j := range jobs {
		rows[i] = watchdog.Row{Slot: j.Slot, PID: j.PID, Seq: j.Seq, Input: j.Input, Started: j.Start, LastLine: j.LastLine}
	}
	return rows
}

// WriteStatus writes the SIGUSR1 report to w: one line of counters, then
// the running-jobs table as the stall watchdog writes it
// (watchdog.WriteTable). The report goes out in one Write call.
func (r *Runner) WriteStatus(w io.Writer) error {
	rows := r.Rows()
	st := r.PoolStats()
	var b bytes.Buffer
	fmt.Fprintf(&b, "ration: %d running, %d done, %d failed, %d killed; pool size %d, busy %d, completed %d\n",
		len(rows), r.succeeded.Load(), r.failed.Load(), r.killed.Load(), st.Size, st.Busy, st.Completed)
	_ = watchdog.WriteTable(&b, rows, time.Now()) // a bytes.Buffer does not fail
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("runner: write status: %w", err)
	}
	return nil
}

// item is one input on its way to a job.
type item struct {
	seq   int64
	input string
	read  time.Time
}

// jobResult is what a job hands back to Run's loop.
type jobResult struct {
	out *output // KeepOrder: to print in order; nil when printed
}

func (r *Runner) setErr(err error) {
	r.firstErr.CompareAndSwap(nil, &err)
}

// Run runs the jobs and returns when every started job has ended. The
// error is non-nil when the input could not be read to its end (wrapping
// ErrInput), the joblog could not be read or written, or output could not
// be written; the Summary is valid in every case. Run may be called once.
func (r *Runner) Run(ctx context.Context) (Summary, error) {
	if !r.ran.CompareAndSwap(false, true) {
		return Summary{}, errors.New("runner: Run called twice")
	}
	start := time.Now()
	sum := Summary{Jobs: r.cfg.Jobs, JobsReason: r.cfg.JobsReason}
	var rec *joblog.Record
	if r.cfg.Resume || r.cfg.ResumeFailed {
		var err error
		if rec, err = joblog.Load(r.cfg.Joblog); err != nil {
			return sum, err
		}
		if rec.Malformed > 0 {
			r.log.Warn("joblog has malformed lines; their jobs run again", "joblog", r.cfg.Joblog, "lines", rec.Malformed)
		}
	}
	var jl *joblog.Writer
	if r.cfg.Joblog != "" && !r.cfg.DryRun {
		var err error
		if jl, err = joblog.Create(r.cfg.Joblog, r.cfg.Resume || r.cfg.ResumeFailed); err != nil {
			return sum, err
		}
		defer jl.Close()
	}
	var inputDone bool
	var inputErr error
	items := r.items(rec, &inputDone, &inputErr)

	if r.cfg.DryRun {
		for it := range items {
			r.succeeded.Add(1)
			line := ""
			if r.cfg.DryRunLine != nil {
				line = r.cfg.DryRunLine(it.input, it.seq)
			} else {
				line = r.tmpl.Display(it.input, it.seq, 1)
			}
			if _, err := fmt.Fprintln(r.cfg.Stdout, line); err != nil {
				r.setErr(fmt.Errorf("write output: %w", err))
				break
			}
		}
	} else {
		r.runPool(ctx, items, jl)
	}

	sum.Succeeded, sum.Failed, sum.Killed = r.succeeded.Load(), r.failed.Load(), r.killed.Load()
	sum.NotStarted, sum.Skipped = r.notStarted.Load(), r.skipped.Load()
	sum.Quarantined, sum.OOMRetried = r.quarantined.Load(), r.oomRetried.Load()
	sum.PeakRSSMax, sum.PeakRSSP95 = r.rss.max(), r.rss.quantile(0.95)
	sum.Interrupted = r.interrupted.Load() || ctx.Err() != nil
	sum.Halted = r.halted.Load()
	sum.InputDone = inputDone
	sum.Wall = time.Since(start)
	var errs []error
	if inputErr != nil {
		errs = append(errs, fmt.Errorf("%w: %w", ErrInput, inputErr))
	}
	if p := r.firstErr.Load(); p != nil {
		errs = append(errs, *p)
	}
	return sum, errors.Join(errs...)
}

// items numbers the inputs, keeps this shard's, skips the recorded ones,
// and stops at the first input error or once the run is stopping. It runs
// on Run's goroutine (the pool pulls on the consumer's goroutine).
func (r *Runner) items(rec *joblog.Record, done *bool, inErr *error) iter.Seq[item] {
	return func(yield func(item) bool) {
		if r.cfg.Input == nil {
			*done = true
			return
		}
		var seq int64
		for in, err := range r.cfg.Input {
			if err != nil {
				// Stop reading; the jobs already pulled still run.
				*inErr = err
				return
			}
			seq++
			if !r.cfg.Shard.Contains(in) {
				continue
			}
			if rec != nil && (rec.Succeeded(seq) || (r.cfg.Resume && rec.Ended(seq))) {
				r.skipped.Add(1)
				r.emit(event.Event{Kind: event.JobSkipped, Seq: seq, Input: in})
				continue
			}
			if r.stopping.Load() {
				return
			}
			if !yield(item{seq: seq, input: in, read: time.Now()}) {
				return
			}
		}
		*done = true
	}
}

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

	// Drain's clock: stop the running jobs when TermTimeout runs out.
	runDone := make(chan struct{})
	defer close(runDone)
	go func() {
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
	}()

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
		if res.Err != nil {
			if errors.Is(res.Err, pool.ErrNotStarted) || errors.Is(res.Err, pool.ErrClosed) {
				r.jobNotStarted(res.Input)
				continue
			}
			// A panic in the runner's own code: report it, keep the run.
			r.setErr(fmt.Errorf("job %d: %w", res.Input.seq, res.Err))
			continue
		}
		if o := res.Value.out; o != nil {
			if err := o.flush(); err != nil {
				r.setErr(fmt.Errorf("write output: %w", err))
			}
		}
	}
}

// runJob runs one job to its end: attempts, retries, output, joblog,
// events, halt.
func (r *Runner) runJob(ctx context.Context, it item, jl *joblog.Writer) jobResult {
	if r.stopping.Load() || ctx.Err() != nil {
		r.jobNotStarted(it)
		return jobResult{}
	}
	slot := pool.Slot(ctx)
	out := newOutput(r.out, r.cfg.LineBuffer, r.cfg.SpillBytes, r.cfg.TempDir)
	rj := &runningJob{RunningJob: RunningJob{Slot: slot, Seq: it.seq, Input: it.input, Start: time.Now()}, out: out}
	r.mu.Lock()
	r.running[it.seq] = rj
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.running, it.seq)
		r.wakeLocked()
		r.mu.Unlock()
	}()

	argv := r.tmpl.Expand(it.input, it.seq, slot)
	attempts := max(r.cfg.Retries, 1)
	var (
		res      AttemptResult
		cause    event.Cause
		outcome  event.Outcome
		byRun    bool // stopped by the run itself, not by the job or its timeout
		n        int
		oomRetry bool // the OOM retry was granted (it does not count against Retries)
	)
	for n = 1; ; n++ {
		attempt := n
		var reported atomic.Bool
		startedOn := func(on, pid int) {
			now := time.Now()
			first := !reported.Swap(true)
			r.mu.Lock()
			rj.PID, rj.Slot = pid, on
			if first {
				rj.Attempt, rj.Start, rj.started = attempt, now, true
			}
			r.mu.Unlock()
			if first {
				r.emit(event.Event{Kind: event.JobStarted, Time: now, Seq: it.seq, Slot: on, PID: pid,
					Input: it.input, Attempt: attempt, QueueWait: now.Sub(it.read)})
			}
		}
		started := func(pid int) { startedOn(slot, pid) }
		if n > 1 && cause == event.CauseOOM && !r.waitForRoom(ctx, rj) {
			// The run stopped while the retry waited: it counts as an
			// attempt the run stopped, so every JobRetried is followed by a
			// JobStarted, as observers (metrics) expect.
			started(0)
			res = AttemptResult{Start: time.Now(), ExitCode: -1, Stopped: true}
			byRun, outcome = true, event.Failed
			break
		}
		actx, cancel := ctx, context.CancelFunc(func() {})
		if r.cfg.Timeout > 0 {
			actx, cancel = context.WithTimeoutCause(ctx, r.cfg.Timeout, ErrTimeout)
		}
		a := &Attempt{
			Seq: it.seq, Slot: slot, Input: it.input, Attempt: n, Argv: argv,
			Stdout: streamWriter{o: out}, Stderr: streamWriter{o: out, stderr: true},
			Grace: r.cfg.Grace, Kill: r.killCh, Drain: r.drainCh, Started: started, StartedOn: startedOn,
		}
		if r.cfg.OmitErrorLines {
			a.Diag = io.Discard
		}
		base := r.oomBase()
		res = r.exec.Exec(actx, a)
		timedOut := res.Stopped && errors.Is(context.Cause(actx), ErrTimeout) && ctx.Err() == nil
		cancel()
		if !reported.Load() {
			if n == 1 && res.NotStarted {
				r.jobNotStarted(it)
				out.discard()
				return jobResult{}
			}
			// A later attempt that never started, or an executor that did
			// not report the start: report it now, so that events stay
			// balanced (one JobStarted per attempt).
			started(res.PID)
			if res.NotStarted {
				res.Stopped = true
			}
		}
		byRun = res.Stopped && !timedOut
		oom := base >= 0 && res.Signal == int(syscall.SIGKILL) && !res.Stopped && res.Cause == event.CauseNone && oomkill.Rose(r.oomKills, base)
		cause = classify(res, timedOut, oom)
		ok := res.ExitCode == 0 && res.Signal == 0 && res.Err == nil && !timedOut && !byRun && !res.Quarantined
		outcome = event.Succeeded
		switch {
		case res.Quarantined:
			outcome = event.Quarantined
		case !ok:
			outcome = event.Failed
		}
		if ok || byRun || res.Quarantined || r.stopping.Load() {
			break
		}
		free := cause == event.CauseOOM && !oomRetry
		if !free && n-b2i(oomRetry) >= attempts {
			break
		}
		if free {
			oomRetry = true
			r.oomRetried.Add(1)
		}
		r.mu.Lock()
		rj.started = false
		r.mu.Unlock()
		r.emit(event.Event{Kind: event.JobRetried, Seq: it.seq, Slot: r.slotOf(rj), PID: res.PID, Input: it.input, Attempt: n,
			Duration: res.Duration, ExitCode: res.ExitCode, Signal: res.Signal, PeakRSS: res.PeakRSS, Cause: cause, Err: res.Err})
		out.discard()
	}
	if byRun {
		cause = event.CauseSignal
	}

	received := out.bytesReceived()
	var result jobResult
	if r.cfg.KeepOrder {
		result.out = out
	} else if err := out.flush(); err != nil {
		r.setErr(fmt.Errorf("write output: %w", err))
	}
	if jl != nil && !byRun {
		sig := res.Signal
		if res.Stopped && sig == 0 {
			sig = 15 // timed out but exited on its own after SIGTERM
		}
		e := joblog.Entry{Seq: it.seq, Start: res.Start, Runtime: res.Duration, Receive: received,
			Exitval: res.ExitCode, Signal: sig, Command: r.tmpl.Display(it.input, it.seq, slot)}
		if err := jl.Write(e); err != nil {
			r.setErr(err)
			r.stopping.Store(true)
		}
	}
	r.rss.add(res.PeakRSS)
	switch {
	case byRun:
		r.killed.Add(1)
	case outcome == event.Succeeded:
		r.succeeded.Add(1)
	default:
		if outcome == event.Quarantined {
			r.quarantined.Add(1)
		}
		r.failed.Add(1)
	}
	var err error
	switch {
	case byRun:
		err = context.Cause(ctx)
		if err == nil {
			err = ErrInterrupted
		}
	case cause == event.CauseTimeout && res.Cause == event.CauseNone:
		err = fmt.Errorf("%w after %s", ErrTimeout, r.cfg.Timeout)
	case cause == event.CauseOOM && res.Err == nil:
		err = ErrOOMKilled
	default:
		err = res.Err
	}
	r.emit(event.Event{Kind: event.JobFinished, Seq: it.seq, Slot: r.slotOf(rj), PID: res.PID, Input: it.input, Attempt: n,
		Duration: res.Duration, ExitCode: res.ExitCode, Signal: res.Signal, PeakRSS: res.PeakRSS,
		Outcome: outcome, Cause: cause, Err: err})
	if !byRun && r.cfg.Halt.triggered(r.failed.Load(), r.succeeded.Load()) {
		r.halt()
	}
	return result
}

// slotOf returns the slot a job's events report: the runner's, or the
// executor's own worker slot (Attempt.StartedOn).
func (r *Runner) slotOf(rj *runningJob) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return rj.Slot
}

// jobNotStarted records a pulled job that never started.
func (r *Runner) jobNotStarted(it item) {
	r.notStarted.Add(1)
	r.emit(event.Event{Kind: event.JobFinished, Seq: it.seq, Input: it.input, Outcome: event.NotStarted})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// wakeLocked wakes the jobs waiting for room (waitForRoom).
func (r *Runner) wakeLocked() {
	close(r.wake)
	r.wake = make(chan struct{})
}

// waitForRoom waits until fewer than the pool size of other jobs run, so
// that a job retried after an OOM kill runs at the concurrency lowered in
// reaction to it, not beside as many jobs as the one that was killed. It
// returns false when the run stops first.
func (r *Runner) waitForRoom(ctx context.Context, rj *runningJob) bool {
	// Halt sets stopping without a channel; the tick notices it.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	rj.waiting = true
	defer func() { rj.waiting = false }()
	for {
		if r.stopping.Load() || ctx.Err() != nil {
			return false
		}
		others := 0
		for _, j := range r.running {
			if j != rj && !j.waiting {
				others++
			}
		}
		if others < r.size {
			return true
		}
		wake := r.wake
		r.mu.Unlock()
		select {
		case <-wake:
		case <-tick.C:
		case <-ctx.Done():
		case <-r.drainCh:
		}
		r.mu.Lock()
	}
}

// oomBaseMaxAge is how old an OOM-kill count may be to serve as a job's
// base. Reading the count is three system calls; with thousands of short
// jobs a second, re-reading it for each one was a tenth of ration's own CPU
// time. The price: a kill in the last oomBaseMaxAge before a job started
// that no job's end accounted for could make that job's later SIGKILL by
// someone else look like an OOM kill (as a kill of another process while
// the job ran always could).
const oomBaseMaxAge = 50 * time.Millisecond

// oomBase is the OOM-kill count to compare a job's end against: a reading
// at most oomBaseMaxAge old, -1 when unknown.
func (r *Runner) oomBase() int64 {
	if r.cfg.OOMKills == nil {
		return -1
	}
	r.oomMu.Lock()
	n, at := r.oomSeen, r.oomAt
	r.oomMu.Unlock()
	if !at.IsZero() && time.Since(at) < oomBaseMaxAge {
		return n
	}
	return r.oomKills()
}

// oomKills reads Config.OOMKills: -1 when unknown. Every reading, also
// the re-reads after a SIGKILL, refreshes the one oomBase hands out.
func (r *Runner) oomKills() int64 {
	if r.cfg.OOMKills == nil {
		return -1
	}
	now := time.Now()
	n, err := r.cfg.OOMKills()
	if err != nil {
		n = -1
	}
	r.oomMu.Lock()
	if now.After(r.oomAt) {
		r.oomSeen, r.oomAt = n, now
	}
	r.oomMu.Unlock()
	return n
}

// classify names why an attempt ended abnormally, CauseNone when it
// exited on its own. It is the one place that decides: a timeout first,
// then the executor's own cause (a worker's break), then an OOM kill
// (SIGKILL together with a rise of the cgroup's oom_kill counter, measured
// by the caller), then any other signal.
func classify(res AttemptResult, timedOut, oomKilled bool) event.Cause {
	switch {
	case timedOut:
		return event.CauseTimeout
	case res.Cause != event.CauseNone:
		return res.Cause
	case oomKilled:
		return event.CauseOOM
	case res.Signal != 0:
		return event.CauseSignal
	}
	return event.CauseNone
}

// halt applies --halt once its condition held.
func (r *Runner) halt() {
	if r.halted.Swap(true) {
		return
	}
	r.stopping.Store(true)
	if r.cfg.Halt.When == HaltNow {
		r.stopJobs(ErrHalted)
	}
}
