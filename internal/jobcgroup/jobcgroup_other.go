//go:build !linux

package jobcgroup

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/ration-run/ration/cgroup"
)

// Create fails: cgroups are Linux's.
func Create(Options) (*Group, error) {
	return nil, fmt.Errorf("jobcgroup: %w", errors.ErrUnsupported)
}

// Check fails: cgroups are Linux's.
func Check(cgroup.Snapshot) (reserve int64, err error) {
	return 0, fmt.Errorf("jobcgroup: %w", errors.ErrUnsupported)
}

// SetProcAttr does nothing: there is no group outside Linux.
func (g *Group) SetProcAttr(*syscall.SysProcAttr) {}

// Follow does nothing: there is no group outside Linux.
func (g *Group) Follow(int64) error { return nil }

// Close does nothing: there is no group outside Linux.
func (g *Group) Close() error { return nil }

// controller is Linux's; a Group has one there.
type controller struct{}
