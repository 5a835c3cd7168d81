package runcmd

import (
	"regexp"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/internal/gnuinput"
)

// gnuInputFlags are GNU parallel's flags of how the input values are read
// and combined, and split into fields.
type gnuInputFlags struct {
	link      bool
	colsep    string
	colsepSet bool // --colsep given, maybe empty (every character a field)
	header    string
	headerSet bool // --header given, maybe empty (GNU: a header all the same)
	trim      string
	trimSet   bool // --trim given, maybe empty (refused, as GNU refuses it)
	delimiter string
	delimSet  bool // -d given, maybe empty (refused: Perl's paragraph mode)
	eof       string
	// noRunIfEmpty is -r: values of blanks only are left out.
	noRunIfEmpty bool
}

// addGNUInputFlags adds gnuInputFlags' flags to fs.
func addGNUInputFlags(fs *pflag.FlagSet, g *gnuInputFlags) {
	fs.BoolVar(&g.link, "link", false, "combine the input sources value by value (shorter ones start over) instead of every combination")
	fs.BoolVar(&g.link, "xapply", false, "same as --link")
	fs.StringVarP(&g.colsep, "colsep", "C", "", "split every input value into fields {1} {2} ... where `REGEXP` matches")
	fs.StringVar(&g.header, "header", "", "the first value of every source names its fields ({name}); `REGEXP` is accepted as GNU's and only : is usual (with --pipe: the header put in front of every block, : one line, N lines, else a regular expression)")
	fs.StringVar(&g.trim, "trim", "", "remove blanks around every value: `n|l|r|lr|rl` (default n; lr with --colsep, as GNU parallel)")
	fs.StringVarP(&g.delimiter, "delimiter", "d", "", "input values end with `DELIM` (\\n, \\t, \\r and octal \\0, \\012 escapes as in GNU parallel; several characters allowed) instead of a newline")
	fs.StringVarP(&g.eof, "eof", "E", "", "stop reading every input source at the value `STR`")
	fs.BoolVarP(&g.noRunIfEmpty, "no-run-if-empty", "r", false, "leave out input values that are empty or blanks only (without it an empty line is an input, as in GNU parallel)")
}

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
		d, err := gnuinput.ParseDelimiter(g.delimiter)
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
	if in.trim, err = gnuinput.ParseTrim(trim); err != nil {
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
