package memory

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// victimScore is this process's oom_score_adj plus ScoreAdj, capped.
func victimScore() (int, bool) {
	own, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(own)))
	if err != nil {
		return 0, false
	}
	return min(n+ScoreAdj, 1000), true
}

// writeScore uses raw system calls: for a /proc file written once, an
// os.File's poller registration and finalizer are pure cost.
func writeScore(pid int, score []byte) {
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", syscall.O_WRONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	_, _ = syscall.Write(fd, score)
	_ = syscall.Close(fd)
}
