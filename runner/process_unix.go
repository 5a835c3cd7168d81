//go:build unix

package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// Exec runs a and waits for it. See Executor for the stopping rules. The
// process group is killed (SIGKILL) after a stopped job's leader exits, so
// no child outlives a stopped job; a job that ends on its own keeps its
// background children, as in a shell, and its output is read until they
// close it. A stopped job's output is read until escapedHold after its
// group got SIGKILL: a process that holds it open longer left the group
// (setsid, a daemon) and would otherwise keep the stopped job, and its
// --timeout, from ending for as long as it lives.
func (e *ProcessExecutor) Exec(ctx context.Context, a *Attempt) AttemptResult {
	res := AttemptResult{Start: time.Now()}
	if len(a.Argv) == 0 {
		exited(&res, 127, 0, errors.New("empty command"))
		return res
	}
	if err := checkNUL(a.Argv); err != nil {
		return startFailed(a, res, err)
	}
	pid, outR, errR, feed, err := e.start(a)
	defer feed.wait()
	if err != nil {
		return startFailed(a, res, err)
	}
	res.PID = pid
	e.victims.Prefer(pid)
	a.started(a.Slot, pid)

	stop := newGroupStopper(pid, a)
	stop.killed = func() {
		d := time.Now().Add(escapedHold)
		_ = outR.SetReadDeadline(d) // fails harmlessly once collect closed it
		_ = errR.SetReadDeadline(d)
	}
	stopWatch := context.AfterFunc(ctx, stop.stop)
	var (
		status syscall.WaitStatus
		usage  syscall.Rusage
	)
	copyErr, waitErr := e.collect(pid, a, outR, errR, &status, &usage)
	if errors.Is(copyErr, os.ErrDeadlineExceeded) {
		copyErr = errEscapedOutput
	}
	stopWatch()
	res.Stopped = stop.exited()
	if res.Stopped {
		// The leader is gone; take any child that survived SIGTERM with it.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	res.Duration = time.Since(res.Start)
	if waitErr != nil {
		exited(&res, -1, 0, fmt.Errorf("wait: %w", waitErr))
		return res
	}
	code, sig := status.ExitStatus(), 0
	if status.Signaled() {
		code, sig = -1, int(status.Signal())
	}
	exited(&res, code, sig, copyErr) // copyErr: e.g. writing the output failed
	res.PeakRSS = maxRSSBytes(&usage)
	return res
}

// start starts the job's process in its own process group, with stdin
// from /dev/null (or a pipe fed with a.Stdin) and two pipes for its output.
func (e *ProcessExecutor) start(a *Attempt) (pid int, outR, errR *os.File, feed *stdinFeed, err error) {
	path, err := e.programPath(a)
	if err != nil {
		return 0, nil, nil, nil, err
	}
	stdin, err := e.devNull()
	if err != nil {
		return 0, nil, nil, nil, err
	}
	outR, outW, err := outputPipe()
	if err != nil {
		return 0, nil, nil, nil, err
	}
	errR, errW, err := outputPipe()
	if err != nil {
		outR.Close()
		_ = syscall.Close(outW)
		return 0, nil, nil, nil, err
	}
	if feed, err = newStdinFeed(a.Stdin); err != nil {
		outR.Close()
		errR.Close()
		_ = syscall.Close(outW)
		_ = syscall.Close(errW)
		return 0, nil, nil, nil, err
	}
	attr := &syscall.ProcAttr{
		Env:   jobEnv(a),
		Dir:   a.Dir,
		Files: []uintptr{feed.fd(stdin.Fd()), uintptr(outW), uintptr(errW)},
		Sys:   jobProcAttr(),
	}
	e.Cgroup.SetProcAttr(attr.Sys)
	// On the forking thread: the job's parent-death signal must mean
	// ration's death, not the end of some thread (package pdeath).
	// With --nice, on a thread of that niceness, and in the jobs' cgroup
	// (onForkThread).
	if terr := onForkThread(a, e.Cgroup.Tasks(), func() { pid, err = e.Reaper.ForkExec(path, a.Argv, attr) }); terr != nil {
		err = terr
	}
	runtime.KeepAlive(stdin)
	_ = syscall.Close(outW)
	_ = syscall.Close(errW)
	feed.started(err == nil)
	if err != nil {
		outR.Close()
		errR.Close()
		return 0, nil, nil, feed, err
	}
	return pid, outR, errR, feed, nil
}

// escapedHold is how long a stopped job's output is still read after its
// process group got SIGKILL (see Exec): the pipes of the killed processes
// close as they exit, at once; only a process outside the group can hold
// them longer.
const escapedHold = time.Second

// errEscapedOutput is the error of a stopped job whose output was still
// held open escapedHold after its process group was killed.
var errEscapedOutput = errors.New("its output was still held open after its process group was killed, by a process that left the group (setsid, a daemon); stopped reading it")

// groupStopper stops a job's process group when its context ends: the
// attempt's termination sequence (SIGTERM, then SIGKILL after the grace,
// or --termseq's), and SIGKILL at once when the run kills.
type groupStopper struct {
	pid int
	a   *Attempt
	// killed, when set, is called after SIGKILL was sent to the group
	// (with mu held).
	killed func()

	mu      sync.Mutex
	stopped bool
	done    chan struct{} // closed once the job was waited for
}

func newGroupStopper(pid int, a *Attempt) *groupStopper {
	return &groupStopper{pid: pid, a: a, done: make(chan struct{})}
}

// stop runs when the attempt's context ends.
func (g *groupStopper) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.done:
		return
	default:
	}
	g.stopped = true
	select {
	case <-g.a.Kill:
		g.signalLocked(syscall.SIGKILL)
		return
	default:
	}
	seq := g.a.termSeq()
	g.signalLocked(seq[0].Signal)
	go g.follow(seq)
}

// signalLocked sends sig to the job's process group (g.mu held), and
// reports a SIGKILL to killed.
func (g *groupStopper) signalLocked(sig syscall.Signal) {
	_ = syscall.Kill(-g.pid, sig)
	if sig == syscall.SIGKILL && g.killed != nil {
		g.killed()
	}
}

// follow waits out each step of seq, whose first signal was sent, and
// sends the next step's signal while the job runs; SIGKILL after the last
// wait, so that the job ends whatever seq's last signal was.
func (g *groupStopper) follow(seq TermSeq) {
	for i, step := range seq {
		if step.Signal == syscall.SIGKILL {
			// SIGKILL was sent: nothing is left to wait for.
			return
		}
		if step.Wait > 0 {
			t := time.NewTimer(step.Wait)
			select {
			case <-t.C:
			case <-g.a.Kill:
			case <-g.done:
				t.Stop()
				return
			}
			t.Stop()
		}
		next := syscall.SIGKILL
		if i+1 < len(seq) {
			next = seq[i+1].Signal
		}
		select {
		case <-g.a.Kill:
			next = syscall.SIGKILL
		default:
		}
		g.mu.Lock()
		select {
		case <-g.done:
			g.mu.Unlock()
			return
		default:
			g.signalLocked(next)
		}
		g.mu.Unlock()
		if next == syscall.SIGKILL {
			return
		}
	}
}

// exited marks the job as waited for (no signal is sent after this) and
// reports whether it was stopped.
func (g *groupStopper) exited() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.done)
	return g.stopped
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

// maxRSSBytes is the peak RSS of a waited-for process in bytes: rusage
// counts kilobytes, except on macOS, which counts bytes.
func maxRSSBytes(u *syscall.Rusage) int64 {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(u.Maxrss)
	}
	return int64(u.Maxrss) * 1024
}
