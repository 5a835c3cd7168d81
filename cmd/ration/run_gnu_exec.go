package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/runner"
)

// gnuExecFlags are GNU parallel's flags that change how jobs run (see
// docs/compat.md): --nice, --termseq.
type gnuExecFlags struct {
	nice    int
	termSeq string
	// niceSet is whether --nice was given (0 is a niceness of its own).
	niceSet bool
}

// addGNUExecFlags adds GNU parallel's flags that change how jobs run.
func addGNUExecFlags(fs *pflag.FlagSet, f *runFlags) {
	x := &f.exec
	fs.IntVar(&x.nice, "nice", 0, "run every job at niceness `N` (-20..19; as GNU parallel, the value itself, not an increment; Linux only)")
	fs.StringVar(&x.termSeq, "termseq", "", "stop a job (--timeout, --halt now, an interrupt) with this `SEQ` of signals and waits in ms, e.g. TERM,200,TERM,100,KILL,25 (default TERM,2000,KILL; SIGKILL follows the last wait)")
}

// gnuExecParsed sets what parseRunFlags learns from the FlagSet.
func gnuExecParsed(fs *pflag.FlagSet, f *runFlags) {
	f.exec.niceSet = fs.Changed("nice")
}

// planGNUExec checks the flags that change how jobs run: --nice,
// --termseq.
func planGNUExec(p *runPlan, f *runFlags, _ func(string) string) error {
	x, gx := &f.exec, &p.cfg.GNU.Exec
	worker := p.worker.command != ""
	if x.niceSet {
		switch {
		case !runner.NiceSupported:
			return flagMsg("--nice", fmt.Sprintf("--nice is supported on Linux only (not %s): run nice -n N ration run ...", runtime.GOOS))
		case x.nice < -20 || x.nice > 19:
			return flagErr("--nice", fmt.Errorf("%d is not a niceness (-20..19)", x.nice))
		case worker:
			return flagMsg("--nice", "--nice cannot be combined with --worker: run nice -n N ration run ...")
		}
		gx.Nice, gx.NiceSet = x.nice, true
	}
	if x.termSeq != "" {
		if worker {
			return flagMsg("--termseq", "--termseq cannot be combined with --worker (a worker is stopped by closing its stdin, then killed)")
		}
		if runtime.GOOS == "windows" {
			return flagMsg("--termseq", "--termseq is not supported on Windows, where a stopped job is killed at once")
		}
		q, err := runner.ParseTermSeq(x.termSeq)
		if err != nil {
			return flagErr("--termseq", err)
		}
		// One mechanism: the sequence replaces the SIGTERM-grace-SIGKILL
		// of a stopped job, and its waits are the grace the signal
		// handling allows the jobs before it gives up on the run.
		gx.TermSeq, p.cfg.Grace = q, q.Total()
	}
	return nil
}
