//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package logs

import "golang.org/x/sys/unix"

// isTerminal reports whether fd is a terminal: it has terminal attributes.
func isTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), ioctlGetTermios)
	return err == nil
}
