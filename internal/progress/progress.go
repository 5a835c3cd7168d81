// Package progress shows how a run is going: on a terminal a one-line bar
// redrawn by a timer (done/total, failed, running, rate, ETA), elsewhere a
// log line every few seconds (a slog record with LogTo, so that a JSON log
// stays JSON).
//
// The bar and the jobs' output share one terminal, so output must go
// through the writers that Wrap returns: under the bar's lock each write
// clears the bar's line, writes the output, and redraws the bar below it.
// No output is ever written onto the bar's line, and the bar never lands
// in the middle of an output line.
//
// A Bar observes a run's events (it is an event.Observer) and counts them;
// drawing happens only on the timer, at least four times a second on a
// terminal, so the bar moves (rate, ETA, elapsed) while no job finishes,
// and a run of a million short jobs does not redraw a million times.
//
// It belongs to the command line: it imports runner, limits and
// runner/event, and no library package may import it.
package progress

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ration-run/ration/runner/event"
)

// Default periods of Options.
const (
	// DefaultInterval is the redraw period of the bar on a terminal: five
	// redraws a second.
	DefaultInterval = 200 * time.Millisecond
	// DefaultLogEvery is the period of the log lines off a terminal.
	DefaultLogEvery = 10 * time.Second
)

// clearLine returns the cursor to the start of the line and erases it.
const clearLine = "\r\x1b[K"

// Options configure a Bar.
type Options struct {
	// Terminal draws the bar in place (carriage return, erase line) on a
	// terminal. Without it the Bar writes a whole log line every LogEvery,
	// for a bar asked for (--bar) where stderr is a file or pipe.
	Terminal bool
	// Total is the number of jobs when known in advance, negative when not
	// (0 counts as known: nothing to do). SetTotal changes it.
	Total int64
	// Interval is the redraw period on a terminal; 0 means DefaultInterval.
	Interval time.Duration
	// LogEvery is the period of log lines; 0 means DefaultLogEvery.
	LogEvery time.Duration
	// Width is the terminal's width in columns. 0 reads it before each
	// redraw from the writer, when that is a terminal (a resized window
	// gets lines that fit it), and sets no limit on other writers.
	Width int
}

// Bar draws a run's progress on one writer. Its methods are safe for
// concurrent use; a nil *Bar does nothing (Wrap returns its argument), so
// a caller without a bar needs no special case.
type Bar struct {
	w        io.Writer
	log      *slog.Logger // off a terminal, log records instead of lines on w
	terminal bool
	period   time.Duration
	start    time.Time

	total atomic.Int64
	// done counts the jobs that ran to their end, failed ones included;
	// jobsStopped and notStarted those the run stopped or never started.
	done, succeeded, failed, skipped, active atomic.Int64
	jobsStopped, notStarted                  atomic.Int64
	width                                    int // Options.Width

	// mu serializes everything written to the terminal: the bar's redraws
	// and the wrapped writers' output.
	mu       sync.Mutex
	drawn    bool // the bar is on screen, on the cursor's line
	midLine  bool // the last output did not end its line: no bar until it does
	finished bool
	// cols is the terminal's width as the last redraw read it: a job's
	// output line redraws the bar without asking the terminal again.
	cols int

	startOnce, stopOnce sync.Once
	stop                chan struct{}
	stopped             chan struct{}
}

// New returns a Bar drawing on w. It draws nothing until Start.
func New(w io.Writer, o Options) *Bar {
	b := &Bar{w: w, terminal: o.Terminal, width: o.Width, start: time.Now(), stop: make(chan struct{}), stopped: make(chan struct{})}
	b.period = o.LogEvery
	if b.period <= 0 {
		b.period = DefaultLogEvery
	}
	if o.Terminal {
		b.period = o.Interval
		if b.period <= 0 {
			b.period = DefaultInterval
		}
	}
	b.total.Store(o.Total)
	b.cols = b.columns()
	return b
}

// LogTo makes the Bar log its lines as records of l (msg the line, event
// "progress", and the counts as attributes) where it would write them to
// its writer off a terminal: for a JSON log, which a plain line would
// break. On a terminal it changes nothing. Call it before Start.
func (b *Bar) LogTo(l *slog.Logger) {
	if b != nil {
		b.log = l
	}
}

// SetTotal sets the number of jobs (negative: unknown), for a total that is
// known only once the input has been counted.
func (b *Bar) SetTotal(n int64) {
	if b != nil {
		b.total.Store(n)
	}
}

