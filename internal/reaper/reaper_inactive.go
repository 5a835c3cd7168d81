//go:build !linux

package reaper

import (
	"context"
	"os/exec"
	"time"
)

// Options configures [New].
type Options struct {
	// Subreaper asks for a child subreaper; it has no effect on this
	// platform, where the Reaper is always inactive.
	Subreaper bool
}

// Reaper starts child processes. Outside Linux it never reaps orphans:
// Start and Wait behave like exec.Cmd's (and, on other Unix systems,
// ForkExec and Wait4 like syscall's).
type Reaper struct{}

// New returns an inactive Reaper; it never fails on this platform.
func New(ctx context.Context, opts Options) (*Reaper, error) { return &Reaper{}, nil }

// Active reports whether r reaps orphans; it is always false here.
func (r *Reaper) Active() bool { return false }

// Start starts cmd like cmd.Start.
func (r *Reaper) Start(cmd *exec.Cmd) error { return cmd.Start() }

// Wait waits for cmd like cmd.Wait.
func (r *Reaper) Wait(cmd *exec.Cmd) error { return cmd.Wait() }

// Stop does nothing and returns nil.
func (r *Reaper) Stop() error { return nil }

// KillDescendants does nothing on this platform, where the Reaper is
// never a subreaper and /proc has no process tree to walk; it returns 0.
func (r *Reaper) KillDescendants(d time.Duration) int { return 0 }
