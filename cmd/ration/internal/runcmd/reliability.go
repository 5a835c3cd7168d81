package runcmd

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"syscall"

	"github.com/ration-run/ration/internal/logs"
	"github.com/ration-run/ration/internal/workershell"
	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/input"
	"github.com/ration-run/ration/runner/joblog"
)

// exitBrokenPipe is the status of a run whose stdout reader went away
// (`ration run ... | head -1`): 128+SIGPIPE, as a shell reports a
// process killed by it, though ration ended cleanly.
const exitBrokenPipe = 128 + 13

// checkRun makes the checks that must pass before any input is opened or
// the joblog touched: stdout is open (a closed stdout would discard every
// job's output while the joblog records them as done) and the joblog is
// none of the input files. It sets cfg.InputFiles for the joblog's own
// check, and hints when the inputs come from a terminal.
func (w *wiring) checkRun(cfg *runConfig, stdin io.Reader, stdout io.Writer) error {
	if f, ok := stdout.(*os.File); ok {
		if _, err := f.Stat(); errors.Is(err, syscall.EBADF) || errors.Is(err, os.ErrClosed) {
			return errors.New("standard output is closed: the jobs' output would be lost; redirect it to /dev/null to discard it")
		}
		if closedAtStart(f) {
			// It may also be a caller's read-write /dev/null (Python's
			// subprocess.DEVNULL): tell, do not refuse.
			w.say.say(slog.LevelWarn, "ration run: warning: ", "standard output looks closed (>&-; the Go runtime put /dev/null in its place): the jobs' output is discarded; redirect it to /dev/null to mean that")
		}
	}
	if c := w.plan.worker.command; c != "" && !w.plan.cfg.DryRun {
		// The shell is there for sure; the program it runs may not be.
		if err := workershell.CheckProgram(c); err != nil {
			return fmt.Errorf("--worker: %w", withoutPrefix(err, "worker: "))
		}
	}
	var files []string
	in := w.plan.input
	if in.kind == inputStdin {
		files = []string{"-"}
	}
	for _, s := range in.sources {
		if s.path != "" {
			files = append(files, s.path) // -a FILE, :::: FILE; "-" is stdin
		}
	}
	cfg.InputFiles = files
	if cfg.Joblog != "" && cfg.Joblog != "-" && !cfg.DryRun {
		if err := joblog.CheckNotInput(cfg.Joblog, files); err != nil {
			return fmt.Errorf("--joblog: %w", err)
		}
	}
	if f, ok := stdin.(*os.File); ok && in.kind == inputStdin && logs.IsTerminal(f) {
		if w.plan.bare {
			// Typed by mistake far more often than a list of command
			// lines typed on the terminal.
			return flagMsg("", errNoCommand)
		}
		w.say.say(slog.LevelWarn, "ration run: ", "reading inputs from the terminal, one per line; end them with Ctrl-D (or give inputs after :::, with -a FILE or --files)")
	}
	return nil
}

// openedInput reads the inputs of -a path from f, which wire opened, and
// closes it at the end: a file is opened once, so that a FIFO's writer
// is not cut off by a second open.
func openedInput(f *os.File, path string, values func(io.Reader) input.Seq) input.Seq {
	return func(yield func(string, error) bool) {
		defer f.Close()
		for rec, err := range values(f) {
			// gnuinput.Open puts the source's name (-a path) before the
			// error: the *PathError's name of the file would repeat it.
			var pe *os.PathError
			if errors.As(err, &pe) && pe.Path == path {
				err = pe.Err
			}
			if !yield(rec, err) {
				return
			}
		}
	}
}

// outputGone reports a run that stopped because its stdout (or stderr)
// could not be written, and returns its exit status: 141 for a reader
// that went away (EPIPE), as a shell reports SIGPIPE, else 255. ok is
// false for any other run.
func (w *wiring) outputGone(sum runner.Summary, runErr error) (status int, ok bool) {
	if !errors.Is(runErr, runner.ErrOutputGone) {
		return 0, false
	}
	say := w.say.say
	quiet := w.plan.observe.quiet
	hint := func() {
		if !w.plan.cfg.DryRun && !quiet { // a dry run has nothing to resume; -q prints errors only
			say(slog.LevelWarn, "", w.resumeHint())
		}
	}
	if errors.Is(runErr, syscall.EPIPE) {
		if quiet {
			// The reader went away (| head), as it may: with -q, as
			// for a shell pipeline, the status 141 says it all.
			return exitBrokenPipe, true
		}
		say(slog.LevelError, "ration run: ", fmt.Sprintf("standard output was closed by its reader (broken pipe): started no more jobs; %d done, %d failed, %d stopped; %v",
			sum.Succeeded, sum.Failed, sum.Killed, runErr))
		hint()
		return exitBrokenPipe, true
	}
	say(slog.LevelError, "ration run: ", fmt.Sprintf("stopped: %v; %d done, %d failed, %d stopped", runErr, sum.Succeeded, sum.Failed, sum.Killed))
	hint()
	return exitUsage, true
}
