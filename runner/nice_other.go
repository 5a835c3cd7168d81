//go:build unix && !linux

package runner

import (
	"errors"

	"github.com/ration-run/ration/runner/internal/pdeath"
)

// NiceSupported reports whether Attempt.Nice can be honoured here: not
// outside Linux, where niceness is the whole process's (ration run
// rejects --nice there).
const NiceSupported = false

// onForkThread runs fork on the forking thread; a niceness is an error.
func onForkThread(a *Attempt, fork func()) error {
	if a.NiceSet {
		return errors.New("a niceness for jobs (--nice) is supported on Linux only")
	}
	pdeath.Do(fork)
	return nil
}
