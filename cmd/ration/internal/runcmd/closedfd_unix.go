//go:build unix

package runcmd

import (
	"os"

	"golang.org/x/sys/unix"
)

// closedAtStart reports whether f, one of the standard descriptors, was
// closed when ration started (`>&-`). The Go runtime opens /dev/null
// read-write in place of a closed standard descriptor before main runs,
// so the descriptor is open by now; a shell's `>/dev/null` opens it
// write-only, so read-write /dev/null is what a closed one looks like.
func closedAtStart(f *os.File) bool {
	fd := int(f.Fd())
	if fd > 2 {
		return false
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return true
	}
	if fl&unix.O_ACCMODE != unix.O_RDWR {
		return false
	}
	var st, null unix.Stat_t
	if unix.Fstat(fd, &st) != nil || unix.Stat(os.DevNull, &null) != nil {
		return false
	}
	return st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == null.Rdev
}
