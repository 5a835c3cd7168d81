//go:build !unix

package main

import (
	"os"
	"syscall"
)

// runSignals are the signals `ration run` handles: there is no SIGUSR1
// here, so no running-jobs table on request.
func runSignals() []os.Signal { return []os.Signal{os.Interrupt, syscall.SIGTERM} }

// isStatusSignal reports whether s asks for the running-jobs table.
func isStatusSignal(os.Signal) bool { return false }

// sigName is the signal's name.
func sigName(s os.Signal) string { return s.String() }
