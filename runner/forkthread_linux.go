package runner

import "github.com/ration-run/ration/internal/pdeath"

// onForkThread runs fork, which forks one job, on the forking thread
// (package pdeath): with a.NiceSet, one whose niceness is a.Nice, so the
// job starts at that niceness; with tasks (a cgroup v1 tasks file, see
// jobcgroup.Group.Tasks), one in that cgroup, so the job starts there.
func onForkThread(a *Attempt, tasks string, fork func()) error {
	t := pdeath.Thread{Tasks: tasks}
	if a.NiceSet {
		t.Nice, t.NiceSet = a.Nice, true
	}
	return pdeath.DoOn(t, fork)
}
