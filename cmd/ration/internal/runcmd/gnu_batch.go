package runcmd

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/internal/gnuinput"
	"github.com/ration-run/ration/internal/template"
)

// gnuBatchFlags are GNU parallel's replacement strings and its flags of
// how many arguments a job takes.
type gnuBatchFlags struct {
	// Replacement strings.
	replace, extReplace, baseReplace, dirReplace, baseExtReplace, seqReplace, slotReplace string
	// maxArgs, maxReplaceArgs and maxLines are -n, -N and -L; -1 when
	// not given (set by parseRunFlags: 0 is a value of its own).
	maxArgs, maxReplaceArgs, maxLines int
	maxChars                          int
	xContext, multi, xargs            bool
}

// addGNUBatchFlags adds gnuBatchFlags' flags to fs.
func addGNUBatchFlags(fs *pflag.FlagSet, g *gnuBatchFlags) {
	fs.StringVarP(&g.replace, "replace", "I", "", "use `STR` instead of {} (and {1}.. are then literal)")
	fs.StringVar(&g.extReplace, "extensionreplace", "", "use `STR` instead of {.}")
	fs.StringVar(&g.extReplace, "er", "", "same as --extensionreplace")
	fs.StringVar(&g.baseReplace, "basenamereplace", "", "use `STR` instead of {/}")
	fs.StringVar(&g.baseReplace, "bnr", "", "same as --basenamereplace")
	fs.StringVar(&g.dirReplace, "dirnamereplace", "", "use `STR` instead of {//}")
	fs.StringVar(&g.dirReplace, "dnr", "", "same as --dirnamereplace")
	fs.StringVar(&g.baseExtReplace, "basenameextensionreplace", "", "use `STR` instead of {/.}")
	fs.StringVar(&g.baseExtReplace, "bner", "", "same as --basenameextensionreplace")
	fs.StringVar(&g.seqReplace, "seqreplace", "", "use `STR` instead of {#}")
	fs.StringVar(&g.slotReplace, "slotreplace", "", "use `STR` instead of {%}")
	fs.IntVarP(&g.maxArgs, "max-args", "n", 0, "give each job at most `N` arguments ({} is all of them)")
	fs.IntVarP(&g.maxReplaceArgs, "max-replace-args", "N", 0, "give each job at most `N` arguments, {1}..{N} each one (N=0: none)")
	fs.IntVarP(&g.maxLines, "max-lines", "L", 0, "give each job at most `N` input lines (a line ending in a blank continues on the next; with --pipe, a record is N lines)")
	fs.IntVarP(&g.maxChars, "max-chars", "s", 0, "keep each job's command line shorter than `N` characters (-X, -m, --xargs: default 63664, as GNU parallel)")
	fs.BoolVarP(&g.xContext, "context-replace", "X", false, "give each job as many arguments as fit, repeating a word holding {} once per argument")
	fs.BoolVarP(&g.multi, "multi-replace", "m", false, "give each job as many arguments as fit ({} is all of them)")
	fs.BoolVar(&g.xargs, "xargs", false, "like -m, without spreading the last arguments over the job slots")
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
		b.MaxChars = gnuinput.DefaultMaxChars()
	}
	if limit := gnuinput.DefaultMaxChars(); b.MaxChars > limit {
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
