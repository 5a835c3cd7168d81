package runner

import "github.com/ration-run/ration/runner/internal/pdeath"

// NiceSupported reports whether Attempt.Nice can be honoured here: on
// Linux, where a child inherits the niceness of the thread that forks it.
const NiceSupported = true

// onForkThread runs fork, which forks one job, on the forking thread
// (package pdeath): with a.NiceSet, one whose niceness is a.Nice, so the
// job starts at that niceness.
func onForkThread(a *Attempt, fork func()) error {
	if a.NiceSet {
		return pdeath.DoNice(a.Nice, fork)
	}
	pdeath.Do(fork)
	return nil
}
