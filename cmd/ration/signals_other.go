//go:build !unix

package main

import (
	"os"
	"syscall"
)

// hubSignals are the signals ration handles from start to exit: there is
// no SIGUSR1 here, so no running-jobs table on request.
func hubSignals() []os.Signal { return []os.Signal{os.Interrupt, syscall.SIGTERM} }

// isStopSignal reports whether s stops a run (drain, then kill).
func isStopSignal(s os.Signal) bool { return s == os.Interrupt || s == syscall.SIGTERM }

// isQuitSignal reports whether s ends ration at once: there is no
// SIGQUIT here.
func isQuitSignal(os.Signal) bool { return false }

// isStatusSignal reports whether s asks for the running-jobs table.
func isStatusSignal(os.Signal) bool { return false }

// sigName is the signal's name.
func sigName(s os.Signal) string { return s.String() }
