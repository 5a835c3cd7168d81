//go:build unix && !linux

package reaper

import "syscall"

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
