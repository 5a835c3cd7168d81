package runcmd

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/internal/flagvalue"
	"github.com/ration-run/ration/internal/gnuinput"
)

// gnuOutputFlags are GNU parallel's flags of output and bookkeeping.
type gnuOutputFlags struct {
	tag       bool
	tagString string
	results   string
	// printCommands is -v (stdout); verbose is -t/--verbose (stderr).
	printCommands, verbose bool
	delay                  string
	eta, progress          bool
	ungroup                bool
	// group is --group, the default.
	group bool
}

// addGNUOutputFlags adds gnuOutputFlags' flags to fs.
func addGNUOutputFlags(fs *pflag.FlagSet, g *gnuOutputFlags) {
	fs.BoolVar(&g.tag, "tag", false, "prefix every output line with the job's arguments and a tab")
	fs.StringVar(&g.tagString, "tagstring", "", "prefix every output line with `STR` (replacement strings allowed) and a tab")
	fs.StringVar(&g.results, "results", "", "write each job's stdout and stderr to files under `DIR` (GNU's layout: DIR/1/ARG/stdout), not to the terminal")
	fs.StringVar(&g.results, "res", "", "same as --results")
	fs.BoolVarP(&g.printCommands, "print-commands", "v", false, "print each job's command on stdout before its output (GNU parallel's -v)")
	fs.BoolVarP(&g.verbose, "verbose", "t", false, "print each job's command on stderr (GNU parallel's -t and --verbose)")
	fs.StringVar(&g.delay, "delay", "", "wait `DURATION` between two job starts")
	fs.BoolVar(&g.eta, "eta", false, "same as --bar (the bar shows the ETA)")
	fs.BoolVar(&g.progress, "progress", false, "same as --bar")
	fs.BoolVarP(&g.ungroup, "ungroup", "u", false, "same as --line-buffer: output is never held until the job ends (lines are kept whole)")
	fs.BoolVar(&g.group, "group", false, "accepted: each job's output is printed whole when it ends (the default)")
}

// planGNUOutput checks the flags of output and bookkeeping taken from GNU
// parallel: --tag, --tagstring, --results, -v, --delay, --eta,
// --progress, -u, and the meanings GNU parallel gives -q and --timeout P%.
func planGNUOutput(p *runPlan, f *runFlags, _ func(string) string) error {
	g, gc := &f.gnu, &p.cfg.GNU
	switch {
	case g.results != "" && p.worker.command != "":
		return flagMsg("--results", "--results cannot be combined with --worker")
	case g.ungroup && f.keepOrder:
		return flagMsg("--ungroup", "--ungroup and --keep-order cannot be combined")
	case g.group && (g.ungroup || f.lineBuffer):
		// As GNU parallel, which refuses them together too.
		return flagMsg("--group", "--group cannot be combined with --ungroup or --line-buffer")
	}
	// GNU parallel decodes --tagstring's \t, \n, \r and octal escapes as
	// it decodes -d's.
	tagString, err := gnuinput.UnquotePrintf(g.tagString)
	if err != nil {
		return flagErr("--tagstring", err)
	}
	gc.Tag, gc.TagString, gc.Results = g.tag || tagString != "", tagString, g.results
	gc.Verbose, gc.VerboseStderr = g.printCommands, g.verbose
	if g.delay != "" {
		d, err := flagvalue.ParseDuration(g.delay)
		if err != nil {
			return flagErr("--delay", fmt.Errorf("%q is not a duration", g.delay))
		}
		gc.Delay = d
	}
	if g.eta || g.progress {
		if f.noBar {
			return flagMsg("--bar", "--eta and --progress show the bar; they cannot be combined with --no-bar")
		}
		p.bar = barOn
	}
	if g.ungroup {
		p.cfg.LineBuffer, gc.Ungroup = true, true
	}
	p.cfg.GNU.Template.Names = nil
	return nil
}
