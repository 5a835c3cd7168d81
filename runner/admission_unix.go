//go:build unix

package runner

import (
	"errors"
	"syscall"
	"time"

	"github.com/ration-run/ration/internal/memory"
)

// groupGoneWait is how long groupGone waits for the rest of a group to
// go. When the OOM killer takes a job's shell, the command the shell ran
// is killed by the next kill or is left a zombie until the reaper takes
// it: for a few milliseconds the group is still there although nothing
// in it runs. A job that leaves a child running really keeps its group.
const groupGoneWait = 200 * time.Millisecond

// groupGone reports whether no process of the process group pgid (a job's:
// each job leads its own) is left but zombies, looking among a.procs and
// waiting up to groupGoneWait for it. pgid 0 (never started) counts as
// gone.
func (a *admission) groupGone(pgid int) bool {
	if pgid <= 0 {
		return true
	}
	deadline := time.Now().Add(groupGoneWait)
	for {
		if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
			return true
		}
		// Zombies answer kill(2) too.
		if pids, err := a.procs(); err == nil && !memory.GroupRuns(a.proc, pids, pgid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}
