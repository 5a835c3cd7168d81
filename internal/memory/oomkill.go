// The OOM-kill helpers hold what the job runner and the worker pool both need
// to survive the kernel's OOM killer and to tell its kills from other
// SIGKILLs. oom_score_adj is Linux's: elsewhere Prefer does nothing.
package memory

import (
	"strconv"
	"sync"
	"time"
)

// ScoreAdj is how much the oom_score_adj of every job or worker process is
// raised above ration's own right after it starts (up to the maximum,
// 1000). When the memory cgroup that ration shares with its children runs
// out, the kernel's OOM killer then takes a child, whose kill ration
// notices and handles, rather than ration itself, which holds the joblog
// and the record of every job. (Right after a first kill the victim's
// memory may not be freed yet, and a second kill would otherwise pick the
// next largest process: often ration.) Raising needs no privilege.
const ScoreAdj = 500

// PreferAsVictim raises the oom_score_adj of process pid to this process's
// own plus ScoreAdj. It is best effort: a process that is already gone or a
// /proc that cannot be written changes nothing.
func PreferAsVictim(pid int) { new(Victims).Prefer(pid) }

// Victims is PreferAsVictim for a caller that starts many processes: it
// reads this process's own oom_score_adj once, at the first call, rather
// than once per process (a job runner starts thousands of short jobs, and
// the read is a third of the cost). The zero value is ready to use and safe
// for concurrent use.
type Victims struct {
	once  sync.Once
	score []byte
	ok    bool
}

// Prefer raises the oom_score_adj of process pid like PreferAsVictim.
func (v *Victims) Prefer(pid int) {
	v.once.Do(func() {
		n, ok := victimScore()
		v.score, v.ok = []byte(strconv.Itoa(n)), ok
	})
	if v.ok {
		writeScore(pid, v.score)
	}
}

// Rose reports whether the OOM-kill counter that read returns is above
// base. The kernel counts a kill right after sending SIGKILL, so a wait
// (or a reaper) that returned before the counter moved is covered by a few
// short re-reads. A negative reading means the counter is unreadable.
func Rose(read func() int64, base int64) bool {
	for range 3 {
		n := read()
		if n > base {
			return true
		}
		if n < 0 {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}
