package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ration-run/ration/internal/flagvalue"
	"github.com/ration-run/ration/internal/template"
	"github.com/ration-run/ration/runner/input"
)

// splitSources splits the arguments after the flags into the command and
// the input sources, as GNU parallel reads them: every argSep (:::) starts
// a group of values, every fileSep (::::) a list of files (each its own
// source); argSep+ (:::+) links its group to the source before it,
// fileSep+ (::::+) links each of its files to the one before it, and the
// first source's + has nothing to link to and is dropped, as GNU parallel
// drops it. As GNU parallel, a separator is a file separator when it is
// both (--arg-sep equal to --arg-file-sep), and a group is linked when its
// separator ends in + (so --arg-sep a+ links every group).
func splitSources(args []string, argSep, fileSep string) (command []string, srcs []sourcePlan, err error) {
	isSep := func(a string) bool {
		return a == argSep || a == argSep+"+" || a == fileSep || a == fileSep+"+"
	}
	i := 0
	for i < len(args) && !isSep(args[i]) {
		i++
	}
	command = args[:i]
	for i < len(args) {
		sep := args[i]
		i++
		j := i
		for j < len(args) && !isSep(args[j]) {
			j++
		}
		vals := args[i:j]
		linked := strings.HasSuffix(sep, "+")
		switch {
		case sep == fileSep || sep == fileSep+"+":
			if len(vals) == 0 {
				return nil, nil, flagMsg("", sep+" needs a file name after it")
			}
			for _, v := range vals {
				srcs = append(srcs, sourcePlan{name: sep + " " + v, path: v, linked: linked})
			}
		default:
			srcs = append(srcs, sourcePlan{name: sep, args: vals, linked: linked})
		}
		i = j
	}
	if len(srcs) > 0 {
		srcs[0].linked = false
	}
	return command, srcs, nil
}

// planReading checks how the values are read and combined: -0, -d, -E,
// -r, --link, --colsep, --header, --trim.
func planReading(p *runPlan, f *runFlags) error {
	in, g := &p.input, &f.gnu
	switch {
	case f.null && g.delimSet:
		return flagMsg("--delimiter", "--null and --delimiter cannot be combined")
	case f.null:
		in.delim = "\x00"
	case g.delimSet:
		d, err := input.ParseDelimiter(g.delimiter)
		if err != nil {
			return flagErr("--delimiter", err)
		}
		in.delim = d
	}
	trim := g.trim
	if g.trimSet && trim == "" {
		return flagMsg("--trim", "--trim '' is not a trim: want n, l, r, lr or rl")
	}
	if trim == "" {
		// GNU parallel: --colsep implies --trim rl.
		trim = "n"
		if g.colsepSet {
			trim = "lr"
		}
	}
	var err error
	if in.trim, err = input.ParseTrim(trim); err != nil {
		return flagErr("--trim", err)
	}
	if g.colsepSet {
		if _, err := regexp.Compile(g.colsep); err != nil {
			return flagErr("--colsep", err)
		}
		if p.worker.command != "" {
			// Its fields would reach the worker joined with spaces ("a,b"
			// as "a b"): a worker has no {1} {2} to use them.
			return flagMsg("--colsep", "--colsep cannot be combined with --worker (a worker gets each input as it was read)")
		}
	}
	if in.kind == inputFiles && (g.link || g.headerSet || g.colsepSet || g.eof != "") {
		return flagMsg("--files", "--link, --header, --colsep and -E need :::, :::: or -a inputs (or stdin), not --files")
	}
	in.eof, in.noEmpty, in.link, in.header, in.colsep = g.eof, g.noRunIfEmpty, g.link, g.headerSet, g.colsep
	in.colsepSet = g.colsepSet
	in.lines = g.maxLines >= 0
	return nil
}

// planBatch decides how many arguments a job takes: -n, -N, -L, -X, -m,
// --xargs, -s, as GNU parallel does (see docs/compat.md), and the custom
// replacement strings.
func planBatch(p *runPlan, f *runFlags, _ func(string) string) error {
	g, gc := &f.gnu, &p.cfg.GNU
	counts := 0
	for _, n := range []int{g.maxArgs, g.maxReplaceArgs, g.maxLines} {
		if n >= 0 {
			counts++
		}
	}
	modes := 0
	for _, b := range []bool{g.xContext, g.multi, g.xargs} {
		if b {
			modes++
		}
	}
	switch {
	case counts > 1:
		return flagMsg("--max-args", "give one of -n, -N and -L")
	case modes > 1:
		return flagMsg("-X", "give one of -X, -m and --xargs")
	case g.maxChars < 0:
		return flagErr("--max-chars", fmt.Errorf("%d is negative", g.maxChars))
	}
	b := &gc.Batch
	switch {
	case g.maxArgs >= 0:
		b.MaxArgs = g.maxArgs
	case g.maxReplaceArgs >= 0:
		// As GNU parallel: -N makes {} repeat per argument even with -m
		// or --xargs (-L does only without them).
		b.MaxArgs = g.maxReplaceArgs
		gc.Template.Context = true
	case g.maxLines >= 0:
		b.MaxArgs = g.maxLines
		gc.Template.Context = !g.multi && !g.xargs
	}
	if counts > 0 && b.MaxArgs == 0 {
		// -N0 (and -n0, -L0): one argument per job, none of it used.
		b.MaxArgs, gc.NoFields = 1, true
	}
	if g.xContext {
		gc.Template.Context = true
	}
	b.MaxChars = g.maxChars
	if modes > 0 && b.MaxChars == 0 {
		b.MaxChars = input.DefaultMaxChars()
	}
	if limit := input.DefaultMaxChars(); b.MaxChars > limit {
		// As GNU parallel, which warns and keeps its limit: a longer line
		// fails to run (a --shell script is one argument, at most
		// MAX_ARG_STRLEN bytes), so every job of such -s would fail.
		p.warnings = append(p.warnings, fmt.Sprintf("--max-chars: %d is more than the longest command line allowed, %d, which is used instead", b.MaxChars, limit))
		b.MaxChars = limit
	}
	p.spread = g.xContext || g.multi
	gc.Template.Strings = template.Strings{Input: g.replace, NoExt: g.extReplace, Base: g.baseReplace, Dir: g.dirReplace,
		BaseNoExt: g.baseExtReplace, Seq: g.seqReplace, Slot: g.slotReplace}
	if p.worker.command != "" && (counts > 0 || modes > 0 || g.maxChars > 0) {
		return flagMsg("--worker", "--worker sends one input per task: -n, -N, -L, -X, -m, --xargs and -s do not apply")
	}
	p.input.total = knownTotal(p)
	return nil
}

// knownTotal is the number of jobs this shard runs when it is known before
// reading any input: one ::: group read as given, one argument per job;
// else -1.
func knownTotal(p *runPlan) int64 {
	in := &p.input
	b := p.cfg.GNU.Batch
	if len(in.sources) != 1 || in.sources[0].path != "" || in.header || in.eof != "" || in.noEmpty || b.MaxChars > 0 || b.MaxArgs > 1 {
		return -1
	}
	var n int64
	for _, a := range in.sources[0].args {
		if p.cfg.Shard.Contains(a) {
			n++
		}
	}
	return n
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
	tagString, err := input.UnquotePrintf(g.tagString)
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
