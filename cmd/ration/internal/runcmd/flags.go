package runcmd

import (
	"io"

	"github.com/spf13/pflag"
)

// runFlags are the flags of `ration run` as the user gave them, before any
// checking (see plan). Durations, the halt and shard specs and -j stay
// text: plan parses them, so that every error names its flag the same way.
type runFlags struct {
	help bool
	// shortHelp is -h: the summary of the flags, one line each.
	shortHelp bool

	// The flags of a group live in its file, with their plan and wiring:
	// -j and the limits (jobs.go), the inputs (inputs.go), watching a run
	// (observe.go), workers and adaptation (worker.go), failures and
	// retries (failures.go), the joblog and --resume (joblog.go).
	jobsFlags
	inputFlags
	observeFlags
	workerFlags
	failureFlags
	joblogFlags

	// What to run, and its output.
	shell      bool
	dryRun     bool
	keepOrder  bool
	lineBuffer bool
	bar, noBar bool

	// GNU parallel's input model, batching and output.
	gnu gnuFlags
	// GNU parallel's separators, --shuf, -J, and the options that
	// print and exit (gnu_cli.go).
	gnuCLI gnuCLIFlags
	// GNU parallel's flags that change how jobs run.
	exec gnuExecFlags
	// GNU parallel's --pipe modes.
	pipe gnuPipeFlags
	// parset is --_parset (gnu_parset.go).
	parset string
	// GNU parallel's options that cancel or override others (gnu_overrides.go).
	override gnuOverrideFlags

	// args are the arguments after the flags: COMMAND [ARG...] [::: INPUT...].
	args []string
}

// newRunFlagSet returns the FlagSet of `ration run`, storing into f. Its
// errors are returned by Parse, never printed.
func newRunFlagSet(f *runFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("ration run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetInterspersed(false)
	addJobsFlags(fs, &f.jobsFlags)
	addInputFlags(fs, &f.inputFlags)
	addObserveFlags(fs, &f.observeFlags)
	addWorkerFlags(fs, &f.workerFlags)
	addFailureFlags(fs, &f.failureFlags)
	addJoblogFlags(fs, &f.joblogFlags)
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the commands instead of running them (with --worker: the task line each input would be sent as)")
	fs.BoolVar(&f.bar, "bar", false, "show a progress bar on stderr (default: when stderr is a terminal)")
	fs.BoolVar(&f.noBar, "no-bar", false, "never show a progress bar")
	fs.BoolVarP(&f.keepOrder, "keep-order", "k", false, "print the output of jobs in input order")
	fs.BoolVar(&f.lineBuffer, "line-buffer", false, "print output line by line as it comes")
	fs.BoolVar(&f.shell, "shell", false, "run the command through GNU parallel's shell ($PARALLEL_SHELL, else the shell ration was started from, else $SHELL, else sh), with each substituted input quoted (not with --worker, whose command always runs through sh -c)")

	addGNUFlags(fs, f)
	fs.BoolVar(&f.help, "help", false, "show every flag in full (-h: one line each)")
	// -h is the summary, --help the whole text, as ripgrep has them; its
	// long name is hidden, -h is named on --help's line.
	fs.BoolVarP(&f.shortHelp, "short-help", "h", false, "show the flags, one line each")
	_ = fs.MarkHidden("short-help")
	return fs
}

// Flags returns the flags of `ration run` (for shell completion).
func Flags() *pflag.FlagSet { return newRunFlagSet(&runFlags{}) }

// parseRunFlags parses the arguments of `ration run` into runFlags. The
// error is pflag's (an unknown flag, a bad number or size), which names
// the flag.
func parseRunFlags(args []string) (runFlags, *pflag.FlagSet, error) {
	var f runFlags
	fs := newRunFlagSet(&f)
	err := fs.Parse(args)
	if gnu, ok := gnuFilesArgs(args, fs, err); ok { // GNU's --files
		f = runFlags{}
		fs = newRunFlagSet(&f)
		err = fs.Parse(gnu)
	}
	if err != nil {
		if hint := unknownFlagHint(fs, err.Error()); hint != "" {
			return f, fs, flagMsg("", hint)
		}
		return f, fs, err
	}
	f.args, f.workerGiven, f.retriesSet = fs.Args(), fs.Changed("worker"), fs.Changed("retries")
	f.gnu.recEndSet, f.gnu.recStartSet = fs.Changed("recend"), fs.Changed("recstart")
	f.gnu.colsepSet, f.gnu.delimSet = fs.Changed("colsep"), fs.Changed("delimiter")
	f.gnu.headerSet, f.gnu.trimSet = fs.Changed("header"), fs.Changed("trim")
	gnuExecParsed(fs, &f)
	gnuOverridesParsed(fs, &f)
	for name, v := range map[string]*int{"max-args": &f.gnu.maxArgs, "max-replace-args": &f.gnu.maxReplaceArgs, "max-lines": &f.gnu.maxLines} {
		if !fs.Changed(name) {
			*v = -1
		}
	}
	return f, fs, nil
}
