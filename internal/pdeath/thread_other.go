//go:build !linux

package pdeath

import (
	"errors"
	"fmt"
)

// setUp fails for anything but the plain thread: a niceness or a cgroup
// per thread is Linux's.
func setUp(t Thread) error {
	if t.NiceSet || t.Tasks != "" {
		return fmt.Errorf("a forking thread with a niceness or a cgroup of its own: %w", errors.ErrUnsupported)
	}
	return nil
}

func joinCgroup(string) error { return errors.ErrUnsupported }

// mainThread is false: outside Linux a thread has no setup of its own
// that the process's other threads could inherit.
func mainThread() bool { return false }
