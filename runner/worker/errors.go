package worker

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/ration-run/ration/runner/event"
)

// ErrClosed is returned for a task that could not run, or could not finish,
// because the pool was closed.
var ErrClosed = errors.New("worker: pool closed")

// TaskError is a task's own failure: the worker answered
// {"id":N,"ok":false,"error":"..."}. The worker is healthy and keeps
// serving; the task is not retried.
type TaskError struct {
	Message string // the worker's "error" value
}

// Error returns "worker: task failed: " and the worker's message.
func (e *TaskError) Error() string { return "worker: task failed: " + e.Message }

// BreakError describes one broken worker: why it broke, and which process
// it was.
type BreakError struct {
	Cause    event.Cause
	Slot     int
	PID      int
	ExitCode int            // CauseExit: the exit status; -1 when killed by a signal
	Signal   syscall.Signal // CauseOOM, CauseSignal, CauseTimeout: the signal that ended it (0: unknown or none)
	Timeout  time.Duration  // CauseTimeout: the timeout that was exceeded
	When     string         // "while running a task", "while idle"; may be ""
	Detail   string         // CauseProtocol: what was wrong; otherwise extra context, may be ""

	// workerOnly: the break is the worker's alone (an answer with another
	// task's id), not the task in flight's.
	workerOnly bool
	// unread: the worker broke before it read any of the task in flight
	// (its request was still all in the pipe, or could not be written).
	unread bool
}

// Error names the worker, what happened to it and when, e.g. "worker 1
// (pid 42) was OOM-killed while running a task (...)". It has no
// "worker: " prefix: it begins with the worker.
func (e *BreakError) Error() string {
	who := fmt.Sprintf("worker %d (pid %d)", e.Slot, e.PID)
	when := ""
	if e.When != "" {
		when = " " + e.When
	}
	var s string
	switch e.Cause {
	case event.CauseOOM:
		s = who + " was OOM-killed" + when + " (SIGKILL with a rise of its memory cgroup's oom_kill counter)"
	case event.CauseSignal:
		s = fmt.Sprintf("%s was killed by signal %d (%v)%s", who, int(e.Signal), e.Signal, when)
	case event.CauseTimeout:
		s = fmt.Sprintf("%s exceeded the task timeout of %v and was killed", who, e.Timeout)
	case event.CauseProtocol:
		s = who + " broke the protocol" + when
	default:
		if e.ExitCode >= 0 {
			s = fmt.Sprintf("%s exited with status %d%s", who, e.ExitCode, when)
		} else {
			s = who + " exited" + when
		}
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// QuarantinedError is the error of a task that broke Config.MaxBreaks
// workers: it is set aside and never retried again. It unwraps to the
// *BreakError of the last worker it broke.
type QuarantinedError struct {
	Cause      event.Cause // the cause of the last break
	Breaks     int         // workers the task broke
	Last       *BreakError
	LastStderr []string // the last lines the last broken worker wrote on stderr
	// Reason says why a task whose worker was OOM-killed was not
	// dispatched again (memory.OOMRetry); "" for other causes.
	Reason string
}

// Error says how many workers the task broke, the last break, and the
// last stderr line of that worker.
func (e *QuarantinedError) Error() string {
	s := fmt.Sprintf("task quarantined after breaking %d workers: %v", e.Breaks, e.Last)
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	if n := len(e.LastStderr); n > 0 {
		s += "; last stderr line: " + strings.TrimSpace(e.LastStderr[n-1])
	}
	return s
}

// Unwrap returns the last break.
func (e *QuarantinedError) Unwrap() error { return e.Last }

// BrokenError is returned by every task once the pool has given up:
// Config.MaxRecreations recreations in a row without a single successful
// task in between (a worker command that cannot start or dies at once).
type BrokenError struct {
	Recreations int
	Last        *BreakError
	LastStderr  []string
}

// Error says that the pool gave up, the last break and its last stderr
// line.
func (e *BrokenError) Error() string {
	s := fmt.Sprintf("worker: pool gave up after %d recreations without a successful task: %v", e.Recreations, e.Last)
	if n := len(e.LastStderr); n > 0 {
		s += "; last stderr line: " + strings.TrimSpace(e.LastStderr[n-1])
	}
	return s
}

// Unwrap returns the last break.
func (e *BrokenError) Unwrap() error { return e.Last }
