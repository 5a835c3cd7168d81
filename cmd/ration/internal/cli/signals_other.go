//go:build !unix

package cli

import (
	"os"
	"syscall"
)

// hubSignals are the signals ration handles from start to exit: there is
// no SIGUSR1 here, so no running-jobs table on request.
func hubSignals() []os.Signal { return []os.Signal{os.Interrupt, syscall.SIGTERM} }

// IsStopSignal reports whether s stops a run (drain, then kill).
func IsStopSignal(s os.Signal) bool { return s == os.Interrupt || s == syscall.SIGTERM }

// IsQuitSignal reports whether s ends ration at once: there is no
// SIGQUIT here.
func IsQuitSignal(os.Signal) bool { return false }

// IsStatusSignal reports whether s asks for the running-jobs table.
func IsStatusSignal(os.Signal) bool { return false }

// SigName is the signal's name.
func SigName(s os.Signal) string { return s.String() }
