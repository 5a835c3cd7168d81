package runcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/adapt"
	"github.com/ration-run/ration/internal/flagvalue"
	"github.com/ration-run/ration/internal/jobcgroup"
	"github.com/ration-run/ration/internal/memory"
	"github.com/ration-run/ration/internal/metrics"
	"github.com/ration-run/ration/internal/reaper"
	"github.com/ration-run/ration/internal/workerexec"
	"github.com/ration-run/ration/internal/workershell"
	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner/worker"
)

// workerFlags are the flags of worker processes (--worker) and of the
// adaptation of the concurrency while running.
type workerFlags struct {
	worker        string
	maxBreaks     int
	maxTasks      int
	maxRSS        sizeFlag
	watchLimits   bool
	watchInterval string
	// workerGiven is whether --worker was given at all, even empty.
	workerGiven bool
}

// addWorkerFlags adds workerFlags' flags to fs.
func addWorkerFlags(fs *pflag.FlagSet, g *workerFlags) {
	fs.StringVar(&g.worker, "worker", "", "send each input as a task to long-lived worker processes started with the shell command `CMD` (JSON lines protocol, see docs/workers.md) instead of running COMMAND per input")
	fs.IntVar(&g.maxBreaks, "max-breaks", worker.DefaultMaxBreaks, "--worker: quarantine a task after it broke `N` workers (an OOM kill follows the OOM rule instead: quarantined once killed alone, or at the 3rd kill)")
	fs.IntVar(&g.maxTasks, "worker-max-tasks", 0, "--worker: replace a worker after `N` tasks (0: never)")
	fs.Var(&g.maxRSS, "worker-max-rss", "--worker: replace a worker once its process tree's RSS exceeds `SIZE` after a task (0: never)")
	fs.BoolVar(&g.watchLimits, "watch-limits", true, "re-read the cgroup CPU and memory limits while running and resize the pool when they change")
	fs.StringVar(&g.watchInterval, "watch-interval", adapt.DefaultWatchInterval.String(), "with --watch-limits, re-read the limits every `DURATION`")
}

// adaptation is what changes a run's concurrency while it runs, around
// the runner's own controller (the runner owns it in both modes, see
// package runner): the worker processes' executor (--worker) and the
// goroutine that watches the limits.
type adaptation struct {
	exec *workerexec.Executor // --worker; nil otherwise
	ctrl *adapt.Controller    // the runner's; set by start
	log  *slog.Logger

	interval time.Duration
	watch    adapt.DecideFunc // nil: no watching
	jobs     *jobcgroup.Group // the jobs' memory cgroup, which the watch resizes; set before start
	guard    *memory.Guard    // ration's memory guard, whose stops the workers' OOM counter counts; nil: none
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// oomCounter returns the reader of the oom_kill counter of the memory
// cgroup the jobs run in: the jobs' cgroup jobs, or else ration's own; nil
// when there is none or the limits come from a snapshot (--fs-root).
func oomCounter(fsRoot string, jobs *jobcgroup.Group) func() (int64, error) {
	if fsRoot != "" {
		return nil
	}
	if jobs != nil {
		return func() (int64, error) { return cgroup.OOMKills(jobs.Dir, jobs.Version) }
	}
	snap, err := cgroup.Reader{}.Read()
	if err != nil || snap.MemoryDir == "" {
		return nil
	}
	if _, err := cgroup.OOMKills(snap.MemoryDir, snap.MemoryVersion); err != nil {
		return nil
	}
	return func() (int64, error) { return cgroup.OOMKills(snap.MemoryDir, snap.MemoryVersion) }
}

// newAdaptation sets up the run's adaptation before the runner exists,
// and returns the configuration of the runner's controller: in process
// mode with the OOM rule (a job OOM-killed halves the size; the worker
// pool has its own rule for broken workers). With --watch-limits it
// re-decides the limits as they change, keeps the metrics' limits (m,
// nil without metrics) up to date, and GOMAXPROCS with them.
func newAdaptation(p *runPlan, log *slog.Logger, d limits.Decision, m *metrics.Metrics) (*adaptation, *adapt.Config) {
	a := &adaptation{log: log, interval: p.worker.interval}
	ac := &adapt.Config{LimitReason: d.Reason, LearnMemory: p.memAuto, MemoryLimit: adapt.MemoryOf(d),
		HalveOnJobOOM: p.worker.command == "", Logger: log}
	if p.worker.watch {
		// The decider reads no RATION_JOBS: it gets the value in force.
		decide := adapt.CgroupDecider(0, p.jobsSpec, p.limits.MemPerJob)
		a.watch = func(ctx context.Context) (limits.Decision, error) {
			nd, err := decide(ctx)
			if err == nil && m != nil {
				m.SetLimits(nd)
			}
			if err == nil {
				// As at the start (wiring.decide): a limit the Go runtime
				// does not see changed, or went away.
				if changed, msg := limits.AdjustGOMAXPROCS(nd); changed {
					log.Info(msg)
				}
			}
			if err == nil && a.jobs != nil {
				// The jobs' cgroup follows a resized limit, or a lifted
				// one (none: 0), and the jobs share what it gives them.
				var limit int64
				if nd.MemoryLimitBytes != nil {
					limit = *nd.MemoryLimitBytes
				}
				if ferr := a.jobs.Follow(limit); ferr != nil {
					log.Warn("the jobs' memory cgroup keeps its limit", "err", ferr)
				}
				if jobsLimit := a.jobs.Limit; jobsLimit > 0 {
					nd.MemoryLimitBytes = &jobsLimit
				}
			}
			return nd, err
		}
	}
	return a, ac
}

// workerExecutor returns the executor of the worker processes
// (--worker), which the runner starts and stops; its pool's worker
// events go to the run's observers.
func (a *adaptation) workerExecutor(w workerPlan, memAuto bool, d limits.Decision, stderr io.Writer, rp *reaper.Reaper, jobs *jobcgroup.Group) (*workerexec.Executor, error) {
	var oom func() (int64, error) // nil: each worker's own cgroup's (worker.Config.OOMKills)
	if jobs != nil {
		oom = oomCounter("", jobs)
	}
	if a.guard != nil {
		oom = a.guard.Counter(oomCounter("", nil)) // the workers share ration's cgroup
	}
	cfg := worker.Config{
		Reaper: rp, Cgroup: jobs, OOMKills: oom,
		Command: workershell.Command(w.command), Size: d.Jobs, Timeout: w.timeout,
		MaxBreaks: w.maxBreaks, MaxTasks: w.maxTasks, MaxRSS: w.maxRSS, SampleRSS: memAuto,
		Logger: a.log, Stderr: stderr,
	}
	cfg.Nice, cfg.NiceSet = guardNice(a.guard, a.log)
	e, err := workerexec.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("--worker: %w", withoutPrefix(err, "worker: "))
	}
	a.exec = e
	return e, nil
}

