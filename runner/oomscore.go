package runner

import (
	"os"
	"strconv"
	"strings"
)

// JobOOMScoreAdj is how much the oom_score_adj of every job process is
// raised above ration's own right after it starts (up to the maximum,
// 1000). When the memory cgroup that ration shares with its jobs runs out,
// the kernel's OOM killer then takes a job, whose kill ration notices and
// handles, rather than ration itself, which holds the joblog and the
// record of every job. (Right after a first kill the victim's memory may
// not be freed yet, and a second kill would otherwise pick the next
// largest process: often ration.) Raising needs no privilege.
const JobOOMScoreAdj = 500

// preferAsOOMVictim raises the oom_score_adj of process pid to ration's
// own plus JobOOMScoreAdj. It is best effort: a process that is already
// gone or a /proc that cannot be written changes nothing.
func preferAsOOMVictim(pid int) {
	own, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		return
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(own)))
	if err != nil {
		return
	}
	_ = os.WriteFile("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", []byte(strconv.Itoa(min(n+JobOOMScoreAdj, 1000))), 0)
}
