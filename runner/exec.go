package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/internal/oomkill"
	"github.com/ration-run/ration/runner/reaper"
)

// DefaultGrace is the time between SIGTERM and SIGKILL when a job is
// stopped and Config.Grace is 0.
const DefaultGrace = 2 * time.Second

// Attempt is one attempt to run a job, as the runner hands it to an
// Executor.
type Attempt struct {
	Seq     int64  // job number, 1-based in the full input ({#})
	Slot    int    // job slot, 1-based ({%})
	Input   string // the input, as read
	Attempt int    // 1 for the first attempt
	// Argv is the expanded command: argv[0] is looked up in PATH when it
	// holds no slash. With --shell it is ["/bin/sh", "-c", script].
	Argv []string
	// Stdout and Stderr receive the job's output. They are safe for
	// concurrent use and never block for long.
	Stdout, Stderr io.Writer
	// Diag receives ration's own one-line diagnostics about the attempt
	// (the command could not start; a worker task failed, with its input):
	// the job's stderr, or io.Discard with Config.OmitErrorLines. Nil
	// means Stderr.
	Diag io.Writer
	// Started must be called as soon as the job runs, with the process id
	// (0 if there is none). An executor that moves the attempt to another
	// process (a task re-dispatched after its worker broke) may call it
	// again with the new pid; only the first call starts the attempt's
	// clock and is reported as event.JobStarted. An executor that returns
	// without calling it must set AttemptResult.NotStarted.
	Started func(pid int)
	// StartedOn is Started for an executor that runs attempts on workers
	// of its own, numbered from 1 (a worker pool): the worker's slot
	// replaces Slot in the job's events and in Runner.Running, so they
	// name the same slot as the workers' own reports. ({%} keeps Slot.)
	StartedOn func(slot, pid int)
	// Grace is how long a stopped job gets between SIGTERM and SIGKILL.
	Grace time.Duration
	// Kill is closed when the job must be killed at once (a second
	// interrupt): skip or cut short the grace.
	Kill <-chan struct{}
	// Drain is closed when the run stops starting jobs (an interrupt,
	// --halt): an executor still waiting to start the attempt (for a free
	// worker) must not start it, and returns with NotStarted set.
	Drain <-chan struct{}
}

// diag returns where diagnostics about a go.
func (a *Attempt) diag() io.Writer {
	if a.Diag != nil {
		return a.Diag
	}
	if a.Stderr != nil {
		return a.Stderr
	}
	return io.Discard
}

// AttemptResult is how an attempt ended.
type AttemptResult struct {
	PID      int
	Start    time.Time
	Duration time.Duration
	// ExitCode is the exit status, -1 when a signal ended the job. A job
	// that could not be started gets 127 (not found) or 126 (not
	// executable), as from a shell, and Err says why.
	ExitCode int
	Signal   int   // the signal that ended the job, 0 if none
	PeakRSS  int64 // peak resident set size in bytes (0 if unknown)
	// Stopped reports that the executor signalled the job because its
	// context was done (timeout, halt, interrupt). A job that ended on its
	// own before that is not Stopped, even if the context is done by now.
	Stopped bool
	Err     error
	// Cause, when not event.CauseNone, is why the attempt ended abnormally
	// as the executor knows it (a worker's break); otherwise the runner
	// classifies the attempt itself (timeout, OOM kill, signal).
	Cause event.Cause
	// Quarantined reports that the executor set the job aside for good
	// (its task broke too many workers): the runner does not retry it; it
	// ends with event.Quarantined and counts as failed.
	Quarantined bool
	// NotStarted reports that the attempt never started (Started was not
	// called): its context ended or the run drained while it waited.
	NotStarted bool
}

// Executor runs one attempt of a job. The runner calls Exec concurrently
// from several goroutines, at most once per slot at a time.
//
// When ctx is done before the job ends, the executor must stop it: SIGTERM
// (or the equivalent), then SIGKILL after a.Grace, or at once when a.Kill is
// closed; it returns only when the job and everything it started are gone.
// The default executor is ProcessExecutor; a long-lived worker executor
// (--worker) implements the same interface.
type Executor interface {
	Exec(ctx context.Context, a *Attempt) AttemptResult
}