// Observe counts the event. It never writes and never waits for the
// terminal, so a slow terminal cannot slow the jobs that report.
func (b *Bar) Observe(e event.Event) {
	if b == nil {
		return
	}
	switch e.Kind {
	case event.JobStarted:
		if e.Attempt <= 1 {
			b.active.Add(1)
		}
	case event.JobFinished:
		if e.Outcome != event.NotStarted {
			b.active.Add(-1)
		}
		// As the run's summary counts them: a job the run stopped, or
		// never started, has not finished and has not failed.
		switch e.Outcome {
		case event.Stopped:
			b.jobsStopped.Add(1)
		case event.NotStarted:
			b.notStarted.Add(1)
		case event.Succeeded:
			b.done.Add(1)
			b.succeeded.Add(1)
		default:
			b.done.Add(1)
			b.failed.Add(1)
		}
	case event.JobSkipped:
		b.skipped.Add(1)
	}
}

// Start starts the timer that redraws the bar (or writes the log lines).
// Calls after the first do nothing.
func (b *Bar) Start() {
	if b == nil {
		return
	}
	b.startOnce.Do(func() {
		go b.loop()
	})
}

func (b *Bar) loop() {
	defer close(b.stopped)
	t := time.NewTicker(b.period)
	defer t.Stop()
	if b.terminal {
		b.draw()
	}
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.draw()
		}
	}
}

// Finish stops the timer and writes the final state: the bar, left on its
// own line, or a last log line. After Finish the wrapped writers write
// straight through. Finish may be called more than once; only the first
// call writes.
func (b *Bar) Finish() {
	if b == nil {
		return
	}
	b.stopOnce.Do(func() {
		close(b.stop)
		b.startOnce.Do(func() { close(b.stopped) }) // never started
		<-b.stopped
		b.mu.Lock()
		defer b.mu.Unlock()
		line := b.line(time.Now(), b.columns(), true)
		if b.terminal {
			prefix := clearLine
			if b.midLine {
				prefix = "\n" // keep the unfinished output line
			}
			_, _ = io.WriteString(b.w, prefix+line+"\n")
		} else {
			b.logLine(line)
		}
		b.finished, b.drawn = true, false
	})
}

// draw redraws the bar, or writes a log line, now.
func (b *Bar) draw() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished || b.midLine {
		return
	}
	b.cols = b.columns()
	line := b.line(time.Now(), b.cols, false)
	if !b.terminal {
		b.logLine(line)
		return
	}
	_, _ = io.WriteString(b.w, clearLine+line)
	b.drawn = true
}

// logLine writes line off a terminal: as a record with LogTo, else as a
// line.
func (b *Bar) logLine(line string) {
	if b.log == nil {
		_, _ = io.WriteString(b.w, line+"\n")
		return
	}
	attrs := []any{"event", "progress", "done", b.done.Load(), "failed", b.failed.Load(), "running", max(b.active.Load(), 0)}
	if total := b.total.Load(); total >= 0 {
		attrs = append(attrs, "total", total-b.skipped.Load())
	}
	if s := b.skipped.Load(); s > 0 {
		attrs = append(attrs, "skipped", s)
	}
	if s := b.jobsStopped.Load(); s > 0 {
		attrs = append(attrs, "stopped", s)
	}
	if s := b.notStarted.Load(); s > 0 {
		attrs = append(attrs, "not_started", s)
	}
	b.log.Info(strings.TrimPrefix(line, "ration: "), attrs...)
}

// Wrap returns a writer through which output to the bar's terminal must
// go. Each Write, under the bar's lock, erases the bar, writes p, and
// redraws the bar if p ended its line (otherwise the bar waits for the
// line's end, so it never lands in the middle of it). Wrap returns w
// itself when the Bar is nil or not drawing on a terminal, and when w is
// a file that is not a character device (output redirected to a file or
// pipe never meets the bar). The writer wrapping a terminal file has its
// Fd method, so that a logger writing through it still sees a terminal.
func (b *Bar) Wrap(w io.Writer) io.Writer {
	if b == nil || !b.terminal {
		return w
	}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice == 0 {
			return w
		}
		return &wrappedFile{wrapped{b: b, w: w}, f}
	}
	return &wrapped{b: b, w: w}
}

type wrapped struct {
	b *Bar
	w io.Writer
}

// wrappedFile is a wrapped terminal. Its Fd lets whoever writes through
// it see the terminal (a logger choosing its format, golang.org/x/term);
// written to directly, the fd would bypass the bar.
type wrappedFile struct {
	wrapped
	f *os.File
}

// Fd returns the terminal's file descriptor.
func (o *wrappedFile) Fd() uintptr { return o.f.Fd() }

func (o *wrapped) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	b := o.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		if _, err := io.WriteString(b.w, clearLine); err != nil {
			b.drawn = false
			return o.w.Write(p)
		}
		b.drawn = false
	}
	n, err := o.w.Write(p)
	if n > 0 {
		b.midLine = p[n-1] != '\n'
	}
	if !b.midLine && !b.finished {
		_, _ = io.WriteString(b.w, clearLine+b.line(time.Now(), b.cols, false))
		b.drawn = true
	}
	return n, err
}
