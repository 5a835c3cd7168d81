package gnurun

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/ration-run/ration/internal/runhook"
)

// Check reports the first setting of g that a run with the engine's
// settings s cannot have (runhook.Dialect), in the options' own terms:
// the rules the field docs state, which ration run's flags also enforce
// (with the flags' names). runner.New returns it.
func (g *GNU) Check(s runhook.Settings) error {
	switch {
	case g.Delay < 0 || g.TimeoutPercent < 0:
		return errors.New("runner: negative GNU.Delay or GNU.TimeoutPercent")
	case g.Pipe && !g.oneArg():
		return errors.New("runner: GNU.Pipe needs one argument per job (GNU.Batch's MaxArgs <= 1, no MaxChars)")
	case !g.Pipe && (g.Stdin != nil || g.SendSize != nil || g.PipeArg):
		return errors.New("runner: GNU.Stdin, GNU.SendSize and GNU.PipeArg need GNU.Pipe")
	case g.PipeArg && s.Retries > 1:
		return errors.New("runner: GNU.PipeArg cannot be combined with Retries > 1: the block is given once")
	}
	if err := g.checkOutput(s); err != nil {
		return err
	}
	return g.Exec.checkPlatform()
}

// checkOutput reports the first of g's output settings that a run with
// the engine's settings s cannot have.
func (g *GNU) checkOutput(s runhook.Settings) error {
	x := &g.Exec
	switch {
	case g.Ungroup && !s.LineBuffer:
		return errors.New("runner: GNU.Ungroup needs LineBuffer")
	case x.ResultsTable != "" && g.Results != "":
		return errors.New("runner: GNU.Exec.ResultsTable and GNU.Results cannot be combined")
	case x.Files && (g.Results != "" || x.ResultsTable != ""):
		return errors.New("runner: GNU.Exec.Files and GNU.Results (or GNU.Exec.ResultsTable) cannot be combined")
	case x.Files && s.DryRun:
		return errors.New("runner: GNU.Exec.Files and DryRun cannot be combined")
	case x.Files && x.Compress:
		return errors.New("runner: GNU.Exec.Compress and GNU.Exec.Files cannot be combined: the kept files would not be compressed")
	case x.Parset != nil && !s.KeepOrder:
		return errors.New("runner: GNU.Exec.Parset needs KeepOrder (the values are assigned in input order)")
	case x.Parset != nil && len(x.Parset.Names) == 0:
		return errors.New("runner: GNU.Exec.Parset needs at least one name")
	case x.Parset != nil && (x.Files || g.Results != "" || x.ResultsTable != "" || s.DryRun):
		return errors.New("runner: GNU.Exec.Parset cannot be combined with GNU.Exec.Files, GNU.Results, GNU.Exec.ResultsTable or DryRun")
	}
	return nil
}

// checkPlatform reports the first setting of x that this system cannot
// honour.
func (x *GNUExec) checkPlatform() error {
	switch {
	case x.NiceSet && !runhook.NiceSupported:
		return fmt.Errorf("runner: GNU.Exec.Nice: a niceness for jobs is supported on Linux only (not %s)", runtime.GOOS)
	case x.NiceSet && (x.Nice < -20 || x.Nice > 19):
		return fmt.Errorf("runner: GNU.Exec.Nice: %d is not a niceness (-20..19)", x.Nice)
	case len(x.TermSeq) > 0 && runtime.GOOS == "windows":
		return errors.New("runner: GNU.Exec.TermSeq is not supported on Windows, where a stopped job is killed at once")
	case x.Gate.active() && !GateSupported:
		return fmt.Errorf("runner: GNU.Exec.Gate reads /proc: Linux only (not %s)", runtime.GOOS)
	case x.Gate.MaxLoad < 0 || x.Gate.MemFree < 0:
		return errors.New("runner: negative GNU.Exec.Gate.MaxLoad or MemFree")
	}
	return nil
}
