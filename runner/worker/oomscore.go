package worker

import (
	"os"
	"strconv"
	"strings"
)

// OOMScoreAdj is how much the oom_score_adj of every worker process is
// raised above ration's own right after it starts (up to the maximum,
// 1000): when the memory cgroup that ration shares with its workers runs
// out, the kernel's OOM killer then takes a worker, whose break the pool
// handles, rather than the process that owns the pool. (Right after a
// first kill the victim's memory may not be freed yet, and a second kill
// would otherwise pick the next largest process: often ration.) Raising
// needs no privilege.
const OOMScoreAdj = 500

// preferAsOOMVictim raises the oom_score_adj of process pid to this
// process's own plus OOMScoreAdj. It is best effort: a process that is
// already gone or a /proc that cannot be written changes nothing.
func preferAsOOMVictim(pid int) {
	own, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		return
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(own)))
	if err != nil {
		return
	}
	_ = os.WriteFile("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", []byte(strconv.Itoa(min(n+OOMScoreAdj, 1000))), 0)
}
