package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ration-run/ration/runner"
)

// hatchDelay is how long after its jobs were stopped an interrupted run
// may still take to end before ration exits without it (a blocked input
// or output): see SignalHub.
const hatchDelay = 2 * time.Second

// SignalHub receives ration's signals from the start of main to the exit
// of the process, so that no signal ever takes ration's default action
// unannounced: SIGINT, SIGTERM and SIGHUP end ration with a message
// (before a run starts, at once; during a run, see HandleSignals);
// SIGUSR1 never kills it; SIGPIPE turns into an EPIPE error of the write
// that caused it, which the run handles (exit 141 with a message). A
// signal that was ignored when ration started (nohup, a background job
// of a non-interactive shell) stays ignored.
//
// Handling never waits for ration's output or input: actions come first,
// and messages go out through a writer of their own (messages).
type SignalHub struct {
	ch      chan os.Signal
	handler atomic.Pointer[func(os.Signal)]
	stderr  io.Writer
	exit    func(int)
	local   bool // made for one run (in-process tests): Stop at its end
	done    chan struct{}
}

// NewSignalHub starts handling ration's signals; main calls it first.
func NewSignalHub(stderr io.Writer, exit func(int)) *SignalHub {
	h := &SignalHub{ch: make(chan os.Signal, 8), stderr: stderr, exit: exit, done: make(chan struct{})}
	var sigs []os.Signal
	for _, s := range hubSignals() {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	signal.Notify(h.ch, sigs...)
	go h.loop()
	return h
}

func (h *SignalHub) loop() {
	for {
		select {
		case s := <-h.ch:
			if f := h.handler.Load(); f != nil {
				(*f)(s)
				continue
			}
			switch {
			case IsStopSignal(s):
				// Nothing runs yet (or any more): there is nothing to
				// drain or to log.
				fmt.Fprintf(h.stderr, "ration: got %s; exiting (no job was running)\n", SigName(s))
				h.exit(SignalStatus(s))
			case IsQuitSignal(s):
				h.quit(s, nil)
			}
		case <-h.done:
			return
		}
	}
}

// set makes f the handler of every signal; nil restores the one before a
// run.
func (h *SignalHub) Set(f func(os.Signal)) {
	if f == nil {
		h.handler.Store(nil)
		return
	}
	h.handler.Store(&f)
}

// quit ends ration at once on SIGQUIT (Ctrl-\), as a shell's quit ends
// a command and as GNU parallel dies of it: it closes the joblog through
// abandon (nil: no run's), fsyncing what is recorded as the last resort
// does, writes every goroutine's stack as the Go runtime's own SIGQUIT
// does, and exits 128+3. The running jobs die with ration
// (PR_SET_PDEATHSIG), as when it is killed, and --resume runs them again.
// Left to the runtime, SIGQUIT exited 2, which the exit-status table reads
// as "2 jobs failed". Writing never waits more than a second for stderr.
func (h *SignalHub) quit(s os.Signal, abandon func() error) {
	var err error
	what := "quitting"
	if abandon != nil {
		err = abandon()
		what = "quitting at once (the running jobs die with ration; --resume runs them again)"
	}
	m := newMessages()
	m.send(func() {
		fmt.Fprintf(h.stderr, "ration: got %s: %s; its goroutines:\n", SigName(s), what)
		if err != nil {
			fmt.Fprintf(h.stderr, "ration: closing the joblog: %v\n", err)
		}
		_ = pprof.Lookup("goroutine").WriteTo(h.stderr, 2)
	})
	m.flush(time.Second)
	h.exit(SignalStatus(s))
}

// close stops a hub made for one run.
func (h *SignalHub) close() {
	if h.local {
		signal.Stop(h.ch)
		close(h.done)
	}
}

// messages writes ration's messages about signals on a goroutine of its
// own, in order, so that a blocked stderr never delays the handling of a
// signal. flush waits for what was queued, at most d.
type messages struct {
	ch   chan func()
	wg   sync.WaitGroup
	once sync.Once
}

func newMessages() *messages {
	m := &messages{ch: make(chan func(), 32)}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		for f := range m.ch {
			f()
		}
	}()
	return m
}

