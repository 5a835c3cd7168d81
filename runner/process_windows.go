package runner

import (
	"context"
	"errors"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
)

// Exec runs a with os/exec and waits for it. Windows has no process groups
// and no SIGTERM: when ctx ends, the job's process is killed at once and
// the attempt reports SIGKILL; processes it started are not stopped.
func (e *ProcessExecutor) Exec(ctx context.Context, a *Attempt) AttemptResult {
	res := AttemptResult{Start: time.Now()}
	if len(a.Argv) == 0 {
		exited(&res, 127, 0, errors.New("empty command"))
		return res
	}
	path, err := e.programPath(a)
	if err != nil {
		return startFailed(a, res, err)
	}
	cmd := exec.Command(path)
	cmd.Args = a.Argv
	cmd.Env = jobEnv(a)
	cmd.Dir = a.Dir
	cmd.Stdout, cmd.Stderr = a.Stdout, a.Stderr
	cmd.Stdin = a.Stdin // nil: os.DevNull
	if err := cmd.Start(); err != nil {
		return startFailed(a, res, err)
	}
	res.PID = cmd.Process.Pid
	a.started(a.Slot, res.PID)
	var stopped atomic.Bool
	stopWatch := context.AfterFunc(ctx, func() {
		stopped.Store(true)
		_ = cmd.Process.Kill()
	})
	err = cmd.Wait()
	stopWatch()
	res.Stopped = stopped.Load()
	res.Duration = time.Since(res.Start)
	var ee *exec.ExitError
	switch {
	case res.Stopped:
		exited(&res, -1, int(syscall.SIGKILL), nil)
	case err == nil:
		exited(&res, 0, 0, nil)
	case errors.As(err, &ee):
		exited(&res, ee.ExitCode(), 0, nil)
	default:
		exited(&res, -1, 0, err)
	}
	return res
}
