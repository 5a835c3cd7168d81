package gnurun

import (
	"github.com/ration-run/ration/internal/gnu"
	"github.com/ration-run/ration/internal/runhook"
)

// Install returns the hooks of the GNU options (runhook.Dialect): the
// input source of batches and fields, InputIsCommand's commands, --delay,
// the start gate, --timeout P%, --memfree's stop of the youngest job, the
// options of how a job runs, the output routing (--tag, --results,
// --files, -v ...), --workdir, --pipe's stdin and its empty blocks, and
// the --results table. Its error says a template of the options
// (--tagstring, --workdir) does not parse.
func (g *GNU) Install(e runhook.Engine) (runhook.Hooks, error) {
	tag, err := parseTag(g)
	if err != nil {
		return runhook.Hooks{}, err
	}
	workdir, err := parseWorkdir(g)
	if err != nil {
		return runhook.Hooks{}, err
	}
	r := &state{g: *g, e: e, log: e.Logger, tag: tag, workdir: workdir}
	r.exec.gate.readMachine = g.readMachine
	x := &r.g.Exec
	h := runhook.Hooks{
		AnyCommand:    r.g.InputIsCommand,
		BySeq:         r.g.Pipe,
		CompressSpill: x.Compress,
		SendSize:      r.sendOf,
		Ended:         r.ended,
	}
	if e.Input != nil || r.g.Args != nil {
		h.Source = r.batches
	}
	if r.g.InputIsCommand {
		h.Argv, h.Display = r.argv, r.display
	}
	if r.g.Delay > 0 {
		dl := &gnu.Delayer{D: r.g.Delay}
		h.BeforeStart = dl.Wait
	}
	if r.g.Results == "" {
		h.DryRunPrefix = func(it runhook.Item) []byte {
			tag, _ := r.tagOf(it, 1)
			return tag
		}
	}
	if x.Gate.active() {
		h.Gate = &gateHook{r: r}
	}
	if x.ResultsTable != "" {
		h.Records = append(h.Records, r.tableRow)
	}
	if r.g.TimeoutPercent > 0 {
		h.Bound = append(h.Bound, r.percentTimeout)
	}
	if x.Gate.MemFree > 0 {
		h.Bound = append(h.Bound, r.memFreeWatch)
		h.Requeue = append(h.Requeue, ErrMemFree)
	}
	h.Prepare = append(h.Prepare, r.execOptions, r.routeOutput)
	if x.Workdir != "" {
		h.Prepare = append(h.Prepare, r.prepareWorkdir)
	}
	if r.g.Pipe {
		h.Prepare = append(h.Prepare, r.preparePipe)
		if !r.g.PipeArg && r.g.Stdin == nil {
			h.Skip = skipEmptyBlock
		}
	}
	return h, nil
}

// execOptions gives the attempt GNUExec's options of how a job runs.
func (r *state) execOptions(_ runhook.Job, a *runhook.Attempt) (func(), error) {
	x := &r.g.Exec
	a.Nice, a.NiceSet, a.TermSeq, a.SlotVar = x.Nice, x.NiceSet, x.TermSeq, x.SlotVar
	return nil, nil
}

// routeOutput gives the attempt its writers (attemptWriters).
func (r *state) routeOutput(j runhook.Job, a *runhook.Attempt) (done func(), err error) {
	a.Stdout, a.Stderr, done, err = r.attemptWriters(j)
	return done, err
}

// prepareWorkdir gives the attempt its --workdir, made.
func (r *state) prepareWorkdir(j runhook.Job, a *runhook.Attempt) (func(), error) {
	dir, err := r.jobWorkdir(j)
	a.Dir = dir
	return nil, err
}

// preparePipe gives a --pipe attempt its stdin.
func (r *state) preparePipe(j runhook.Job, a *runhook.Attempt) (func(), error) {
	in, done, err := r.pipeStdin(j.Item().Input)
	a.Stdin = in
	return done, err
}

// skipEmptyBlock ends an attempt on an empty --pipe block: GNU parallel
// wraps a --pipe job's command in an EOF detector, so a block that --rrs
// left empty starts no command, and the job succeeds.
func skipEmptyBlock(j runhook.Job) bool { return j.Item().Input == "" }

// sendOf is the joblog's Send of ended job j, as GNU parallel 20221122
// counts it for local jobs: the bytes of a --pipe job's block (GNU's
// SendSize), else 0. It is asked once per job that started, so that
// SendSize may forget the job.
func (r *state) sendOf(j runhook.Job) int64 {
	g := &r.g
	switch {
	case !g.Pipe:
		return 0
	case g.SendSize != nil:
		return g.SendSize(j.Item().Input)
	case g.Stdin == nil:
		return int64(len(j.Item().Input))
	}
	return 0
}

// ensure *GNU is a dialect.
var _ runhook.Dialect = (*GNU)(nil)
