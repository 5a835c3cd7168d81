//go:build unix

package runner

import (
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// signalNumber is the signal called name (SIGTERM).
func signalNumber(name string) (syscall.Signal, bool) {
	sig := unix.SignalNum(name)
	return sig, sig != 0
}

// signalName is sig's name without SIG (TERM), or its number.
func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return strings.TrimPrefix(n, "SIG")
	}
	return strconv.Itoa(int(sig))
}
