//go:build unix

package flagvalue

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// signalNumber is the signal called name (SIGTERM).
func signalNumber(name string) (syscall.Signal, bool) {
	sig := unix.SignalNum(name)
	return sig, sig != 0
}
