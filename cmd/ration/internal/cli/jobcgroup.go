package cli

import (
	"fmt"
	"strings"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/jobcgroup"
	"github.com/ration-run/ration/limits"
)

// JobCgroupEnv turns the jobs' own memory cgroup off when set to 0,
// false or off: jobs and workers then start in ration's cgroup, where an
// OOM kill storm can take ration itself (package jobcgroup).
const JobCgroupEnv = "RATION_JOB_CGROUP"

// JobsCgroupJSON is the "jobs_cgroup" object of `ration limits --json`:
// the limit and reserve of the jobs' memory cgroup that ration run would
// make, or why it would make none.
type JobsCgroupJSON struct {
	LimitBytes   int64  `json:"limit_bytes,omitempty"`
	ReserveBytes int64  `json:"reserve_bytes,omitempty"`
	None         string `json:"none,omitempty"`
}

// JobCgroupJSON says what ration run would do with the environment read
// through getenv: RATION_JOB_CGROUP may turn the cgroup off.
func JobCgroupJSON(s cgroup.Snapshot, getenv func(string) string) *JobsCgroupJSON {
	if EnvOff(getenv, JobCgroupEnv) {
		return &JobsCgroupJSON{None: fmt.Sprintf("%s=%s turns it off", JobCgroupEnv, getenv(JobCgroupEnv))}
	}
	reserve, err := jobcgroup.Check(s)
	if err != nil {
		return &JobsCgroupJSON{None: strings.TrimPrefix(err.Error(), "jobcgroup: ")}
	}
	return &JobsCgroupJSON{LimitBytes: s.MemoryLimit - reserve, ReserveBytes: reserve}
}

// JobCgroupPlan says, for `ration limits`, whether ration run would give
// its jobs a memory cgroup of their own (j, from JobCgroupJSON), and with
// what limit.
func JobCgroupPlan(j *JobsCgroupJSON) string {
	if j.None != "" {
		return "none, jobs share ration's (" + j.None + ")"
	}
	return fmt.Sprintf("a child of the memory cgroup, limited to %s (%s kept for ration)",
		limits.FormatSize(j.LimitBytes), limits.FormatSize(j.ReserveBytes))
}
