package runcmd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// gnuOverrideFlags are GNU parallel 20221122's options that cancel or override
// others (profiles and $PARALLEL can set those), or change how a job runs.
type gnuOverrideFlags struct {
	// noKeepOrder is --no-keep-order (--nok, --no-k): it cancels -k
	// wherever it is, as GNU's "no-* overrides *".
	noKeepOrder bool
	// silent is --silent: GNU's default, it cancels -v wherever it is
	// (not -t).
	silent bool
	// plain is --plain: -J profiles and $PARALLEL are not read (gnuArgs).
	plain bool
	// gnu is --gnu, a no-op (GNU's override of the retired --tollef).
	gnu bool
	// slotVar is --process-slot-var: the variable that holds a job's slot
	// less one.
	slotVar    string
	slotVarSet bool
	// totalJobs is --total-jobs: the total the progress bar shows.
	totalJobs string
	// workdir is --workdir: the directory the jobs run in.
	workdir string
	// skipFirst is --skip-first-line: the first input source's first
	// value (with --pipe: stdin's first line) is left out.
	skipFirst bool
}

// addGNUOverrideFlags adds gnuOverrideFlags' flags to fs.
func addGNUOverrideFlags(fs *pflag.FlagSet, f *runFlags) {
	m := &f.override
	fs.BoolVar(&m.noKeepOrder, "no-keep-order", false, "cancel -k, wherever it is (GNU parallel's --no-keep-order, --nok, --no-k: for a -k from a profile or $PARALLEL)")
	fs.BoolVar(&m.silent, "silent", false, "cancel -v, wherever it is (GNU parallel's --silent; not printing the commands is the default)")
	fs.BoolVar(&m.plain, "plain", false, "ignore -J/--profile and $PARALLEL (GNU parallel's --plain)")
	fs.BoolVar(&m.gnu, "gnu", false, "accepted for GNU parallel's sake (behave like GNU parallel)")
	fs.StringVar(&m.totalJobs, "total-jobs", "", "the progress bar (--bar, --eta, --progress) counts to `N` jobs, for input read as it comes (0: counted when known, as without it)")
	fs.StringVar(&m.workdir, "workdir", "", "run every job in `DIR`, made first when missing (replacement strings make one per job: out/{#}; . is the current directory)")
	fs.BoolVar(&m.skipFirst, "skip-first-line", false, "leave out the first value of the first input source (with --pipe: the first line of stdin), as GNU parallel")
	fs.StringVar(&m.slotVar, "process-slot-var", "", "set the environment variable `NAME` to each job's slot less one ({%} - 1; default PARALLEL_JOBSLOT0, as GNU parallel)")
}

// gnuOverridesParsed applies the flags that cancel others, after parsing.
func gnuOverridesParsed(fs *pflag.FlagSet, f *runFlags) {
	f.override.slotVarSet = fs.Changed("process-slot-var")
	if f.override.noKeepOrder {
		f.keepOrder = false
	}
	if f.override.silent {
		f.gnu.printCommands = false
	}
}

// planGNUOverrides checks the flags of gnuOverrideFlags that change how a job
// runs.
func planGNUOverrides(p *runPlan, f *runFlags, _ func(string) string) error {
	m := &f.override
	if m.slotVarSet {
		switch {
		case m.slotVar == "" || strings.ContainsAny(m.slotVar, "=\x00"):
			return flagErr("--process-slot-var", fmt.Errorf("%q is not an environment variable's name", m.slotVar))
		case p.worker.command != "":
			return flagMsg("--process-slot-var", "--process-slot-var cannot be combined with --worker (a worker's environment is set once, when it starts)")
		}
		p.cfg.GNU.Exec.SlotVar = m.slotVar
	}
	if err := planWorkdir(p, m.workdir); err != nil {
		return err
	}
	if m.skipFirst {
		if err := planSkipFirst(p); err != nil {
			return err
		}
	}
	if m.totalJobs != "" {
		n, err := strconv.ParseInt(m.totalJobs, 10, 64)
		if err != nil || n < 0 {
			return flagErr("--total-jobs", fmt.Errorf("%q is not a number of jobs", m.totalJobs))
		}
		if n > 0 {
			// As GNU parallel, whose 0 is no total given.
			p.input.total = n
		}
	}
	return nil
}

// planWorkdir checks --workdir DIR. GNU parallel's special values are its
// remote ones: . is the current directory here too (as GNU parallel's, for
// a local job), and ... (a directory per job under ~/.parallel/tmp, for
// --transfer and --return) is refused.
func planWorkdir(p *runPlan, dir string) error {
	switch {
	case dir == "" || dir == ".":
		return nil
	case dir == "...":
		return flagMsg("--workdir", "--workdir ... (a temporary directory per job on remote hosts) is not supported: ration runs on one machine; --workdir DIR/{#} runs each job in a directory of its own, which is kept")
	case p.worker.command != "":
		return flagMsg("--workdir", "--workdir cannot be combined with --worker (workers start once, in ration's directory)")
	}
	p.cfg.GNU.Exec.Workdir = dir
	return nil
}

// planSkipFirst plans --skip-first-line as GNU parallel 20221122 reads
// it: the first record of the first input source is dropped before
// anything else reads it (-E, -L, -r, --header): a ::: group's first
// value, else the first value read from the file or stdin (by -d or -0),
// and with --pipe stdin's first line (GNU's --pipe cuts it at \n whatever
// --recend is).
func planSkipFirst(p *runPlan) error {
	in := &p.input
	switch {
	case in.kind == inputFiles:
		return flagMsg("--skip-first-line", "--skip-first-line needs :::, ::::, -a or stdin inputs, not --files")
	case in.pipeMode != nil && in.pipeMode.path != "":
		return flagMsg("--skip-first-line", "--skip-first-line cannot be combined with --pipepart")
	case p.exec.retryFailed:
		return flagMsg("--skip-first-line", "--skip-first-line cannot be combined with --retry-failed")
	case in.pipe == nil && len(in.sources) > 0 && in.sources[0].path == "":
		if args := in.sources[0].args; len(args) > 0 {
			in.sources[0].args = args[1:]
		}
		if in.total >= 0 {
			in.total = knownTotal(p)
		}
		return nil
	}
	in.skipFirst = true
	return nil
}
