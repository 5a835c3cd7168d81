package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/adapt"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/metrics"
	"github.com/ration-run/ration/runner/reaper"
	"github.com/ration-run/ration/runner/worker"
)

// memFlag is --mem-per-job: a size, or "auto" to learn the memory of one
// job from the peak RSS of finished jobs.
type memFlag struct {
	size sizeFlag
	auto bool
}

// Set accepts "auto" or a size (see sizeFlag).
func (f *memFlag) Set(s string) error {
	if strings.EqualFold(strings.TrimSpace(s), "auto") {
		f.size, f.auto = 0, true
		return nil
	}
	f.auto = false
	return f.size.Set(s)
}

// String renders "auto" or the size in bytes.
func (f *memFlag) String() string {
	if f.auto {
		return "auto"
	}
	return f.size.String()
}

// Type names the value in pflag's usage text.
func (f *memFlag) Type() string { return "size|auto" }

// workerFlags are the flags of issue 5: worker processes and adaptation.
type workerFlags struct {
	command       *string
	maxBreaks     *int
	maxTasks      *int
	maxRSS        sizeFlag
	watchLimits   *bool
	watchInterval *string
}

func addWorkerFlags(fs *pflag.FlagSet) *workerFlags {
	f := &workerFlags{
		command:       fs.String("worker", "", "send each input as a task to long-lived worker processes started with the shell command `CMD` (JSON lines protocol, see docs/workers.md) instead of running COMMAND per input"),
		maxBreaks:     fs.Int("max-breaks", worker.DefaultMaxBreaks, "--worker: quarantine a task after it broke `N` workers"),
		maxTasks:      fs.Int("worker-max-tasks", 0, "--worker: replace a worker after `N` tasks (0: never)"),
		watchLimits:   fs.Bool("watch-limits", true, "re-read the cgroup CPU and memory limits while running and resize the pool when they change"),
		watchInterval: fs.String("watch-interval", adapt.DefaultWatchInterval.String(), "with --watch-limits, re-read the limits every `DURATION`"),
	}
	fs.Var(&f.maxRSS, "worker-max-rss", "--worker: replace a worker once its process tree's RSS exceeds `SIZE` after a task (0: never)")
	return f
}

// adaptation is what changes a run's concurrency while it runs: the worker
// pool (--worker) with its own controller, or the controller of the
// runner's job pool, and the goroutine that watches the limits.
type adaptation struct {
	pool *worker.Pool      // --worker; nil otherwise
	ctrl *adapt.Controller // the controller of the pool or of the runner
	log  *slog.Logger

	interval time.Duration
	watch    adapt.DecideFunc // nil: no watching
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// check validates the flags and returns the --watch-interval; command is
// the COMMAND given, if any.
func (f *workerFlags) check(fs *pflag.FlagSet, command []string) (time.Duration, error) {
	switch {
	case *f.maxBreaks < 1:
		return 0, fmt.Errorf("--max-breaks: %d is not at least 1", *f.maxBreaks)
	case *f.maxTasks < 0:
		return 0, fmt.Errorf("--worker-max-tasks: %d is negative", *f.maxTasks)
	}
	d, err := runner.ParseDuration(*f.watchInterval)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--watch-interval: %q is not a positive duration", *f.watchInterval)
	}
	switch {
	case fs.Changed("worker") && strings.TrimSpace(*f.command) == "":
		return 0, fmt.Errorf("--worker: empty command")
	case *f.command != "" && len(command) > 0:
		return 0, fmt.Errorf("--worker takes no COMMAND (got %q): inputs go to the workers", strings.Join(command, " "))
	}
	return d, nil
}

// oomCounter returns the reader of the oom_kill counter of ration's own
// memory cgroup (where the jobs run), nil when there is none or the limits
// come from a snapshot (--fs-root).
func oomCounter(fsRoot string) func() (int64, error) {
	if fsRoot != "" {
		return nil
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

// adapt sets up the run's adaptation before runner.New: in process mode a
// controller that the runner's events drive (returned as an observer to
// add), with the OOM rule; in worker mode nothing yet (see startPool).
// jobs is the -j flag; resize is called with the new size.
func (f *workerFlags) adapt(log *slog.Logger, d limits.Decision, jobs string, mem memFlag, fsRoot string,
	interval time.Duration, m *metrics.Metrics, resize func(n int, why string)) *adaptation {
	a := &adaptation{log: log, interval: interval}
	if *f.command == "" {
		a.ctrl = adapt.New(adapt.ResizeFunc(resize), adapt.Config{Limit: d.Jobs, LimitReason: d.Reason,
			LearnMemory: mem.auto, MemoryLimit: adapt.MemoryOf(d), HalveOnJobOOM: true, Logger: log})
	}
	if *f.watchLimits && fsRoot == "" {
		// DecideFrom does not read RATION_JOBS: pass the value in force.
		spec := jobs
		if d.JobsSource == "RATION_JOBS" {
			spec = os.Getenv("RATION_JOBS")
		}
		decide := adapt.CgroupDecider(0, spec, int64(mem.size))
		a.watch = func(ctx context.Context) (limits.Decision, error) {
			nd, err := decide(ctx)
			if err == nil && m != nil {
				m.SetLimits(nd)
			}
			return nd, err
		}
	}
	return a
}

// startPool starts the worker processes (--worker) for the runner r, for
// its runner.WorkerExecutor. obs receives the pool's worker and pool
// events (the runner reports the job events itself); the pool's resizes
// resize r too, so no more jobs wait for a worker than there are workers.
func (a *adaptation) startPool(f *workerFlags, r *runner.Runner, d limits.Decision, mem memFlag,
	timeout time.Duration, obs event.Observer, stderr io.Writer, rp *reaper.Reaper) (*worker.Pool, error) {
	p, err := worker.New(context.Background(), worker.Config{
		Reaper:  rp,
		Command: worker.ShellCommand(*f.command), Size: d.Jobs, Timeout: timeout,
		MaxBreaks: *f.maxBreaks, MaxTasks: *f.maxTasks, MaxRSS: int64(f.maxRSS),
		Observer: runner.WorkerEvents(obs, r.Resize), Logger: a.log, Stderr: stderr,
		Adapt: adapt.Config{LimitReason: d.Reason, LearnMemory: mem.auto, MemoryLimit: adapt.MemoryOf(d), Logger: a.log},
	})
	if err != nil {
		return nil, fmt.Errorf("--worker: %w", err)
	}
	a.pool, a.ctrl = p, p.Controller()
	return p, nil
}

// start watches the limits until stop.
func (a *adaptation) start() {
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	if a.watch != nil && a.ctrl != nil {
		a.wg.Go(func() { _ = adapt.Watch(ctx, a.ctrl, a.interval, a.watch) })
	}
}

// stop ends the watch and the worker processes (a worker gets its stdin
// closed and some time to exit, then it is killed).
func (a *adaptation) stop() {
	if a.cancel != nil {
		a.cancel()
	}
	a.wg.Wait()
	if a.pool != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := a.pool.Close(ctx); err != nil {
			a.log.Warn("workers did not stop in time: killed", "err", err)
		}
	}
}

// summary is what the adaptation adds to the summary line: the workers'
// counters (replacements, breaks by cause, outcomes, concurrency), or the
// concurrency changes of the job pool and the learned memory per job.
func (a *adaptation) summary(memAuto bool) string {
	switch {
	case a.pool != nil:
		return a.pool.Stats().String()
	case a.ctrl != nil:
		if st := a.ctrl.Stats(); st.Resizes > 0 || memAuto {
			return st.String()
		}
	}
	return ""
}
