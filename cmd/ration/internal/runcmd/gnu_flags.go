package runcmd

import (
	"github.com/spf13/pflag"
)

// gnuFlags are the flags of GNU parallel's input model, batching and
// output that `ration run` takes with GNU parallel's meaning (see
// docs/compat.md).
type gnuFlags struct {
	// Each group of them lives in its file, with its plan: the values and
	// their fields (gnu_inputs.go), replacement strings and batching
	// (gnu_batch.go), output (gnu_output.go), stdin cut into blocks
	// (gnu_pipe.go).
	gnuInputFlags
	gnuBatchFlags
	gnuOutputFlags
	gnuBlockFlags
	// Accepted for GNU parallel's sake: no-ops. exitTooLong is -x, which
	// is what ration does anyway (GNU parallel 20221122 ignores it too).
	willCite, noNotice, exitTooLong bool
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
	addGNUInputFlags(fs, &g.gnuInputFlags)
	addGNUBatchFlags(fs, &g.gnuBatchFlags)
	addGNUBlockFlags(fs, &g.gnuBlockFlags)
	addGNUPipeFlags(fs, f)
	addGNUOutputFlags(fs, &g.gnuOutputFlags)

	fs.StringVarP(&f.jobs, "max-procs", "P", "", "same as --jobs `N` (-P 0: as --jobs 0)")
	fs.BoolVar(&f.lineBuffer, "lb", false, "same as --line-buffer")
	fs.BoolVar(&f.lineBuffer, "linebuffer", false, "same as --line-buffer")
	fs.BoolVar(&f.dryRun, "dryrun", false, "same as --dry-run")
	fs.BoolVar(&g.willCite, "will-cite", false, "accepted for GNU parallel's sake (nothing to cite)")
	fs.BoolVar(&g.noNotice, "no-notice", false, "accepted for GNU parallel's sake")
	fs.BoolVarP(&g.exitTooLong, "exit", "x", false, "accepted: an argument too long for a command line alone always ends the input with an error")

	addGNUCLIFlags(fs, f)

	addGNUExecFlags(fs, f)
	addParsetFlag(fs, f)
	addGNUOverrideFlags(fs, f)
	fs.SetNormalizeFunc(gnuNormalize)
}
