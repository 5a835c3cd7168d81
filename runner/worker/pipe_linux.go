package worker

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeBuffered returns how many bytes written to the pipe f are still
// unread in it, -1 when that cannot be told. Linux answers FIONREAD
// (TIOCINQ) on either end of a pipe, also once every reader is gone.
func pipeBuffered(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	if err := rc.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil {
			n = v
		}
	}); err != nil {
		return -1
	}
	return n
}
