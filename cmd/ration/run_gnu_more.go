package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// gnuMoreFlags are GNU parallel 20221122's options added by branch
// gnuflags: some cancel or override others, some change how a job runs.
type gnuMoreFlags struct {
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
}

// addGNUMoreFlags adds gnuMoreFlags' flags to fs.
func addGNUMoreFlags(fs *pflag.FlagSet, f *runFlags) {
	m := &f.more
	fs.BoolVar(&m.noKeepOrder, "no-keep-order", false, "cancel -k, wherever it is (GNU parallel's --no-keep-order, --nok, --no-k: for a -k from a profile or $PARALLEL)")
	fs.BoolVar(&m.silent, "silent", false, "cancel -v, wherever it is (GNU parallel's --silent; not printing the commands is the default)")
	fs.BoolVar(&m.plain, "plain", false, "ignore -J/--profile and $PARALLEL (GNU parallel's --plain)")
	fs.BoolVar(&m.gnu, "gnu", false, "accepted for GNU parallel's sake (behave like GNU parallel)")
	fs.StringVar(&m.totalJobs, "total-jobs", "", "the number of jobs the progress bar (--bar, --eta, --progress) counts to, for input read as it comes (0: counted when known, as without it)")
	fs.StringVar(&m.workdir, "workdir", "", "run every job in `DIR`, made first when missing (replacement strings make one per job: out/{#}; . is the current directory)")
	fs.StringVar(&m.slotVar, "process-slot-var", "", "set the environment variable `NAME` to each job's slot less one ({%} - 1; default PARALLEL_JOBSLOT0, as GNU parallel)")
}

// gnuMoreParsed applies the flags that cancel others, after parsing.
func gnuMoreParsed(fs *pflag.FlagSet, f *runFlags) {
	f.more.slotVarSet = fs.Changed("process-slot-var")
	if f.more.noKeepOrder {
		f.keepOrder = false
	}
	if f.more.silent {
		f.gnu.printCommands = false
	}
}

// planGNUMore checks the flags of gnuMoreFlags that change how a job
// runs.
func planGNUMore(p *runPlan, f *runFlags, _ func(string) string) error {
	m := &f.more
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
