//go:build unix && !linux

package runner

import (
	"errors"

	"github.com/ration-run/ration/internal/pdeath"
)

// onForkThread runs fork on the forking thread; a niceness is an error
// (tasks, a cgroup's, is always "" outside Linux).
func onForkThread(a *Attempt, tasks string, fork func()) error {
	if a.NiceSet {
		return errors.New("a niceness for jobs is supported on Linux only")
	}
	return pdeath.DoOn(pdeath.Thread{Tasks: tasks}, fork)
}