// ProcessExecutor runs each attempt as a new process in its own process
// group, with the argv directly (no shell unless the argv is one), stdin
// from /dev/null and the runner's environment, and an oom_score_adj
// JobOOMScoreAdj above ration's. Stopping a job signals its
// whole process group, so children the job started go with it.
//
// It starts processes with syscall.ForkExec rather than os/exec: a job
// runner pays os/exec's per-command costs (a /dev/null opened per command,
// two copying goroutines, the environment de-duplicated, a pidfd) thousands
// of times, and for short jobs they were about a quarter of ration's own CPU
// time. It keeps /dev/null open for its whole life, for the jobs' stdin.
//
// The zero value is ready to use and safe for concurrent use.
type ProcessExecutor struct {
	// Reaper, when set, starts and waits for the jobs' processes, so that
	// ration running as PID 1 reaps the orphans jobs leave behind without
	// taking the jobs' own exit statuses (see package reaper). Nil: plain
	// syscall.ForkExec and wait4.
	Reaper *reaper.Reaper

	paths   sync.Map // argv[0] -> looked-up path, to look PATH up once
	victims oomkill.Victims
	bufs    sync.Pool // *[]byte, for copying the jobs' output

	stdinOnce sync.Once
	stdin     *os.File // /dev/null, read-only, for every job
	stdinErr  error
}

type lookResult struct {
	path string
	err  error
}

func (e *ProcessExecutor) lookPath(name string) (string, error) {
	if v, ok := e.paths.Load(name); ok {
		r := v.(lookResult)
		return r.path, r.err
	}
	p, err := exec.LookPath(name)
	if err == nil || errors.Is(err, exec.ErrNotFound) {
		e.paths.Store(name, lookResult{p, err})
	}
	return p, err
}

// devNull is the jobs' stdin, opened once.
func (e *ProcessExecutor) devNull() (*os.File, error) {
	e.stdinOnce.Do(func() { e.stdin, e.stdinErr = os.Open(os.DevNull) })
	return e.stdin, e.stdinErr
}

