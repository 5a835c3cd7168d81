package runcmd

import (
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/limits"
)

// jobsFlags are the flags of how many jobs run: -j and what the limits
// decision reads besides the cgroups.
type jobsFlags struct {
	jobs      string
	memPerJob memFlag
	fsRoot    string
}

// addJobsFlags adds jobsFlags' flags to fs.
func addJobsFlags(fs *pflag.FlagSet, g *jobsFlags) {
	fs.StringVarP(&g.jobs, "jobs", "j", "", "jobs at once: `N`, N% of the effective CPUs, +N/-N (the effective CPUs plus/minus N), or a FILE holding one, read again as jobs end (default: RATION_JOBS, then 2 per CPU, at most 8)")
	fs.Var(&g.memPerJob, "mem-per-job", "expected memory of one job, `SIZE` like 512M; caps jobs at 0.9 x memory limit / SIZE; auto learns it from the peak RSS of finished jobs")
	fs.StringVar(&g.fsRoot, "fs-root", "", "read the cgroup files below `DIR` (a snapshot) instead of the live system")
}

// planJobs checks the -j value in force, the flag's or else RATION_JOBS,
// and sets the options of the limits decision. GNU parallel's -j +N and
// -j -N go to the decision as they are: it counts them from the CPUs it
// finds, explains them, and refuses one that leaves no job slot.
func planJobs(p *runPlan, f *runFlags, getenv func(string) string) error {
	if f.jobs == "0" {
		f.jobs, p.jobsZero = jobsZero, true
	}
	spec, err := checkJobs(f.jobs, getenv)
	if err != nil {
		return err
	}
	p.jobsSpec, p.memAuto = spec, f.memPerJob.Auto
	p.limits = limits.Options{FSRoot: f.fsRoot, Jobs: f.jobs, Getenv: getenv, MemPerJob: int64(f.memPerJob.Size), RefuseNoSlot: true}
	return nil
}

// decide makes the limits decision: how many jobs, and why.
func (w *wiring) decide() error {
	d, err := limits.Decide(w.plan.limits)
	if err != nil {
		return err
	}
	for _, msg := range d.Warnings {
		w.say.say(slog.LevelWarn, "ration run: warning: ", msg)
	}
	if _, msg := limits.AdjustGOMAXPROCS(d); msg != "" {
		w.log.Debug(msg, "event", "gomaxprocs")
	}
	w.decision = d
	return nil
}
