//go:build unix

package main

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// runSignals are the signals `ration run` handles.
func runSignals() []os.Signal { return []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGUSR1} }

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
