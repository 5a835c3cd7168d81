package runcmd

import (
	"github.com/spf13/pflag"
)

// gnuFlags are the flags of GNU parallel's input model, batching and
// output that `ration run` takes with GNU parallel's meaning (see
// docs/compat.md).
type gnuFlags struct {
	// Sources and fields.
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
	// Replacement strings.
	replace, extReplace, baseReplace, dirReplace, baseExtReplace, seqReplace, slotReplace string
	// Several arguments per job.
	// maxArgs, maxReplaceArgs and maxLines are -n, -N and -L; -1 when
	// not given (set by parseRunFlags: 0 is a value of its own).
	maxArgs, maxReplaceArgs, maxLines int
	maxChars                          int
	xContext, multi, xargs            bool
	// Output and bookkeeping.
	tag       bool
	tagString string
	results   string
	verbose   bool
	// printCommands is -v (stdout); verbose is -t/--verbose (stderr).
	printCommands bool
	delay         string
	eta           bool
	progress      bool
	ungroup       bool
	// --pipe: stdin cut into blocks, each one a job's stdin. recEndSet
	// and recStartSet say whether --recend and --recstart were given.
	pipe                    bool
	block, recEnd, recStart string
	recEndSet, recStartSet  bool
	// Accepted for GNU parallel's sake: no-ops or aliases.
	willCite, noNotice, noRunIfEmpty bool
	// group is --group, the default; exitTooLong is -x, which is what
	// ration does anyway (GNU parallel 20221122 ignores it too).
	group, exitTooLong bool
}

// gnuAliases are GNU parallel 20221122's other spellings of flags ration
// run takes (parallel --jl LOG, --keeporder, --maxargs 2, ...): fs reads
// them as ration's (gnuNormalize).
var gnuAliases = map[string]string{
	"jl": "joblog", "result": "results", "resumefailed": "resume-failed", "retryfailed": "retry-failed",
	"keeporder": "keep-order", "line-buffered": "line-buffer", "linebuffered": "line-buffer",
	"maxargs": "max-args", "maxreplaceargs": "max-replace-args", "maxlines": "max-lines", "maxchars": "max-chars", "maxprocs": "max-procs",
	"argsep": "arg-sep", "argfilesep": "arg-file-sep", "argfile": "arg-file", "col-sep": "colsep",
	"tag-string": "tagstring", "term-seq": "termseq", "tempdir": "tmpdir", "blocksize": "block-size", "dr": "dry-run",
	"willcite": "will-cite", "nn": "no-notice", "nonotice": "no-notice", "norunifempty": "no-run-if-empty",
	"shell-quote": "shellquote", "shell_quote": "shellquote", "maxlinelengthallowed": "max-line-length-allowed",
	"numberofcpus": "number-of-cpus", "numberofcores": "number-of-cores", "numberofthreads": "number-of-threads",
	"numberofsockets": "number-of-sockets", "usecpusinsteadofcores": "use-cpus-instead-of-cores",
	"halt-on-error": "halt", "haltonerror": "halt", "min-version": "minversion",
	"output-as-files": "output-files", "outputasfiles": "output-files",
	"nokeeporder": "no-keep-order", "nok": "no-keep-order", "no-k": "no-keep-order",
	"processslotvar": "process-slot-var", "totaljobs": "total-jobs", "total": "total-jobs",
	"wd": "workdir", "work-dir": "workdir", "skipfirstline": "skip-first-line",
}

// gnuNormalize is fs's normalization: a GNU parallel alias is the flag it
// stands for.
func gnuNormalize(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if to, ok := gnuAliases[name]; ok {
		return pflag.NormalizedName(to)
	}
	return pflag.NormalizedName(name)
}

// addGNUFlags adds GNU parallel's flags to fs: those with the same meaning
// in ration, and the aliases and no-ops scripts written for GNU parallel
// pass. The aliases store into the ration flag's own field.
func addGNUFlags(fs *pflag.FlagSet, f *runFlags) {
	g := &f.gnu
	fs.BoolVar(&g.link, "link", false, "combine the input sources value by value (shorter ones start over) instead of every combination")
	fs.BoolVar(&g.link, "xapply", false, "same as --link")
	fs.StringVarP(&g.colsep, "colsep", "C", "", "split every input value into fields {1} {2} ... where `REGEXP` matches")
	fs.StringVar(&g.header, "header", "", "the first value of every source names its fields ({name}); `REGEXP` is accepted as GNU's and only : is usual (with --pipe: the header put in front of every block, : one line, N lines, else a regular expression)")
	fs.StringVar(&g.trim, "trim", "", "remove blanks around every value: `n|l|r|lr|rl` (default n; lr with --colsep, as GNU parallel)")
	fs.StringVarP(&g.delimiter, "delimiter", "d", "", "input values end with `DELIM` (\\n, \\t, \\r and octal \\0, \\012 escapes as in GNU parallel; several characters allowed) instead of a newline")
	fs.StringVarP(&g.eof, "eof", "E", "", "stop reading every input source at the value `STR`")
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

	fs.BoolVar(&g.pipe, "pipe", false, "cut stdin into blocks of whole records and give each job one block as its stdin (the command runs as written; -N: records per job)")
	fs.BoolVar(&g.pipe, "spreadstdin", false, "same as --pipe")
	fs.StringVar(&g.block, "block", "", "with --pipe, blocks of about `SIZE` bytes (K, M, G: 1024-based; k, m, g: 1000-based; default 1M)")
	fs.StringVar(&g.block, "block-size", "", "same as --block")
	fs.StringVar(&g.recEnd, "recend", "", "with --pipe, a record ends with `STR` (default \\n; none when only --recstart is given)")
	fs.StringVar(&g.recStart, "recstart", "", "with --pipe, a record starts with `STR` (default none)")
	addGNUPipeFlags(fs, f)

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

	fs.StringVarP(&f.jobs, "max-procs", "P", "", "same as --jobs `N` (-P 0: as --jobs 0)")
	fs.BoolVar(&f.lineBuffer, "lb", false, "same as --line-buffer")
	fs.BoolVar(&f.lineBuffer, "linebuffer", false, "same as --line-buffer")
	fs.BoolVar(&f.dryRun, "dryrun", false, "same as --dry-run")
	fs.BoolVar(&g.willCite, "will-cite", false, "accepted for GNU parallel's sake (nothing to cite)")
	fs.BoolVar(&g.noNotice, "no-notice", false, "accepted for GNU parallel's sake")
	fs.BoolVarP(&g.noRunIfEmpty, "no-run-if-empty", "r", false, "leave out input values that are empty or blanks only (without it an empty line is an input, as in GNU parallel)")
	fs.BoolVar(&g.group, "group", false, "accepted: each job's output is printed whole when it ends (the default)")
	fs.BoolVarP(&g.exitTooLong, "exit", "x", false, "accepted: an argument too long for a command line alone always ends the input with an error")

	addGNUCLIFlags(fs, f)

	addGNUExecFlags(fs, f)
	addParsetFlag(fs, f)
	addGNUOverrideFlags(fs, f)
	fs.SetNormalizeFunc(gnuNormalize)
}
