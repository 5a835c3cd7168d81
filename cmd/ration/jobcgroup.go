package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/jobcgroup"
	"github.com/ration-run/ration/limits"
)

// jobCgroupEnv turns the jobs' own memory cgroup off when set to 0,
// false or off: jobs and workers then start in ration's cgroup, where an
// OOM kill storm can take ration itself (package jobcgroup).
const jobCgroupEnv = "RATION_JOB_CGROUP"

// jobCgroup makes the memory cgroup that the run's jobs and workers start
// in (package jobcgroup), nil when there is none: no memory limit, a
// cgroup ration may not write, a snapshot's limits (--fs-root), a dry run,
// or RATION_JOB_CGROUP turns it off. Why there is none is logged at debug
// level (`ration limits` says it too).
func (w *wiring) jobCgroup() *jobcgroup.Group {
	p := w.plan
	if envOff(p.limits.Getenv, jobCgroupEnv) || p.limits.FSRoot != "" || p.cfg.DryRun {
		return nil
	}
	g, err := jobcgroup.Create(jobcgroup.Options{})
	switch {
	case err == nil:
		w.log.Debug("jobs' memory cgroup", "event", "job_cgroup", "group", g.String())
	case errors.Is(err, jobcgroup.ErrNoLimit) || errors.Is(err, errors.ErrUnsupported):
		w.log.Debug("no jobs' memory cgroup", "event", "job_cgroup", "why", err.Error())
	default:
		w.log.Debug("no jobs' memory cgroup: jobs share ration's, and an OOM kill there can take ration", "event", "job_cgroup", "why", err.Error())
	}
	return g
}

// jobsCgroupJSON is the "jobs_cgroup" object of `ration limits --json`:
// the limit and reserve of the jobs' memory cgroup that ration run would
// make, or why it would make none.
type jobsCgroupJSON struct {
	LimitBytes   int64  `json:"limit_bytes,omitempty"`
	ReserveBytes int64  `json:"reserve_bytes,omitempty"`
	None         string `json:"none,omitempty"`
}

// jobCgroupJSON says what ration run would do with the environment read
// through getenv: RATION_JOB_CGROUP may turn the cgroup off.
func jobCgroupJSON(s cgroup.Snapshot, getenv func(string) string) *jobsCgroupJSON {
	if envOff(getenv, jobCgroupEnv) {
		return &jobsCgroupJSON{None: fmt.Sprintf("%s=%s turns it off", jobCgroupEnv, getenv(jobCgroupEnv))}
	}
	reserve, err := jobcgroup.Check(s)
	if err != nil {
		return &jobsCgroupJSON{None: strings.TrimPrefix(err.Error(), "jobcgroup: ")}
	}
	return &jobsCgroupJSON{LimitBytes: s.MemoryLimit - reserve, ReserveBytes: reserve}
}

// jobCgroupPlan says, for `ration limits`, whether ration run would give
// its jobs a memory cgroup of their own (j, from jobCgroupJSON), and with
// what limit.
func jobCgroupPlan(j *jobsCgroupJSON) string {
	if j.None != "" {
		return "none, jobs share ration's (" + j.None + ")"
	}
	return fmt.Sprintf("a child of the memory cgroup, limited to %s (%s kept for ration)",
		limits.FormatSize(j.LimitBytes), limits.FormatSize(j.ReserveBytes))
}
