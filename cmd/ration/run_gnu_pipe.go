package main

import (
	"github.com/ration-run/ration/runner/input"
)

// planPipe plans --pipe (GNU parallel's): stdin cut into blocks of whole
// records (--block, --recend, --recstart; -N: records per job), each one
// the stdin of a job that runs the command as written. What GNU parallel
// does with --pipe and ration does not (--header, --regexp, --rrs,
// --round-robin, -L records, :::/-a as the piped input) is refused, not
// misread.
func planPipe(p *runPlan, f *runFlags, _ func(string) string) error {
	g := &f.gnu
	if !g.pipe {
		if g.block != "" || g.recEndSet || g.recStartSet {
			return flagMsg("--block", "--block, --recend and --recstart need --pipe")
		}
		return nil
	}
	switch {
	case p.input.kind != inputStdin:
		return flagMsg("--pipe", "--pipe cuts stdin into blocks; :::, :::: and -a do not apply")
	case p.worker.command != "":
		return flagMsg("--worker", "--worker does not take --pipe's blocks")
	case g.maxArgs >= 0 || g.maxLines >= 0 || g.xContext || g.multi || g.xargs || g.maxChars > 0:
		return flagMsg("--pipe", "with --pipe, -N gives the records per job; -n, -L, -X, -m, --xargs and -s do not apply")
	case g.maxReplaceArgs == 0:
		return flagMsg("--pipe", "-N0 gives a job no records; with --pipe, -N must be at least 1")
	case p.input.header || p.input.colsep != "" || p.input.delim != "\n" || p.input.eof != "" || f.null:
		return flagMsg("--pipe", "--header, --colsep, -d, -0 and -E do not apply to --pipe's blocks (records end with --recend)")
	}
	o := input.BlockOptions{RecEnd: g.recEnd, RecStart: g.recStart}
	if !g.recEndSet && !g.recStartSet {
		o.RecEnd = "\n"
	}
	if g.block != "" {
		n, err := input.ParseBlockSize(g.block)
		if err != nil {
			return flagErr("--block", err)
		}
		o.Size = n
	}
	if g.maxReplaceArgs > 0 {
		o.Records = g.maxReplaceArgs
	}
	gc := &p.cfg.GNU
	gc.Batch, gc.NoFields, gc.Pipe = input.BatchOptions{MaxArgs: 1}, false, true
	gc.Template.Context = false
	p.input.pipe, p.input.total = &o, -1
	return nil
}
