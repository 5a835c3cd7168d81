//go:build unix

package main

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// hubSignals are the signals ration handles from start to exit.
func hubSignals() []os.Signal {
	return []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGPIPE}
}

// isQuitSignal reports whether s ends ration at once (SIGQUIT, Ctrl-\).
func isQuitSignal(s os.Signal) bool { return s == syscall.SIGQUIT }

// isStopSignal reports whether s stops a run (drain, then kill).
func isStopSignal(s os.Signal) bool {
	return s == syscall.SIGINT || s == syscall.SIGTERM || s == syscall.SIGHUP
}

// isStatusSignal reports whether s asks for the running-jobs table.
func isStatusSignal(s os.Signal) bool { return s == syscall.SIGUSR1 }

// sigName is the signal's name as the kill command spells it ("SIGTERM").
func sigName(s os.Signal) string {
	if sig, ok := s.(syscall.Signal); ok {
		if name := unix.SignalName(sig); name != "" {
			return name
		}
	}
	return s.String()
}
