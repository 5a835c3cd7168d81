package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

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

// newAdaptation sets up the run's adaptation before the runner exists:
// in process mode a controller of the runner's job pool (target, which
// the runner's events drive once it is added as an observer), with the
// OOM rule; in worker mode nothing yet (see startWorkers). With
// --watch-limits it re-decides the limits as they change, and keeps the
// metrics' limits (m, nil without metrics) up to date.
func newAdaptation(p *runPlan, log *slog.Logger, d limits.Decision, m *metrics.Metrics, target adapt.Resizer) *adaptation {
	a := &adaptation{log: log, interval: p.worker.interval}
	if p.worker.command == "" {
		a.ctrl = adapt.New(target, adapt.Config{Limit: d.Jobs, LimitReason: d.Reason,
			LearnMemory: p.memAuto, MemoryLimit: adapt.MemoryOf(d), HalveOnJobOOM: true, Logger: log})
	}
	if p.worker.watch {
		// The decider reads no RATION_JOBS: it gets the value in force.
		decide := adapt.CgroupDecider(0, p.jobsSpec, p.limits.MemPerJob)
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

// startWorkers starts the worker processes (--worker) and makes the pool
// the run's controller. obs receives the pool's worker and pool events
// (the runner reports the job events itself); the pool's resizes go to
// resize (the runner's), so no more jobs wait for a worker than there
// are workers.
func (a *adaptation) startWorkers(w workerPlan, memAuto bool, d limits.Decision, obs event.Observer,
	resize func(n int, why string), stderr io.Writer, rp *reaper.Reaper) (*worker.Pool, error) {
	p, err := worker.New(context.Background(), worker.Config{
		Reaper:  rp,
		Command: worker.ShellCommand(w.command), Size: d.Jobs, Timeout: w.timeout,
		MaxBreaks: w.maxBreaks, MaxTasks: w.maxTasks, MaxRSS: w.maxRSS,
		Observer: runner.WorkerEvents(obs, resize), Logger: a.log, Stderr: stderr,
		Adapt: adapt.Config{LimitReason: d.Reason, LearnMemory: memAuto, MemoryLimit: adapt.MemoryOf(d), Logger: a.log},
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
