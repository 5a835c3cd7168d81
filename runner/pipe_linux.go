package runner

import (
	"fmt"
	"os"
	"syscall"
)

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
