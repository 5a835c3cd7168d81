package runcmd

import (
	"errors"

	"github.com/ration-run/ration/cmd/ration/internal/cli"
	"github.com/ration-run/ration/internal/jobcgroup"
)

// jobCgroup makes the memory cgroup that the run's jobs and workers start
// in (package jobcgroup), nil when there is none: no memory limit, a
// cgroup ration may not write, a snapshot's limits (--fs-root), a dry run,
// or RATION_JOB_CGROUP turns it off. Why there is none is logged at debug
// level (`ration limits` says it too).
func (w *wiring) jobCgroup() *jobcgroup.Group {
	p := w.plan
	if cli.EnvOff(p.limits.Getenv, cli.JobCgroupEnv) || p.limits.FSRoot != "" || p.cfg.DryRun {
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
