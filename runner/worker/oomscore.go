package worker

import "github.com/ration-run/ration/internal/memory"

// OOMScoreAdj is how much the oom_score_adj of every worker process is
// raised above this process's own right after it starts, so that when the
// memory cgroup shared with the workers runs out, the kernel kills a worker
// (a break the pool handles) rather than the process that owns the pool.
const OOMScoreAdj = memory.ScoreAdj
