package runner

import "github.com/ration-run/ration/internal/memory"

// JobOOMScoreAdj is how much the oom_score_adj of every job process is
// raised above ration's own right after it starts, so that when the memory
// cgroup ration shares with its jobs runs out, the kernel kills a job (a
// kill ration handles) rather than ration, which holds the joblog.
const JobOOMScoreAdj = memory.ScoreAdj
