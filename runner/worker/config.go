package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"time"

	"github.com/ration-run/ration/internal/jobcgroup"
	"github.com/ration-run/ration/internal/reaper"
	"github.com/ration-run/ration/runner/event"
)

// Defaults for the zero values of Config.
const (
	DefaultMaxBreaks      = 2
	DefaultBreakWindow    = 10 * time.Second
	DefaultBackoff        = time.Second
	DefaultMaxRecreations = 5
	DefaultStopGrace      = 5 * time.Second
	DefaultStderrLines    = 20
	DefaultMaxLine        = 16 << 20
)

// Config configures a Pool. Command is required; every other zero value
// has a default.
type Config struct {
	// Command is the worker's argv, run without a shell.
	Command []string
	// Dir and Env are as in exec.Cmd (Env nil: ration's environment).
	Dir string
	Env []string
	// Nice, with NiceSet, is the niceness the workers start at: they are
	// forked from a thread at that niceness, so that each of their threads
	// has it (Linux; elsewhere a worker fails to start).
	Nice    int
	NiceSet bool
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
	// OOMAttempts bounds the OOM kills of one task: a task whose worker was
	// OOM-killed is not counted against MaxBreaks; it is re-dispatched once
	// fewer tasks are in flight, and quarantined once it was killed while
	// no other task was in flight or at its OOMAttempts-th OOM kill (see
	// the package documentation); 0 means memory.DefaultOOMAttempts (3).
	OOMAttempts int
	// MaxTasks retires a worker after that many tasks, MaxRSS once the
	// resident set of its process tree exceeds that many bytes after a
	// task; a fresh worker replaces it. 0: never.
	MaxTasks int
	MaxRSS   int64
	// BreakWindow and the pool size define systemic breakage (see the package
	// documentation: breaks in every slot, of max(2, size/2) distinct tasks,
	// with no task succeeding in between; or OOM kills of max(2, size/2)
	// distinct tasks) within BreakWindow, which makes the pool retire every
	// worker, wait Backoff (doubled for each recreation in a row, up to 32 x)
	// and start afresh. After MaxRecreations recreations in a row without one
	// successful task in between, the pool gives up and every task fails with
	// a *BrokenError. Zero values mean the defaults.
	BreakWindow    time.Duration
	Backoff        time.Duration
	MaxRecreations int
	// StopGrace is how long a retiring worker may take to exit after its
	// stdin is closed before it is killed; 0 means DefaultStopGrace.
	StopGrace time.Duration
	// SampleRSS samples the resident set of a worker's process tree after
	// each task into Result.PeakRSS even without MaxRSS (for a controller
	// that learns the memory per job).
	SampleRSS bool
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
	// MaxLine bounds one stdout line (an answer) in bytes; a longer
	// line is a protocol break, so ration's memory stays bounded by a
	// few times MaxLine per worker. 0 means DefaultMaxLine (16 MiB).
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
	// Cgroup, when set, is the memory cgroup the workers start in
	// (package jobcgroup), so that a worker's OOM kill never takes
	// ration. Nil: they start in ration's own cgroup.
	Cgroup *jobcgroup.Group
	// Reaper, when set, starts and waits for the worker processes, so that
	// a program running as PID 1 reaps orphans without taking the exit
	// status of its workers (see package reaper). Nil: exec.Cmd's own.
	Reaper *reaper.Reaper
}

// Check reports what New would reject in c: an empty command, or one
// that cannot be found.
func (c Config) Check() error {
	if len(c.Command) == 0 || c.Command[0] == "" {
		return errors.New("worker: empty worker command")
	}
	if _, err := exec.LookPath(c.Command[0]); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	return nil
}

// Task is one unit of work for a pool.
type Task struct {
	Seq   int64  // the job number reported in events ({#}); may be 0
	Input string // sent to the worker as "input"
	// Started, when set, is called each time a worker takes the task
	// (again after a re-dispatch), with the worker's slot and pid, before
	// the task is written to it, from the pool's goroutine; and with pid 0
	// (no process) when that worker broke and the task waits to be
	// re-dispatched. It must return quickly.
	Started func(slot, pid int)
}

// Result is how a task ended.
type Result struct {
	// Output is the worker's "output" value when Err is nil.
	Output json.RawMessage
	// Err is nil on success; otherwise a *TaskError, a *QuarantinedError,
	// a *BrokenError, ErrClosed or the context's error.
	Err error
	// Outcome is Succeeded, Failed, Quarantined, Stopped when the task's
	// context ended after a worker took it (Err is the context's), or
	// NotStarted when the task never reached a worker.
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
	// task, sampled only when MaxRSS or SampleRSS is set; 0
	// otherwise. A long-lived worker's RSS includes its warm state.
	PeakRSS int64
}
