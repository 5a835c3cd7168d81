//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || illumos

package joblog

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lock takes an exclusive flock on f without waiting. flock rather than
// fcntl (POSIX) record locks: a POSIX lock belongs to the process and is
// dropped when the process closes any descriptor of the file (a Load of
// the same path would release it), and it does not keep out a second
// Writer in the same process; a flock belongs to the open file, so it
// lasts exactly as long as the Writer or the process. The lock is advisory:
// it keeps out ration and GNU-parallel-unaware tools that flock, not a
// plain `echo >>`.
func lock(f *os.File, path string) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return fmt.Errorf("joblog: %s: %w (%s)", path, ErrLocked, holder(f))
		default:
			return fmt.Errorf("joblog: lock %s: %w", path, err)
		}
	}
}
