package runner

import (
	"context"
	"time"

	"github.com/ration-run/ration/internal/gnu"
	"github.com/ration-run/ration/runner/event"
)

// installDialect installs the attempt hooks of GNU parallel's options
// (Config.GNU): --timeout P%, --memfree's stop of the youngest job, the
// options of how a job runs, the output routing (--tag, --results,
// --files, -v ...), --workdir, --pipe's stdin and its empty blocks.
func (r *Runner) installDialect() {
	g, h := &r.cfg.GNU, &r.hooks
	if g.Delay > 0 {
		dl := &gnu.Delayer{D: g.Delay}
		h.beforeStart = dl.Wait
	}
	if g.Results == "" {
		h.dryRunPrefix = func(it item) []byte {
			tag, _ := r.tag(it, 1)
			return tag
		}
	}
	h.compressSpill = g.Exec.Compress
	if g.Exec.Gate.active() {
		h.startGate = r.waitGate
	}
	if r.cfg.Input != nil || g.Args != nil {
		h.source = r.batches
	}
	h.sendSize = r.sendOf
	if g.Exec.ResultsTable != "" {
		h.records = append(h.records, r.tableRow)
	}
	if g.TimeoutPercent > 0 {
		h.bound = append(h.bound, r.percentTimeout)
	}
	if g.Exec.Gate.MemFree > 0 {
		h.bound = append(h.bound, func(ctx context.Context, j *job) (context.Context, context.CancelFunc) {
			return r.memFreeWatch(ctx, func() {}, j)
		})
		h.requeue = append(h.requeue, ErrMemFree)
	}
	h.prepare = append(h.prepare, r.execOptions, r.routeOutput)
	if g.Exec.Workdir != "" {
		h.prepare = append(h.prepare, r.prepareWorkdir)
	}
	if g.Pipe {
		h.prepare = append(h.prepare, r.preparePipe)
		if !g.PipeArg && g.Stdin == nil {
			h.skip = append(h.skip, r.skipEmptyBlock)
		}
	}
}

// execOptions gives the attempt GNUExec's options of how a job runs.
func (r *Runner) execOptions(_ *job, a *Attempt) (func(), error) {
	a.AttemptExec = r.cfg.GNU.Exec.attempt()
	return nil, nil
}

// routeOutput gives the attempt its writers (attemptWriters).
func (r *Runner) routeOutput(j *job, a *Attempt) (done func(), err error) {
	a.Stdout, a.Stderr, done, err = r.attemptWriters(j)
	return done, err
}

// prepareWorkdir gives the attempt its --workdir, made.
func (r *Runner) prepareWorkdir(j *job, a *Attempt) (func(), error) {
	dir, err := r.jobWorkdir(j)
	a.Dir = dir
	return nil, err
}

// preparePipe gives a --pipe attempt its stdin.
func (r *Runner) preparePipe(j *job, a *Attempt) (func(), error) {
	in, done, err := r.pipeStdin(j.it.input)
	a.Stdin = in
	return done, err
}

// skipEmptyBlock ends an attempt on an empty --pipe block: GNU parallel
// wraps a --pipe job's command in an EOF detector, so a block that --rrs
// left empty starts no command, and the job succeeds.
func (r *Runner) skipEmptyBlock(j *job, st *attemptStart) (AttemptResult, bool) {
	if j.it.input != "" {
		return AttemptResult{}, false
	}
	st.started(j.slot, 0)
	return AttemptResult{Outcome: event.Succeeded, Start: time.Now()}, true
}

// sendOf is the joblog's Send of ended job j, as GNU parallel 20221122
// counts it for local jobs: the bytes of a --pipe job's block (GNU's
// SendSize), else 0. It is asked once per job that started, so that
// SendSize may forget the job.
func (r *Runner) sendOf(j *job) int64 {
	g := &r.cfg.GNU
	switch {
	case !g.Pipe:
		return 0
	case g.SendSize != nil:
		return g.SendSize(j.it.input)
	case g.Stdin == nil:
		return int64(len(j.it.input))
	}
	return 0
}
