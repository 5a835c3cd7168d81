//go:build unix

package runhook

import (
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// signalName is sig's name without SIG (TERM), or its number.
func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return strings.TrimPrefix(n, "SIG")
	}
	return strconv.Itoa(int(sig))
}
