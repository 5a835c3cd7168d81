// Package watchdog notices when a run stops making progress and says what
// every running job and ration itself are doing at that moment.
//
// Two checks run on a ticker:
//
//   - Stall (--stall-timeout): when no job has finished for the timeout
//     while jobs were running, the watchdog reports the table of running
//     jobs (slot, pid, seq, running time, input, last output line) and the
//     stacks of all of ration's goroutines, once per stall. The stall clock
//     starts at the later of the last JobFinished and the start of the
//     oldest running job, so an idle stretch with nothing running (input
//     arriving slowly) is never a stall. After a report, the next report
//     needs some job to finish first.
//   - Slow job (--slow-factor): a running job whose running time exceeds
//     the factor times the median run time of the last 1000 succeeded jobs
//     (and Options.MinSlow, 1s by default) gets one warning. Failed jobs are left out of the median because
//     jobs that fail at once on bad input would make every healthy job
//     look slow. No warning is given before MinFinished jobs succeeded.
//
// WriteTable formats the table the same way for SIGUSR1.
//
// It belongs to the command line: it imports runner/event and
// internal/jobtable of this module, and no library package may import it.
package watchdog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"time"

	"github.com/ration-run/ration/internal/jobtable"
	"github.com/ration-run/ration/runner/event"
)

// Row is one running job as the runner sees it (event.Row: the runner
// produces rows without depending on the watchdog).
type Row = event.Row

// DefaultMinSlow is Options.MinSlow's default.
const DefaultMinSlow = time.Second

// medianWindow is how many succeeded jobs the median is taken over: enough
// to be stable, little enough to sort on every tick.
const medianWindow = 1000

// Options configure New.
type Options struct {
	// Running returns the jobs running now. It is called from the
	// watchdog's goroutine, never while the watchdog holds a lock.
	// Required.
	Running func() []Row
	// StallTimeout is how long no job may finish while jobs run before a
	// stall is reported; 0 disables the stall check.
	StallTimeout time.Duration
	// SlowFactor is the multiple of the median job time above which a
	// running job is reported as slow; 0 disables the slow-job check.
	SlowFactor float64
	// MinFinished is how many jobs must have succeeded before the median
	// is trusted; 0 means 5.
	MinFinished int
	// MinSlow is the running time below which no job is reported as slow,
	// whatever the median: with jobs of a few milliseconds, scheduling
	// jitter alone makes some run five times the median, and a warning
	// about a 30ms job helps nobody. 0 means DefaultMinSlow.
	MinSlow time.Duration
	// Interval is how often the checks run; 0 means a tenth of
	// StallTimeout, between 10ms and 1s.
	Interval time.Duration
	// Logger receives the stall warning and the slow-job warnings. Nil
	// discards them.
	Logger *slog.Logger
	// Out, when not nil, receives the stall report as a block of text
	// (table and goroutine stacks, one Write call), and Logger only a
	// one-line warning. When nil, the table and stacks go into the
	// Logger's record as attributes "jobs" and "goroutines", which suits
	// JSON logs.
	Out io.Writer
}

// Watchdog runs the checks. It is an event.Observer: give it the run's
// events. Create it with New.
type Watchdog struct {
	opts Options
	log  *slog.Logger

	mu         sync.Mutex
	lastFinish time.Time       // last JobFinished, or when the watchdog started
	reported   bool            // a stall was reported and no job finished since
	warned     map[int64]bool  // jobs already warned about as slow
	durations  []time.Duration // ring of the last medianWindow succeeded jobs
	next       int             // next ring slot to overwrite
	succeeded  int             // jobs that succeeded, for MinFinished
	median     time.Duration   // cached median of durations, valid unless dirty
	dirty      bool
}

// New returns a Watchdog. The error reports a nil Running or a negative
// option.
func New(opts Options) (*Watchdog, error) {
	if opts.Running == nil {
		return nil, errors.New("watchdog: Options.Running is nil")
	}
	if opts.StallTimeout < 0 || opts.SlowFactor < 0 || opts.MinFinished < 0 || opts.Interval < 0 || opts.MinSlow < 0 {
		return nil, fmt.Errorf("watchdog: negative option in %+v", opts)
	}
	if opts.MinFinished == 0 {
		opts.MinFinished = 5
	}
	if opts.MinSlow == 0 {
		opts.MinSlow = DefaultMinSlow
	}
	if opts.Interval == 0 {
		opts.Interval = time.Second
		if opts.StallTimeout > 0 {
			opts.Interval = min(max(opts.StallTimeout/10, 10*time.Millisecond), time.Second)
		}
	}
	l := opts.Logger
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return &Watchdog{opts: opts, log: l, lastFinish: time.Now(), warned: map[int64]bool{}}, nil
}

