//go:build unix && !linux

package reaper

import (
	"context"
	"os/exec"
	"syscall"
)

// Options configures [New].
type Options struct {
	// Subreaper asks for a child subreaper; it has no effect on this
	// platform, where the Reaper is always inactive.
	Subreaper bool
}

// Reaper starts child processes. On this platform it never reaps orphans:
// Start and Wait behave like exec.Cmd's.
type Reaper struct{}

// New returns an inactive Reaper; it never fails on this platform.
func New(ctx context.Context, opts Options) (*Reaper, error) { return &Reaper{}, nil }

// Active reports whether r reaps orphans; it is always false here.
func (r *Reaper) Active() bool { return false }

// Start starts cmd like cmd.Start.
func (r *Reaper) Start(cmd *exec.Cmd) error { return cmd.Start() }

// Wait waits for cmd like cmd.Wait.
func (r *Reaper) Wait(cmd *exec.Cmd) error { return cmd.Wait() }

// ForkExec starts a process like syscall.ForkExec.
func (r *Reaper) ForkExec(argv0 string, argv []string, attr *syscall.ProcAttr) (int, error) {
	return syscall.ForkExec(argv0, argv, attr)
}

// Wait4 waits for a process like syscall.Wait4, retrying on EINTR.
func (r *Reaper) Wait4(pid int, status *syscall.WaitStatus, rusage *syscall.Rusage) error {
	for {
		_, err := syscall.Wait4(pid, status, 0, rusage)
		if err != syscall.EINTR {
			return err
		}
	}
}

// Stop does nothing and returns nil.
func (r *Reaper) Stop() error { return nil }
