//go:build unix && !linux

package runner

import (
	"fmt"
	"os"
	"syscall"
)

// outputPipe makes a pipe for one output stream of a job, as on Linux
// (pipe_linux.go); without pipe2, both ends are made close-on-exec under
// syscall.ForkLock, so no process forked meanwhile inherits them.
func outputPipe() (r *os.File, w int, err error) {
	var p [2]int
	syscall.ForkLock.RLock()
	err = syscall.Pipe(p[:])
	if err == nil {
		syscall.CloseOnExec(p[0])
		syscall.CloseOnExec(p[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, -1, fmt.Errorf("pipe: %w", err)
	}
	if err := syscall.SetNonblock(p[0], true); err != nil {
		_ = syscall.Close(p[0])
		_ = syscall.Close(p[1])
		return nil, -1, fmt.Errorf("pipe: %w", err)
	}
	return os.NewFile(uintptr(p[0]), "|0"), p[1], nil
}
