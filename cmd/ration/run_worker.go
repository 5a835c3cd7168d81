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
	"github.com/ration-run/ration/runner/metrics"
	"github.com/ration-run/ration/runner/reaper"
	"github.com/ration-run/ration/runner/worker"
	"github.com/ration-run/ration/runner/workerexec"
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

// adaptation is what changes a run's concurrency while it runs: the
// runner's controller (the runner owns it, in both modes), the worker
// pool's executor (--worker), and the goroutine that watches the limits.
type adaptation struct {
	exec *workerexec.Executor // --worker; nil otherwise
	ctrl *adapt.Controller    // the runner's; set by start
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

// adapt sets up the run's adaptation before runner.New: the runner's
// controller configuration (with the OOM rule in process mode) and the
// limits watch. jobs is the -j flag.
func (f *workerFlags) adapt(log *slog.Logger, d limits.Decision, jobs string, mem memFlag, fsRoot string,
	interval time.Duration, m *metrics.Metrics) (*adaptation, *adapt.Config) {
	a := &adaptation{log: log, interval: interval}
	ac := &adapt.Config{LimitReason: d.Reason, LearnMemory: mem.auto, MemoryLimit: adapt.MemoryOf(d),
		HalveOnJobOOM: *f.command == "", Logger: log}
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
	return a, ac
}

// workerExecutor returns the executor of the worker processes (--worker),
// which the runner starts and stops; its pool's events go to the run's
// observers.
func (a *adaptation) workerExecutor(f *workerFlags, d limits.Decision, mem memFlag,
	timeout time.Duration, stderr io.Writer, rp *reaper.Reaper) (*workerexec.Executor, error) {
	e, err := workerexec.New(worker.Config{
		Reaper:  rp,
		Command: worker.ShellCommand(*f.command), Size: d.Jobs, Timeout: timeout,
		MaxBreaks: *f.maxBreaks, MaxTasks: *f.maxTasks, MaxRSS: int64(f.maxRSS), SampleRSS: mem.auto,
		Logger: a.log, Stderr: stderr,
	})
	if err != nil {
		return nil, fmt.Errorf("--worker: %w", err)
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