// start watches the limits until stop, resizing through ctrl (the
// runner's controller).
func (a *adaptation) start(ctrl *adapt.Controller) {
	a.ctrl = ctrl
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	if a.watch != nil && a.ctrl != nil {
		a.wg.Go(func() { _ = adapt.Watch(ctx, a.ctrl, a.interval, a.watch) })
	}
}

// stop ends the watch. (The runner stops the worker processes at the end
// of its run.)
func (a *adaptation) stop() {
	if a.cancel != nil {
		a.cancel()
	}
	a.wg.Wait()
}

// summary is what the adaptation adds to the summary line: the workers'
// counters (replacements, breaks by cause, outcomes, concurrency), or the
// concurrency changes of the job pool and the learned memory per job.
func (a *adaptation) summary(memAuto bool) string {
	switch {
	case a.exec != nil:
		if a.exec.Pool() == nil {
			return "" // --dry-run: no worker started
		}
		st := a.exec.Stats()
		if a.ctrl != nil {
			st.Adapt = a.ctrl.Stats()
		}
		return st.String()
	case a.ctrl != nil:
		if st := a.ctrl.Stats(); st.Resizes > 0 || memAuto {
			return st.String()
		}
	}
	return ""
}

// workerPlan are the settings of the worker pool and of adaptation.
type workerPlan struct {
	// command is the --worker command, "" to run one process per job.
	command   string
	maxBreaks int
	maxTasks  int
	maxRSS    int64
	// timeout is the task timeout, enforced by the pool (a break).
	timeout time.Duration
	// watch re-reads the limits every interval (not with --fs-root).
	watch    bool
	interval time.Duration
}

// planWorker checks the flags of workers and adaptation.
func planWorker(p *runPlan, f *runFlags, _ func(string) string) error {
	switch {
	case f.maxBreaks < 1:
		return flagErr("--max-breaks", fmt.Errorf("%d is not at least 1", f.maxBreaks))
	case f.maxTasks < 0:
		return flagErr("--worker-max-tasks", fmt.Errorf("%d is negative", f.maxTasks))
	}
	iv, err := flagvalue.ParseDuration(f.watchInterval)
	if err != nil || iv <= 0 {
		return flagErr("--watch-interval", fmt.Errorf("%q is not a positive duration", f.watchInterval))
	}
	if f.workerGiven && strings.TrimSpace(f.worker) == "" {
		return flagErr("--worker", errors.New("empty command"))
	}
	p.worker = workerPlan{command: f.worker, maxBreaks: f.maxBreaks, maxTasks: f.maxTasks, maxRSS: int64(f.maxRSS),
		watch: f.watchLimits && f.fsRoot == "", interval: iv}
	return nil
}