// send queues f; when 32 messages wait already, f is dropped.
func (m *messages) send(f func()) {
	select {
	case m.ch <- f:
	default:
	}
}

// flush ends the writer once it wrote everything queued, or after d.
func (m *messages) flush(d time.Duration) {
	m.once.Do(func() { close(m.ch) })
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// HandleSignals handles the run's signals until the returned stop is
// called: the first SIGINT, SIGTERM or SIGHUP drains r, the second kills
// its jobs; SIGUSR1 (where it exists) calls status, which reports r's
// running jobs.
// stop returns the first stop signal, nil if none. h nil: a hub of its
// own for this run (in-process tests).
//
// The last resort: once the run was told to stop, its jobs get
// termTimeout and grace to end after the first signal (none after the
// second, which kills them at once), and the run hatchDelay more to
// return; a run that has not
// returned by then is blocked on its input (a pipe that never ends) or
// its output (a reader that stopped reading), and ration exits without
// it, with the status of the first signal, after closing the joblog
// (r.Abandon): what is recorded is never run again, the rest runs on
// --resume.
func HandleSignals(h *SignalHub, r *runner.Runner, stderr io.Writer, say func(slog.Level, string, string, ...any), status func(), termTimeout, grace time.Duration) (stop func() os.Signal) {
	if h == nil {
		h = NewSignalHub(stderr, os.Exit)
		h.local = true
	}
	if grace <= 0 {
		grace = runner.DefaultGrace
	}
	msgs := newMessages()
	var (
		mu      sync.Mutex
		first   os.Signal
		hatch   *time.Timer
		stopped bool
	)
	armHatch := func(after time.Duration) {
		if hatch != nil {
			hatch.Stop()
		}
		s := first
		hatch = time.AfterFunc(after, func() {
			mu.Lock()
			if stopped {
				mu.Unlock()
				return
			}
			mu.Unlock()
			err := r.Abandon()
			msgs.send(func() {
				say(slog.LevelError, "ration run: ", "the run did not end after its jobs were stopped: its input or output is blocked; exiting without it (the jobs in the joblog are done, --resume runs the rest)")
				if err != nil {
					say(slog.LevelError, "ration run: ", err.Error())
				}
			})
			msgs.flush(time.Second)
			h.exit(SignalStatus(s))
		})
	}
	h.Set(func(s os.Signal) {
		switch {
		case IsStatusSignal(s):
			msgs.send(status)
		case IsQuitSignal(s):
			h.quit(s, r.Abandon)
		case !IsStopSignal(s):
			// SIGPIPE: the write that caused it failed with EPIPE, and
			// the run deals with that.
		default:
			mu.Lock()
			defer mu.Unlock()
			if stopped {
				return
			}
			if first == nil {
				first = s
				r.Drain()
				armHatch(termTimeout + grace + hatchDelay)
				running := len(r.Running())
				msgs.send(func() {
					say(slog.LevelWarn, "ration run: ", fmt.Sprintf("got %s: starting no more jobs; %d running get %s to finish (signal again to kill them)",
						SigName(s), running, termTimeout))
				})
				return
			}
			r.Kill()
			armHatch(hatchDelay) // Kill sends SIGKILL at once: no grace

			msgs.send(func() {
				say(slog.LevelWarn, "ration run: ", fmt.Sprintf("got %s again: killing the running jobs", SigName(s)))
			})
		}
	})
	return func() os.Signal {
		mu.Lock()
		stopped = true
		if hatch != nil {
			hatch.Stop()
		}
		got := first
		mu.Unlock()
		// After the run: a signal is noted by nobody (the run is over and
		// its report comes in a moment), but still never kills ration;
		// SIGQUIT still quits (a report that hangs).
		h.Set(func(s os.Signal) {
			if IsQuitSignal(s) {
				h.quit(s, nil)
			}
		})
		msgs.flush(5 * time.Second)
		h.close()
		return got
	}
}

// SignalStatus is the exit status of a run interrupted by s: 128+N, as a
// shell reports a process killed by signal N.
func SignalStatus(s os.Signal) int {
	if sig, ok := s.(syscall.Signal); ok {
		return 128 + int(sig)
	}
	return ExitUsage
}