// Exec runs a and waits for it. See Executor for the stopping rules. The
// process group is killed (SIGKILL) after a stopped job's leader exits, so
// no child outlives a stopped job; a job that ends on its own keeps its
// background children, as in a shell, and its output is read until they
// close it.
func (e *ProcessExecutor) Exec(ctx context.Context, a *Attempt) AttemptResult {
	res := AttemptResult{Start: time.Now()}
	if len(a.Argv) == 0 {
		res.ExitCode, res.Err = 127, errors.New("empty command")
		return res
	}
	path, err := e.lookPath(a.Argv[0])
	if err != nil {
		return startFailed(a, res, err)
	}
	stdin, err := e.devNull()
	if err != nil {
		return startFailed(a, res, err)
	}
	outR, outW, err := outputPipe()
	if err != nil {
		return startFailed(a, res, err)
	}
	errR, errW, err := outputPipe()
	if err != nil {
		outR.Close()
		_ = syscall.Close(outW)
		return startFailed(a, res, err)
	}
	pid, err := e.Reaper.ForkExec(path, a.Argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{stdin.Fd(), uintptr(outW), uintptr(errW)},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	runtime.KeepAlive(stdin)
	_ = syscall.Close(outW)
	_ = syscall.Close(errW)
	if err != nil {
		outR.Close()
		errR.Close()
		return startFailed(a, res, err)
	}
	res.PID = pid
	e.victims.Prefer(pid)
	if a.Started != nil {
		a.Started(pid)
	}

	var (
		stopMu  sync.Mutex
		stopped bool
		exited  = make(chan struct{})
	)
	// Stop the job when ctx is done: the whole group, gently first.
	stopWatch := context.AfterFunc(ctx, func() {
		stopMu.Lock()
		defer stopMu.Unlock()
		select {
		case <-exited:
			return
		default:
		}
		stopped = true
		select {
		case <-a.Kill:
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			return
		default:
		}
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		grace := a.Grace
		if grace <= 0 {
			grace = DefaultGrace
		}
		go func() {
			t := time.NewTimer(grace)
			defer t.Stop()
			select {
			case <-t.C:
			case <-a.Kill:
			case <-exited:
				return
			}
			stopMu.Lock()
			defer stopMu.Unlock()
			select {
			case <-exited:
			default:
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		}()
	})
	var (
		status syscall.WaitStatus
		usage  syscall.Rusage
	)
	copyErr, waitErr := e.collect(pid, a, outR, errR, &status, &usage)
	stopWatch()
	stopMu.Lock()
	close(exited)
	res.Stopped = stopped
	stopMu.Unlock()
	if res.Stopped {
		// The leader is gone; take any child that survived SIGTERM with it.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	res.Duration = time.Since(res.Start)
	if waitErr != nil {
		res.ExitCode, res.Err = -1, fmt.Errorf("wait: %w", waitErr)
		return res
	}
	res.ExitCode = status.ExitStatus()
	if status.Signaled() {
		res.ExitCode, res.Signal = -1, int(status.Signal())
	}
	res.PeakRSS = usage.Maxrss * 1024 // kilobytes on Linux
	res.Err = copyErr                 // e.g. writing the output failed
	return res
}

// collect copies the job's stdout and stderr until both are closed and
// waits for the process. Stdout is read on this goroutine and the process
// is waited for only after it: by then a job that did not close its stdout
// early has exited, so the wait does not block a thread.
func (e *ProcessExecutor) collect(pid int, a *Attempt, outR, errR *os.File, status *syscall.WaitStatus, usage *syscall.Rusage) (copyErr, waitErr error) {
	stderrDone := make(chan error, 1)
	go func() {
		err := e.copyOutput(a.Stderr, errR)
		errR.Close()
		stderrDone <- err
	}()
	copyErr = e.copyOutput(a.Stdout, outR)
	outR.Close()
	waitErr = e.Reaper.Wait4(pid, status, usage)
	if err := <-stderrDone; copyErr == nil {
		copyErr = err
	}
	return copyErr, waitErr
}

// copyOutput copies one output stream of a job to w (nil: discarded) until
// the job and its children close it. A failed write stops the copy; closing
// the pipe then makes further writes by the job fail (SIGPIPE), as with
// os/exec.
func (e *ProcessExecutor) copyOutput(w io.Writer, r *os.File) error {
	if w == nil {
		w = io.Discard
	}
	bp, _ := e.bufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, 32<<10)
		bp = &b
	}
	defer e.bufs.Put(bp)
	// Not io.Copy: *os.File's WriteTo would allocate a fresh buffer per
	// stream, two per job.
	buf := *bp
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// outputPipe makes a pipe for one output stream of a job: the read end
// non-blocking and in the runtime's poller, the write end a plain
// descriptor for the child, which ForkExec passes on and the caller closes.
// Both ends are close-on-exec, so no other job inherits them.
func outputPipe() (r *os.File, w int, err error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return nil, -1, fmt.Errorf("pipe: %w", err)
	}
	if err := syscall.SetNonblock(p[0], true); err != nil {
		_ = syscall.Close(p[0])
		_ = syscall.Close(p[1])
		return nil, -1, fmt.Errorf("pipe: %w", err)
	}
	return os.NewFile(uintptr(p[0]), "|0"), p[1], nil
}

// startFailed reports a job that could not start the way a shell would:
// the message on the job's stderr, status 127 or 126.
func startFailed(a *Attempt, res AttemptResult, err error) AttemptResult {
	res.ExitCode = 126
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		res.ExitCode = 127
	}
	res.Err = err
	fmt.Fprintf(a.diag(), "ration: %s: %v\n", a.Argv[0], unwrapExecErr(err))
	if a.Started != nil {
		a.Started(0)
	}
	return res
}

func unwrapExecErr(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
