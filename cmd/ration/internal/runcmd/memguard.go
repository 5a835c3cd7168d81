package runcmd

import (
	"context"
	"log/slog"

	"github.com/ration-run/ration/cmd/ration/internal/cli"
	"github.com/ration-run/ration/internal/gnurun"
	"github.com/ration-run/ration/internal/memory"
)

// guardRun is a running memory guard.
type guardRun struct {
	g    *memory.Guard
	done chan struct{} // closed when Run returned
	end  context.CancelFunc
}

// get returns the guard; nil for a nil r (none runs).
func (r *guardRun) get() *memory.Guard {
	if r == nil {
		return nil
	}
	return r.g
}

// stop stops the guard and waits for it; a nil r does nothing.
func (r *guardRun) stop() {
	if r == nil {
		return
	}
	r.end()
	<-r.done
}

// startMemoryGuard starts ration's memory guard where oomProtection says
// it is the defence (the jobs share ration's cgroup: w.jobs is nil), nil
// otherwise.
func (w *wiring) startMemoryGuard() *guardRun {
	p := w.plan
	if w.jobs != nil || p.limits.FSRoot != "" || p.cfg.DryRun {
		return nil
	}
	s := cli.OwnMemorySampler()
	o := cli.OOMProtection(s, false, p.limits.Getenv)
	if o.Defence != cli.DefenceGuard {
		w.log.Debug("no memory guard", "event", "memory_guard", "defence", o.Defence, "why", o.Note)
		return nil
	}
	g, err := memory.NewGuard(s, w.log)
	if err != nil {
		w.log.Warn("no memory guard", "event", "memory_guard", "err", err)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &guardRun{g: g, done: make(chan struct{}), end: cancel}
	go func() {
		defer close(r.done)
		if err := g.Run(ctx); err != nil {
			w.log.Warn("memory guard stopped", "event", "memory_guard", "err", err)
		}
	}()
	w.log.Debug("memory guard", "event", "memory_guard", "why", o.Note)
	return r
}

// guardNice is the niceness the jobs, or the workers, start at where the
// guard g is the defence (nil: it is not): 10 more than ration's own, at
// most 19. Where the jobs keep every CPU of the pod busy, a reading of the
// guard otherwise waits for a CPU behind them, and a reading late by more
// than the margin lasts lets the kernel's group kill come first
// (bench/results/memguard: the v2 lane's stress). Inside a container's
// CPU cgroup, niceness weighs the jobs against ration only, not against
// other pods. ok is false where g is nil or ration's niceness is unknown.
func guardNice(g *memory.Guard, log *slog.Logger) (nice int, ok bool) {
	if g == nil {
		return 0, false
	}
	own, err := ownNice()
	if err != nil {
		log.Debug("jobs keep ration's niceness", "event", "memory_guard", "err", err)
		return 0, false
	}
	nice = min(own+10, 19)
	log.Debug("jobs start 10 nicer than ration, so that the memory guard is not kept waiting for a CPU", "event", "memory_guard", "nice", nice)
	return nice, true
}

// guardJobNice sets the jobs' niceness to guardNice's unless --nice set
// it (--worker: the workers get it, see workerExecutor).
func (w *wiring) guardJobNice(x *gnurun.GNUExec) {
	if x.NiceSet || w.plan.worker.command != "" {
		return
	}
	if n, ok := guardNice(w.guard.get(), w.log); ok {
		x.Nice, x.NiceSet = n, true
	}
}
