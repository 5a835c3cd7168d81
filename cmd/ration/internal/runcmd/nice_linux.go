package runcmd

import "golang.org/x/sys/unix"

// ownNice returns ration's niceness (-20..19).
func ownNice() (int, error) {
	// The system call returns 20 - nice, so that it is never negative.
	p, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	return 20 - p, err
}