// Observe takes note of finished jobs: a JobFinished restarts the stall
// clock and, for a succeeded job, adds its duration to the median.
func (w *Watchdog) Observe(e event.Event) {
	if e.Kind != event.JobFinished {
		return
	}
	t := e.Time
	if t.IsZero() {
		t = time.Now()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.After(w.lastFinish) {
		w.lastFinish = t
	}
	w.reported = false
	delete(w.warned, e.Seq)
	if e.Outcome != event.Succeeded {
		return
	}
	w.succeeded++
	if len(w.durations) < medianWindow {
		w.durations = append(w.durations, e.Duration)
	} else {
		w.durations[w.next] = e.Duration
		w.next = (w.next + 1) % medianWindow
	}
	w.dirty = true
}

// Run runs the checks every Interval until ctx ends, then returns nil. With
// both checks disabled it returns at once.
func (w *Watchdog) Run(ctx context.Context) error {
	if w.opts.StallTimeout == 0 && w.opts.SlowFactor == 0 {
		return nil
	}
	w.mu.Lock()
	w.lastFinish = time.Now() // the clock starts with the run, not with New
	w.mu.Unlock()
	t := time.NewTicker(w.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			w.check(now)
		}
	}
}

// check runs both checks once.
func (w *Watchdog) check(now time.Time) {
	rows := w.opts.Running()
	if len(rows) == 0 {
		return
	}
	oldest := rows[0].Started
	for _, r := range rows[1:] {
		if r.Started.Before(oldest) {
			oldest = r.Started
		}
	}

	w.mu.Lock()
	stall := false
	var stalledFor time.Duration
	if w.opts.StallTimeout > 0 && !w.reported {
		if later := oldest; later.After(w.lastFinish) {
			stalledFor = now.Sub(later)
		} else {
			stalledFor = now.Sub(w.lastFinish)
		}
		if stalledFor >= w.opts.StallTimeout {
			stall, w.reported = true, true
		}
	}
	var slow []Row
	var median time.Duration
	if w.opts.SlowFactor > 0 && w.succeeded >= w.opts.MinFinished {
		if w.dirty {
			sorted := slices.Clone(w.durations)
			slices.Sort(sorted)
			w.median, w.dirty = sorted[len(sorted)/2], false
		}
		median = w.median
		limit := max(time.Duration(float64(median)*w.opts.SlowFactor), w.opts.MinSlow)
		for _, r := range rows {
			if !w.warned[r.Seq] && now.Sub(r.Started) > limit {
				w.warned[r.Seq] = true
				slow = append(slow, r)
			}
		}
	}
	w.mu.Unlock()

	// Report outside the lock: a blocked writer must not block Observe.
	for _, r := range slow {
		w.log.Warn("slow job", "event", "slow_job", "seq", r.Seq, "slot", r.Slot, "pid", r.PID,
			"running", now.Sub(r.Started).Round(time.Millisecond), "median", median,
			"factor", w.opts.SlowFactor, "input", jobtable.Clip(r.Input, 200), "last_line", jobtable.Clip(r.LastLine, 200))
	}
	if stall {
		w.reportStall(rows, now, stalledFor)
	}
}

func (w *Watchdog) reportStall(rows []Row, now time.Time, stalledFor time.Duration) {
	stalledFor = stalledFor.Round(time.Millisecond)
	var stacks bytes.Buffer
	if err := WriteGoroutines(&stacks); err != nil {
		fmt.Fprintf(&stacks, "(goroutine stacks unavailable: %v)\n", err)
	}
	if w.opts.Out == nil {
		w.log.Warn("stall: no job finished", "event", "stall", "stalled_for", stalledFor, "running_jobs", len(rows),
			"jobs", jobtable.JSONRows(rows, now), "goroutines", stacks.String())
		return
	}
	w.log.Warn("stall: no job finished", "event", "stall", "stalled_for", stalledFor, "running_jobs", len(rows),
		"report", "follows on stderr")
	var b bytes.Buffer
	fmt.Fprintf(&b, "ration: stall: no job finished for %v; %d running:\n", stalledFor, len(rows))
	_ = WriteTable(&b, rows, now) // writes to a buffer do not fail
	fmt.Fprintf(&b, "ration: goroutines of ration (pid %d):\n", os.Getpid())
	b.Write(stacks.Bytes())
	b.WriteString("ration: end of stall report\n")
	if _, err := w.opts.Out.Write(b.Bytes()); err != nil {
		w.log.Warn("stall report not written", "err", err)
	}
}

// WriteGoroutines writes the stacks of all goroutines of this process in
// the format of an unrecovered panic (runtime/pprof's goroutine profile
// with debug=2).
func WriteGoroutines(w io.Writer) error {
	if err := pprof.Lookup("goroutine").WriteTo(w, 2); err != nil {
		return fmt.Errorf("watchdog: goroutine stacks: %w", err)
	}
	return nil
}

// WriteTable writes the running jobs as an aligned table, ordered by slot;
// see jobtable.WriteTable, which it calls.
func WriteTable(w io.Writer, rows []Row, now time.Time) error {
	if err := jobtable.WriteTable(w, rows, now); err != nil {
		return fmt.Errorf("watchdog: %w", err)
	}
	return nil
}
