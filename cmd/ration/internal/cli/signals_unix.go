//go:build unix

package cli

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// hubSignals are the signals ration handles from start to exit.
func hubSignals() []os.Signal {
	return []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGPIPE}
}

// IsQuitSignal reports whether s ends ration at once (SIGQUIT, Ctrl-\).
func IsQuitSignal(s os.Signal) bool { return s == syscall.SIGQUIT }

// IsStopSignal reports whether s stops a run (drain, then kill).
func IsStopSignal(s os.Signal) bool {
	return s == syscall.SIGINT || s == syscall.SIGTERM || s == syscall.SIGHUP
}

// IsStatusSignal reports whether s asks for the running-jobs table.
func IsStatusSignal(s os.Signal) bool { return s == syscall.SIGUSR1 }

// SigName is the signal's name as the kill command spells it ("SIGTERM").
func SigName(s os.Signal) string {
	if sig, ok := s.(syscall.Signal); ok {
		if name := unix.SignalName(sig); name != "" {
			return name
		}
	}
	return s.String()
}
