package runcmd

import (
	"errors"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/internal/flagvalue"
	"github.com/ration-run/ration/internal/gnuinput"
	"github.com/ration-run/ration/internal/logs"
	"github.com/ration-run/ration/internal/template"
	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/worker"
)

// planCase is one `ration run` command line and environment, and the plan
// it must give or the exact error.
type planCase struct {
	args []string
	env  map[string]string
	// want changes the plan of a bare `ration run ARGS` (see basePlan) into
	// the expected one; nil: no change.
	want func(p *runPlan)
	// dryLine is what the plan's DryRunLine prints for input "a", job 1
	// ("" when it has none).
	dryLine string
	// err is the exact error text; flag the flag the usage error names
	// ("" for pflag's own errors and for errors that name none).
	err, flag string
}

// errOf returns the message of a library's error, for the rows whose
// message is "--flag: " followed by the library's own.
func errOf[T any](_ T, err error) string {
	if err == nil {
		return "<no error>"
	}
	return err.Error()
}

func mustHalt(s string) runner.Halt {
	h, err := flagvalue.ParseHalt(s)
	if err != nil {
		panic(err)
	}
	return h
}

// basePlan is the plan of `ration run ARGS` without flags, command echo,
// inputs from stdin.
func basePlan() runPlan {
	return runPlan{
		cfg:     runConfig{Config: runner.Config{Command: []string{"echo"}, TermTimeout: defaultTermTimeout, Halt: mustHalt("never"), OmitErrorLines: true}},
		input:   inputPlan{kind: inputStdin, delim: "\n", total: -1},
		limits:  limits.Options{RefuseNoSlot: true},
		log:     logs.Options{Format: logs.FormatAuto},
		observe: observePlan{slowFactor: 5},
		worker:  workerPlan{maxBreaks: worker.DefaultMaxBreaks, watch: true, interval: 5 * time.Second},
		bar:     barIfTerminal,
	}
}

// planCases cover every flag of `ration run` and the environment it
// reads; TestPlanCoversEveryFlag checks that no flag lacks a row.
func planCases() []planCase {
	c := func(args ...string) []string { return args }
	rows := []planCase{
		// Help: nothing else is planned.
		{args: c("-h"), want: func(p *runPlan) { *p = runPlan{help: true, shortHelp: true} }},
		{args: c("--help", "--bogus-after-help-is-not-parsed-as-a-flag"), err: "unknown flag: --bogus-after-help-is-not-parsed-as-a-flag"},
		{args: c("--help", "echo"), want: func(p *runPlan) { *p = runPlan{help: true} }},

		// The command and the ::: inputs.
		{args: c("echo")},
		{args: c("--", "echo")},
		{args: c("echo", "-n", "{}"), want: func(p *runPlan) { p.cfg.Command = []string{"echo", "-n", "{}"} }},
		{args: c("echo", ":::", "a", "b"), want: func(p *runPlan) {
			p.input.kind, p.input.sources, p.input.total = inputSources, args(":::", "a", "b"), 2
		}},
		// No command: every input is a command line (GNU parallel's way);
		// a bare `ration run` too, refused by wire on a terminal only
		// (TestBareRun).
		{args: c(), want: func(p *runPlan) {
			p.cfg.Command, p.cfg.GNU.InputIsCommand, p.parentShell, p.bare = []string{"{}"}, true, true, true
		}},
		{args: c("-j", "2"), want: func(p *runPlan) {
			p.cfg.Command, p.cfg.GNU.InputIsCommand, p.parentShell = []string{"{}"}, true, true
			p.limits.Jobs, p.jobsSpec = "2", "2"
		}},
		{args: c(":::", "ls", "echo a"), want: func(p *runPlan) {
			p.cfg.Command, p.cfg.GNU.InputIsCommand, p.parentShell = []string{"{}"}, true, true
			p.input.kind, p.input.sources, p.input.total = inputSources, args(":::", "ls", "echo a"), 2
		}},
		{args: c("--bogus", "echo"), err: "unknown flag: --bogus"},
		{args: c("--shell", "echo {} | wc"), want: func(p *runPlan) { p.cfg.Command, p.cfg.Shell, p.parentShell = []string{"echo {} | wc"}, true, true }},
		{args: c("--shell", "echo"), env: map[string]string{"PARALLEL_SHELL": "/bin/bash"}, want: func(p *runPlan) {
			p.cfg.Shell, p.cfg.GNU.Template.ShellPath = true, "/bin/bash"
		}},

		// GNU parallel's input sources.
		{args: c("echo", ":::", "a", ":::+", "1", "::::", "f", "g", "::::+", "h", ":::", "x"), want: func(p *runPlan) {
			p.input.kind = inputSources
			p.input.sources = slices.Concat(args(":::", "a"), args(":::+", "1"),
				[]sourcePlan{{name: ":::: f", path: "f"}, {name: ":::: g", path: "g"}, {name: "::::+ h", path: "h", linked: true}}, args(":::", "x"))
		}},
		// As GNU parallel: every file after ::::+ is linked, and a first
		// source's + has nothing to link to and is dropped.
		{args: c("echo", "::::+", "f", "g"), want: func(p *runPlan) {
			p.input.kind = inputSources
			p.input.sources = []sourcePlan{{name: "::::+ f", path: "f"}, {name: "::::+ g", path: "g", linked: true}}
		}},
		{args: c("echo", ":::+", "a"), want: func(p *runPlan) {
			p.input.kind, p.input.sources, p.input.total = inputSources, []sourcePlan{{name: ":::+", args: []string{"a"}}}, 1
		}},
		{args: c("--colsep", ",", "echo"), want: func(p *runPlan) { p.input.colsep, p.input.colsepSet, p.input.trim = ",", true, gnuinput.TrimBoth }},
		{args: c("--colsep", ",", "--trim", "n", "echo"), want: func(p *runPlan) { p.input.colsep, p.input.colsepSet = ",", true }},
		{args: c("echo", "::::"), err: ":::: needs a file name after it"},
		{args: c("echo", "::::", "-", "-a", "-"), err: "standard input is named twice as an input source (-a - or :::: -)"},
		{args: c("--link", "echo"), want: func(p *runPlan) { p.input.link = true }},
		{args: c("--xapply", "echo"), want: func(p *runPlan) { p.input.link = true }},
		{args: c("--colsep", ",+", "--trim", "lr", "echo"), want: func(p *runPlan) { p.input.colsep, p.input.colsepSet, p.input.trim = ",+", true, gnuinput.TrimBoth }},
		{args: c("-C", "(", "echo"), err: "--colsep: " + errOf(regexp.Compile(strings.Repeat("(", 1))), flag: "--colsep"},
		{args: c("--trim", "x", "echo"), err: "--trim: " + errOf(gnuinput.ParseTrim("x")), flag: "--trim"},
		{args: c("--header", ":", "echo"), want: func(p *runPlan) { p.input.header = true }},
		// GNU parallel refuses --trim '' and reads --header '' as a header
		// (any --header is one); ration read them as no flag.
		{args: c("--trim", "", "echo"), err: "--trim '' is not a trim: want n, l, r, lr or rl", flag: "--trim"},
		{args: c("--header", "", "echo"), want: func(p *runPlan) { p.input.header = true }},
		{args: c("-d", `\t`, "-E", "END", "-r", "echo"), want: func(p *runPlan) { p.input.delim, p.input.eof, p.input.noEmpty = "\t", "END", true }},
		{args: c("--delimiter", "xy", "--eof", "END", "--no-run-if-empty", "echo"), want: func(p *runPlan) { p.input.delim, p.input.eof, p.input.noEmpty = "xy", "END", true }},
		{args: c("-0", "-d", ",", "echo"), err: "--null and --delimiter cannot be combined", flag: "--delimiter"},
		// GNU parallel's -d '' is Perl's paragraph mode; it was read as no -d.
		{args: c("-d", "", "echo"), err: "--delimiter: bad option: -d: empty delimiter (GNU parallel's -d '' is Perl's paragraph mode, records separated by blank lines, which ration does not support)", flag: "--delimiter"},
		{args: c("-0", "-d", "", "echo"), err: "--null and --delimiter cannot be combined", flag: "--delimiter"},
		{args: c("--files", "x", "--link", "echo"), err: "--link, --header, --colsep and -E need :::, :::: or -a inputs (or stdin), not --files", flag: "--files"},

		// Replacement strings.
		{args: c("-I", "XX", "--er", "E", "--bnr", "B", "--dnr", "D", "--bner", "BE", "--seqreplace", "S", "--slotreplace", "T", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Template.Strings = template.Strings{Input: "XX", NoExt: "E", Base: "B", Dir: "D", BaseNoExt: "BE", Seq: "S", Slot: "T"}
		}},
		{args: c("--replace", "XX", "--extensionreplace", "E", "--basenamereplace", "B", "--dirnamereplace", "D", "--basenameextensionreplace", "BE", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Template.Strings = template.Strings{Input: "XX", NoExt: "E", Base: "B", Dir: "D", BaseNoExt: "BE"}
		}},

		// Several arguments per job.
		{args: c("-n", "3", "echo"), want: func(p *runPlan) { p.cfg.GNU.Batch.MaxArgs = 3 }},
		{args: c("--max-args=1", "echo", ":::", "a"), want: func(p *runPlan) {
			p.cfg.GNU.Batch.MaxArgs, p.input.kind, p.input.sources, p.input.total = 1, inputSources, args(":::", "a"), 1
		}},
		{args: c("-N2", "echo"), want: func(p *runPlan) { p.cfg.GNU.Batch.MaxArgs, p.cfg.GNU.Template.Context = 2, true }},
		{args: c("--max-replace-args", "0", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Batch.MaxArgs, p.cfg.GNU.NoFields, p.cfg.GNU.Template.Context = 1, true, true
		}},
		{args: c("-L", "2", "echo"), want: func(p *runPlan) { p.cfg.GNU.Batch.MaxArgs, p.cfg.GNU.Template.Context, p.input.lines = 2, true, true }},
		{args: c("--max-lines", "1", "-m", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Batch, p.input.lines, p.spread = gnuinput.BatchOptions{MaxArgs: 1, MaxChars: gnuinput.DefaultMaxChars()}, true, true
		}},
		{args: c("-X", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Batch.MaxChars, p.cfg.GNU.Template.Context, p.spread = gnuinput.DefaultMaxChars(), true, true
		}},
		{args: c("--context-replace", "--max-chars", "100", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Batch.MaxChars, p.cfg.GNU.Template.Context, p.spread = 100, true, true
		}},
		{args: c("--multi-replace", "echo"), want: func(p *runPlan) { p.cfg.GNU.Batch.MaxChars, p.spread = gnuinput.DefaultMaxChars(), true }},
		{args: c("--xargs", "-s", "50", "echo"), want: func(p *runPlan) { p.cfg.GNU.Batch.MaxChars = 50 }},
		// -N repeats {} per argument with -m and --xargs too, as GNU
		// parallel (parallel -m -N2 echo x{}y ::: a b c: xay xby, xcy).
		{args: c("-m", "-N2", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Batch, p.cfg.GNU.Template.Context, p.spread = gnuinput.BatchOptions{MaxArgs: 2, MaxChars: gnuinput.DefaultMaxChars()}, true, true
		}},
		{args: c("--xargs", "-N2", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Batch, p.cfg.GNU.Template.Context = gnuinput.BatchOptions{MaxArgs: 2, MaxChars: gnuinput.DefaultMaxChars()}, true
		}},
		{args: c("-n", "2", "-N", "2", "echo"), err: "give one of -n, -N and -L", flag: "--max-args"},
		{args: c("-X", "-m", "echo"), err: "give one of -X, -m and --xargs", flag: "-X"},
		{args: c("-s", "-1", "echo"), err: "--max-chars: -1 is negative", flag: "--max-chars"},
		// As GNU parallel: an -s above its limit is lowered to it, with a warning.
		{args: c("-X", "-s", "100000", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Batch, p.cfg.GNU.Template.Context, p.spread = gnuinput.BatchOptions{MaxChars: gnuinput.DefaultMaxChars()}, true, true
			p.warnings = []string{"--max-chars: 100000 is more than the longest command line allowed, 63664, which is used instead"}
		}},
		{args: c("--worker", "cat", "-X"), err: "--worker sends one input per task: -n, -N, -L, -X, -m, --xargs and -s do not apply", flag: "--worker"},
		// A worker gets each input line as it is: --colsep would join its
		// fields with spaces ("a,b" sent as "a b").
		{args: c("--worker", "cat", "--colsep", ","), err: "--colsep cannot be combined with --worker (a worker gets each input as it was read)", flag: "--colsep"},

		// Output and bookkeeping.
		{args: c("--tag", "echo"), want: func(p *runPlan) { p.cfg.GNU.Tag = true }},
		{args: c("--tagstring", "{1}:", "echo"), want: func(p *runPlan) { p.cfg.GNU.Tag, p.cfg.GNU.TagString = true, "{1}:" }},
		{args: c("--results", "out", "echo"), want: func(p *runPlan) { p.cfg.GNU.Results = "out" }},
		{args: c("--res", "out", "echo"), want: func(p *runPlan) { p.cfg.GNU.Results = "out" }},
		// --results out/{} and NAME.csv: planCasesGNUExec.
		{args: c("-v", "echo"), want: func(p *runPlan) { p.cfg.GNU.Verbose = true }},
		{args: c("--print-commands", "echo"), want: func(p *runPlan) { p.cfg.GNU.Verbose = true }},
		{args: c("-t", "echo"), want: func(p *runPlan) { p.cfg.GNU.VerboseStderr = true }},
		{args: c("--verbose", "echo"), want: func(p *runPlan) { p.cfg.GNU.VerboseStderr = true }},
		{args: c("--delay", "0.5", "echo"), want: func(p *runPlan) { p.cfg.GNU.Delay = 500 * time.Millisecond }},
		{args: c("--delay", "x", "echo"), err: `--delay: "x" is not a duration`, flag: "--delay"},
		{args: c("--eta", "echo"), want: func(p *runPlan) { p.bar = barOn }},
		{args: c("--progress", "echo"), want: func(p *runPlan) { p.bar = barOn }},
		{args: c("--progress", "--no-bar", "echo"), err: "--eta and --progress show the bar; they cannot be combined with --no-bar", flag: "--bar"},
		{args: c("-u", "echo"), want: func(p *runPlan) { p.cfg.LineBuffer, p.cfg.GNU.Ungroup = true, true }},
		{args: c("--ungroup", "-k", "echo"), err: "--ungroup and --keep-order cannot be combined", flag: "--ungroup"},
		{args: c("--timeout", "200%", "echo"), want: func(p *runPlan) { p.cfg.GNU.TimeoutPercent = 200 }},
		{args: c("--timeout", "x%", "echo"), err: `--timeout: "x%" is not a percentage > 0`, flag: "--timeout"},
		{args: c("--timeout", "50%", "--worker", "cat"), err: "--timeout P% cannot be combined with --worker (give a DURATION)", flag: "--timeout"},

		// Aliases and no-ops of GNU parallel.
		{args: c("-P", "3", "echo"), want: func(p *runPlan) { p.limits.Jobs, p.jobsSpec = "3", "3" }},
		{args: c("--max-procs", "0", "echo"), want: func(p *runPlan) { p.limits.Jobs, p.jobsSpec, p.jobsZero = jobsZero, jobsZero, true }},
		{args: c("--lb", "echo"), want: func(p *runPlan) { p.cfg.LineBuffer = true }},
		{args: c("--linebuffer", "echo"), want: func(p *runPlan) { p.cfg.LineBuffer = true }},
		{args: c("--dryrun", "echo"), want: func(p *runPlan) { p.cfg.DryRun, p.bar = true, barOff }},
		// --retry-failed: planCasesGNUExec.
		{args: c("--will-cite", "--no-notice", "echo")},
		// --group is the default; -x is what ration does anyway.
		{args: c("--group", "-x", "echo")},
		{args: c("--exit", "echo")},
		{args: c("--group", "--lb", "echo"), err: "--group cannot be combined with --ungroup or --line-buffer", flag: "--group"},
		{args: c("--group", "-u", "echo"), err: "--group cannot be combined with --ungroup or --line-buffer", flag: "--group"},
		// xargs' old forms name the new ones.
		{args: c("-i", "echo"), err: "unknown flag: -i (GNU parallel's -i is not supported: " + gnuUnsupported["i"] + ")"},
		{args: c("-e", "x", "echo"), err: "unknown flag: -e (GNU parallel's -e is not supported: " + gnuUnsupported["e"] + ")"},
		{args: c("-l", "2", "echo"), err: "unknown flag: -l (GNU parallel's -l is not supported: " + gnuUnsupported["l"] + ")"},

		// GNU parallel's flags ration does not take name the alternative.
		// --pipe (GNU parallel's): stdin cut into blocks.
		{args: c("--pipe", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Pipe, p.cfg.GNU.Batch.MaxArgs = true, 1
			p.input.pipe = &gnuinput.BlockOptions{RecEnd: "\n"}
		}},
		{args: c("--spreadstdin", "-N2", "--block", "2k", "--recstart", ">", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Pipe, p.cfg.GNU.Batch.MaxArgs = true, 1
			p.input.pipe = &gnuinput.BlockOptions{Size: 2000, Records: 2, RecStart: ">"}
		}},
		{args: c("--pipe", "--block-size", "3", "--recend", "", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Pipe, p.cfg.GNU.Batch.MaxArgs = true, 1
			p.input.pipe = &gnuinput.BlockOptions{Size: 3}
		}},
		{args: c("--pipe", "--recend", ", ", "--recstart", "/", "echo"), want: func(p *runPlan) {
			p.cfg.GNU.Pipe, p.cfg.GNU.Batch.MaxArgs = true, 1
			p.input.pipe = &gnuinput.BlockOptions{RecEnd: ", ", RecStart: "/"}
		}},
		{args: c("--block", "1M", "echo"), err: "--block, --recend and --recstart need --pipe"},
		{args: c("--pipe", "--block", "0", "echo"), err: "--block: invalid block size \"0\": want a positive number with an optional unit (K, M, G: 1024, 1024², 1024³; k, m, g: 1000, 1000², 1000³)"},
		{args: c("--pipe", "-n2", "echo"), err: "with --pipe, -N gives the records per job and -L the lines per record; -n, -X, -m, --xargs and -s do not apply"},
		{args: c("--pipe", "-N0", "echo"), err: "-N0 gives a job no records; with --pipe, -N must be at least 1"},
		{args: c("--pipe", "--colsep", ",", "echo"), err: "--colsep, -d, -0 and -E do not apply to --pipe's blocks (records end with --recend)"},
		{args: c("--pipe", "echo", ":::", "a"), err: "--pipe cuts stdin into blocks; :::, :::: and -a do not apply"},
		{args: c("-S", "host", "echo"), err: "unknown flag: -S (GNU parallel's -S, --sshlogin, is not supported: " + gnuUnsupported["sshlogin"] + ")"},
		{args: c("--env", "X", "echo"), err: "unknown flag: --env (GNU parallel's --env is not supported: " + gnuUnsupported["env"] + ")"},

		// Inputs.
		{args: c("-a", "in", "-a", "-", "echo"), want: func(p *runPlan) { p.input.kind, p.input.sources = inputSources, argFiles("in", "-") }},
		{args: c("--arg-file=in", "echo"), want: func(p *runPlan) { p.input.kind, p.input.sources = inputSources, argFiles("in") }},
		{args: c("-0", "echo"), want: func(p *runPlan) { p.input.delim = "\x00" }},
		{args: c("--null", "-a", "in", "echo"), want: func(p *runPlan) { p.input.kind, p.input.sources, p.input.delim = inputSources, argFiles("in"), "\x00" }},
		{args: c("--files", "src/**/*.go", "--files", "x", "--exclude", "gen", "echo"), want: func(p *runPlan) {
			p.input.kind, p.input.patterns, p.input.excludes = inputFiles, []string{"src/**/*.go", "x"}, []string{"gen"}
		}},
		{args: c("-a", "in", "echo", ":::", "x"), want: func(p *runPlan) {
			p.input.kind, p.input.sources = inputSources, append(argFiles("in"), args(":::", "x")...)
		}},
		// A bare --files before such inputs is GNU's (planCasesGNUExec).
		{args: c("-a", "in", "--files=x", "echo"), err: filesErr, flag: "--files"},
		{args: c("--files=x", "echo", ":::", "y"), err: filesErr, flag: "--files"},
		{args: c("--files=gzip"), err: "--files=gzip takes a glob PATTERN and a command after it (GNU parallel's --files, print the output file names, is --output-files)", flag: "--files"},
		{args: c("--exclude", "x", "echo"), err: "--exclude needs --files", flag: "--exclude"},
		{args: c("--files", "x", "--hidden", "--gitignore", "echo"), want: func(p *runPlan) {
			p.input.kind, p.input.patterns = inputFiles, []string{"x"}
			p.input.hidden, p.input.gitignore = true, true
		}},
		{args: c("--manifest", "m.txt", "--shard", "2/5", "echo"), want: func(p *runPlan) {
			p.input.kind, p.input.manifest, p.cfg.Shard = inputManifest, "m.txt", runner.Shard{Index: 2, Count: 5}
		}},
		{args: c("--manifest", "m.txt", "--files", "x", "echo"), err: "--manifest FILE is the input: it cannot be combined with --files, :::, :::: or -a, and needs a command", flag: "--manifest"},
		{args: c("--manifest", "m.txt", "echo", ":::", "x"), err: "--manifest FILE is the input: it cannot be combined with --files, :::, :::: or -a, and needs a command", flag: "--manifest"},
		{args: c("--hidden", "echo"), err: "--hidden needs --files", flag: "--hidden"},
		{args: c("--gitignore", "echo"), err: "--gitignore needs --files", flag: "--gitignore"},

		// Jobs and the limits decision.
		{args: c("-j", "3", "echo"), want: func(p *runPlan) { p.limits.Jobs, p.jobsSpec = "3", "3" }},
		{args: c("--jobs=50%", "echo"), want: func(p *runPlan) { p.limits.Jobs, p.jobsSpec = "50%", "50%" }},
		{args: c("-j", "zero", "echo"), err: "--jobs: " + jobsFlagErr("zero"), flag: "--jobs"},
		// -j0 is GNU parallel's "as many as possible": jobsZero slots.
		{args: c("-j", "0", "echo"), want: func(p *runPlan) { p.limits.Jobs, p.jobsSpec, p.jobsZero = jobsZero, jobsZero, true }},
		// GNU parallel's -j +N and -j -N: the effective CPUs plus or minus N.
		// They go to the limits decision as they are (TestRunRelativeJobs).
		{args: c("-j", "+1000", "echo"), want: func(p *runPlan) { p.limits.Jobs, p.jobsSpec = "+1000", "+1000" }},
		{args: c("-j", "-1000", "echo"), want: func(p *runPlan) { p.limits.Jobs, p.jobsSpec = "-1000", "-1000" }},
		{args: c("-j", "+x", "echo"), err: "--jobs: " + jobsFlagErr("+x"), flag: "--jobs"},
		{args: c("-j"), err: "flag needs an argument: 'j' in -j"},
		{args: c("echo"), env: map[string]string{"RATION_JOBS": "2"}, want: func(p *runPlan) { p.jobsSpec = "2" }},
		{args: c("-j", "4", "echo"), env: map[string]string{"RATION_JOBS": "x"}, want: func(p *runPlan) { p.limits.Jobs, p.jobsSpec = "4", "4" }},
		{args: c("echo"), env: map[string]string{"RATION_JOBS": "x"}, err: "RATION_JOBS: " + jobsErr("x"), flag: "RATION_JOBS"},
		{args: c("--mem-per-job", "512M", "echo"), want: func(p *runPlan) { p.limits.MemPerJob = 512 << 20 }},
		{args: c("--mem-per-job", "AUTO", "echo"), want: func(p *runPlan) { p.memAuto = true }},
		{args: c("--mem-per-job", "3X", "echo"), err: `invalid argument "3X" for "--mem-per-job" flag: unknown unit "X" (use K, M, G, T, KiB, MiB, GiB, TiB, KB, MB, GB, TB or B)`},
		{args: c("--fs-root", "/snap", "echo"), want: func(p *runPlan) { p.limits.FSRoot, p.worker.watch = "/snap", false }},

		// The runner's behaviour.
		{args: c("--timeout", "2.5", "echo"), want: func(p *runPlan) { p.cfg.Timeout = 2500 * time.Millisecond }},
		{args: c("--timeout", "abc", "echo"), err: `--timeout: "abc" is not a duration`, flag: "--timeout"},
		{args: c("--term-timeout", "1m", "echo"), want: func(p *runPlan) { p.cfg.TermTimeout = time.Minute }},
		{args: c("--term-timeout", "-1", "echo"), err: `--term-timeout: "-1" is not a duration`, flag: "--term-timeout"},
		{args: c("--retries", "3", "echo"), want: func(p *runPlan) { p.cfg.Retries = 3 }},
		{args: c("--retries", "-1", "echo"), err: "--retries: -1 is negative", flag: "--retries"},
		// GNU parallel's other spellings of ration's flags.
		{args: c("--jl", "jl", "--keeporder", "echo"), want: func(p *runPlan) { p.cfg.Joblog, p.cfg.KeepOrder = "jl", true }},
		{args: c("--maxargs", "2", "echo"), want: func(p *runPlan) { p.cfg.GNU.Batch.MaxArgs = 2 }},
		{args: c("--halt-on-error", "now,fail=1", "echo"), want: func(p *runPlan) { p.cfg.Halt = mustHalt("now,fail=1") }},
		{args: c("--haltonerror", "2", "echo"), want: func(p *runPlan) { p.cfg.Halt = mustHalt("2") }},
		{args: c("--output-as-files", "echo"), want: func(p *runPlan) { p.cfg.GNU.Exec.Files = true }},
		{args: c("--outputasfiles", "echo"), want: func(p *runPlan) { p.cfg.GNU.Exec.Files = true }},
		// GNU parallel's --retries 0: until it succeeds.
		{args: c("--retries", "0", "echo"), want: func(p *runPlan) { p.cfg.Retries = math.MaxInt32 }},
		{args: c("--retries", "x", "echo"), err: `invalid argument "x" for "--retries" flag: strconv.ParseInt: parsing "x": invalid syntax`},
		{args: c("--halt", "now,fail=1", "echo"), want: func(p *runPlan) { p.cfg.Halt = mustHalt("now,fail=1") }},
		{args: c("--halt", "now,fail=1", "--exit-count", "echo"), want: func(p *runPlan) { p.cfg.Halt, p.exitCount = mustHalt("now,fail=1"), true }},
		{args: c("--halt", "later", "echo"), err: "--halt: " + errOf(flagvalue.ParseHalt("later")), flag: "--halt"},
		{args: c("--dry-run", "echo"), want: func(p *runPlan) { p.cfg.DryRun, p.bar = true, barOff }},
		{args: c("--joblog", "jl", "echo"), want: func(p *runPlan) { p.cfg.Joblog = "jl" }},
		{args: c("--joblog", "jl", "--resume", "echo"), want: func(p *runPlan) { p.cfg.Joblog, p.cfg.Resume = "jl", true }},
		{args: c("--joblog", "jl", "--resume-failed", "echo"), want: func(p *runPlan) { p.cfg.Joblog, p.cfg.ResumeFailed = "jl", true }},
		{args: c("--joblog", "jl", "--resume", "--resume-any-command", "echo"), want: func(p *runPlan) {
			p.cfg.Joblog, p.cfg.Resume, p.cfg.ResumeAnyCommand = "jl", true, true
		}},
		{args: c("--joblog", "jl", "--resume-any-command", "echo"), err: "--resume-any-command needs --resume or --resume-failed", flag: "--resume-any-command"},
		{args: c("--joblog", "+jl", "echo"), want: func(p *runPlan) { p.cfg.Joblog, p.cfg.JoblogAppend = "jl", true }},
		{args: c("--joblog", "-", "echo"), want: func(p *runPlan) { p.cfg.Joblog = "-" }},
		{args: c("--joblog", "-", "--resume", "echo"), err: "--resume and --resume-failed need a --joblog file to read, not - (standard output)", flag: "--resume"},
		{args: c("--resume", "echo"), err: "--resume and --resume-failed need --joblog", flag: "--resume"},
		{args: c("--resume-failed", "echo"), err: "--resume and --resume-failed need --joblog", flag: "--resume"},
		{args: c("--bar", "echo"), want: func(p *runPlan) { p.bar = barOn }},
		{args: c("--bar", "--dry-run", "echo"), want: func(p *runPlan) { p.bar, p.cfg.DryRun = barOn, true }},
		{args: c("--no-bar", "echo"), want: func(p *runPlan) { p.bar = barOff }},
		{args: c("--bar", "--no-bar", "echo"), err: "--bar and --no-bar cannot be combined", flag: "--bar"},
		{args: c("-k", "echo"), want: func(p *runPlan) { p.cfg.KeepOrder = true }},
		{args: c("--keep-order", "echo"), want: func(p *runPlan) { p.cfg.KeepOrder = true }},
		{args: c("--line-buffer", "echo"), want: func(p *runPlan) { p.cfg.LineBuffer = true }},
		{args: c("-k", "--line-buffer", "echo"), want: func(p *runPlan) { p.cfg.KeepOrder, p.cfg.LineBuffer = true, true }},
		// GNU's no-* overrides *, wherever it is.
		{args: c("-k", "--no-keep-order", "echo")},
		{args: c("--nok", "-k", "echo")},
		{args: c("--no-k", "--keep-order", "echo")},
		{args: c("-k", "--nokeeporder", "echo")},
		// --silent cancels -v (not -t), wherever it is; --gnu changes nothing.
		{args: c("-v", "--silent", "echo")},
		{args: c("--silent", "-v", "-t", "echo"), want: func(p *runPlan) { p.cfg.GNU.VerboseStderr = true }},
		{args: c("--gnu", "echo")},
		// --plain: no $PARALLEL (and no -J profile), as GNU parallel.
		{args: c("echo"), env: map[string]string{"PARALLEL": "-k"}, want: func(p *runPlan) { p.cfg.KeepOrder = true }},
		{args: c("--plain", "echo"), env: map[string]string{"PARALLEL": "-k"}},
		{args: c("--total-jobs", "7", "echo"), want: func(p *runPlan) { p.input.total = 7 }},
		{args: c("--totaljobs", "0", "echo")},
		{args: c("--total-jobs", "many", "echo"), err: `--total-jobs: "many" is not a number of jobs`, flag: "--total-jobs"},
		{args: c("--workdir", "out/{#}", "echo"), want: func(p *runPlan) { p.cfg.GNU.Exec.Workdir = "out/{#}" }},
		{args: c("--wd", "/tmp", "echo"), want: func(p *runPlan) { p.cfg.GNU.Exec.Workdir = "/tmp" }},
		{args: c("--work-dir", ".", "echo")},
		{args: c("--wd", "...", "echo"), err: "--workdir ... (a temporary directory per job on remote hosts) is not supported: ration runs on one machine; --workdir DIR/{#} runs each job in a directory of its own, which is kept", flag: "--workdir"},
		{args: c("--wd", "d", "--worker", "cat"), err: "--workdir cannot be combined with --worker (workers start once, in ration's directory)", flag: "--workdir"},
		{args: c("--skip-first-line", "echo"), want: func(p *runPlan) { p.input.skipFirst = true }},
		{args: c("--skip-first-line", "--files", "*.go", "echo"), err: "--skip-first-line needs :::, ::::, -a or stdin inputs, not --files", flag: "--skip-first-line"},
		{args: c("--skip-first-line", "--pipepart", "-a", "big", "wc"), err: "--skip-first-line cannot be combined with --pipepart", flag: "--skip-first-line"},
		{args: c("--skip-first-line", "--joblog", "jl", "--retry-failed"), err: "--skip-first-line cannot be combined with --retry-failed", flag: "--skip-first-line"},
		{args: c("--process-slot-var", "s", "echo"), want: func(p *runPlan) { p.cfg.GNU.Exec.SlotVar = "s" }},
		{args: c("--processslotvar=s", "echo"), want: func(p *runPlan) { p.cfg.GNU.Exec.SlotVar = "s" }},
		{args: c("--process-slot-var=", "echo"), err: `--process-slot-var: "" is not an environment variable's name`, flag: "--process-slot-var"},
		{args: c("--process-slot-var=a=b", "echo"), err: `--process-slot-var: "a=b" is not an environment variable's name`, flag: "--process-slot-var"},
		{args: c("--process-slot-var=s", "--worker", "cat"), err: "--process-slot-var cannot be combined with --worker (a worker's environment is set once, when it starts)", flag: "--process-slot-var"},

		// Shards: the flag, else the environment of an Indexed Job.
		{args: c("--shard", "1/3", "echo", ":::", "a", "b", "c", "d", "e", "f"), want: func(p *runPlan) {
			p.cfg.Shard = runner.Shard{Index: 1, Count: 3}
			p.input.kind, p.input.sources = inputSources, args(":::", "a", "b", "c", "d", "e", "f")
			p.input.total = inShard(1, 3, "a", "b", "c", "d", "e", "f")
		}},
		{args: c("--shard", "3/3", "echo"), err: "--shard: " + errOf(flagvalue.ParseShard("3/3")), flag: "--shard"},
		{args: c("echo"), env: map[string]string{"RATION_SHARD_COUNT": "3", "JOB_COMPLETION_INDEX": "2"}, want: func(p *runPlan) { p.cfg.Shard = runner.Shard{Index: 2, Count: 3} }},
		{args: c("--shard", "0/2", "echo"), env: map[string]string{"RATION_SHARD_COUNT": "3", "JOB_COMPLETION_INDEX": "2"}, want: func(p *runPlan) { p.cfg.Shard = runner.Shard{Index: 0, Count: 2} }},
		// An Indexed Job's pod without the shard count would run every
		// input in every pod: refused, --shard 0/1 runs them all.
		{args: c("echo"), env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, flag: "RATION_SHARD_COUNT",
			err: "JOB_COMPLETION_INDEX=2 is set but RATION_SHARD_COUNT is not: every pod of the Indexed Job would run every input; set RATION_SHARD_COUNT to the Job's completions, or give --shard 0/1 to run every input in this pod"},
		{args: c("--shard", "0/1", "echo"), env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, want: func(p *runPlan) { p.cfg.Shard = runner.Shard{Index: 0, Count: 1} }},
		{args: c("echo"), env: map[string]string{"JOB_COMPLETION_INDEX": ""}},
		{args: c("echo"), env: map[string]string{"RATION_SHARD_COUNT": "3"}, err: "RATION_SHARD_COUNT=3 is set but JOB_COMPLETION_INDEX is not", flag: "JOB_COMPLETION_INDEX"},
		{args: c("echo"), env: map[string]string{"RATION_SHARD_COUNT": "3", "JOB_COMPLETION_INDEX": "3"},
			err: "JOB_COMPLETION_INDEX/RATION_SHARD_COUNT: " + errOf(flagvalue.NewShard("3", "3")), flag: "JOB_COMPLETION_INDEX/RATION_SHARD_COUNT"},

		// Observation: metrics, logs, stall watchdog.
		{args: c("--metrics-addr", ":0", "echo"), want: func(p *runPlan) { p.observe.metricsAddr = ":0" }},
		{args: c("--debug", "echo"), want: func(p *runPlan) { p.observe.debug, p.log.Debug = true, true }},
		{args: c("--log-format", "json", "echo"), want: func(p *runPlan) {
			p.log.Format, p.observe.json = logs.FormatJSON, true
		}},
		{args: c("--log-format", "human", "echo"), want: func(p *runPlan) { p.log.Format = logs.FormatHuman }},
		{args: c("--log-format", "xml", "echo"), err: "--log-format: " + errOf(logs.New(nil, logs.Options{Format: "xml"})), flag: "--log-format"},
		{args: c("-q", "echo"), want: func(p *runPlan) {
			// No job record is logged: a start or task error goes into the job's stderr.
			p.observe.quiet, p.log.Quiet, p.cfg.OmitErrorLines = true, true, false
		}},
		{args: c("--quiet", "--debug", "echo"), err: "--quiet and --debug exclude each other", flag: "--quiet"},
		{args: c("--stall-timeout", "1s", "echo"), want: func(p *runPlan) { p.observe.stall = time.Second }},
		{args: c("--stall-timeout", "soon", "echo"), err: `--stall-timeout: "soon" is not a duration`, flag: "--stall-timeout"},
		{args: c("--stall-timeout", "-5s", "echo"), err: `--stall-timeout: "-5s" is not a duration`, flag: "--stall-timeout"},
		{args: c("--slow-factor", "0", "echo"), want: func(p *runPlan) { p.observe.slowFactor = 0 }},
		{args: c("--slow-factor", "2.5", "echo"), want: func(p *runPlan) { p.observe.slowFactor = 2.5 }},
		{args: c("--slow-factor", "-1", "echo"), err: "--slow-factor: -1 is not a factor >= 0", flag: "--slow-factor"},
		{args: c("--slow-factor", "NaN", "echo"), err: "--slow-factor: NaN is not a factor >= 0", flag: "--slow-factor"},

		// Workers and adaptation.
		{args: c("--worker", "python3 w.py", ":::", "a"), dryLine: worker.RequestLine(1, "a"), want: func(p *runPlan) {
			p.cfg.Command, p.cfg.Shell, p.worker.command = []string{"python3 w.py"}, true, "python3 w.py"
			p.input.kind, p.input.sources, p.input.total = inputSources, args(":::", "a"), 1
		}},
		{args: c("--worker", "cat", "--timeout", "1s"), dryLine: worker.RequestLine(1, "a"), want: func(p *runPlan) {
			p.cfg.Command, p.cfg.Shell, p.worker.command, p.worker.timeout = []string{"cat"}, true, "cat", time.Second
		}},
		{args: c("--worker", ""), err: "--worker: empty command", flag: "--worker"},
		{args: c("--worker", " "), err: "--worker: empty command", flag: "--worker"},
		{args: c("--worker", "cat", "sh", "-c", "true"), err: `--worker takes no COMMAND (got "sh -c true"): inputs go to the workers`, flag: "--worker"},
		{args: c("--worker", "cat", "--shell"), flag: "--shell",
			err: "--shell cannot be combined with --worker (the worker command already runs through sh -c; inputs are sent as data)"},
		{args: c("--max-breaks", "3", "--worker", "cat"), dryLine: worker.RequestLine(1, "a"), want: func(p *runPlan) {
			p.cfg.Command, p.cfg.Shell, p.worker.command, p.worker.maxBreaks = []string{"cat"}, true, "cat", 3
		}},
		{args: c("--max-breaks", "0", "--worker", "cat"), err: "--max-breaks: 0 is not at least 1", flag: "--max-breaks"},
		{args: c("--worker-max-tasks", "5", "echo"), want: func(p *runPlan) { p.worker.maxTasks = 5 }},
		{args: c("--worker-max-tasks", "-1", "echo"), err: "--worker-max-tasks: -1 is negative", flag: "--worker-max-tasks"},
		{args: c("--worker-max-rss", "1GiB", "echo"), want: func(p *runPlan) { p.worker.maxRSS = 1 << 30 }},
		{args: c("--worker-max-rss", "lots", "echo"), err: `invalid argument "lots" for "--worker-max-rss" flag: want a number with an optional unit such as 512M, 100MiB or 1GiB`},
		{args: c("--watch-limits=false", "echo"), want: func(p *runPlan) { p.worker.watch = false }},
		{args: c("--watch-interval", "200ms", "echo"), want: func(p *runPlan) { p.worker.interval = 200 * time.Millisecond }},
		{args: c("--watch-interval", "often", "echo"), err: `--watch-interval: "often" is not a positive duration`, flag: "--watch-interval"},
		{args: c("--watch-interval", "0", "echo"), err: `--watch-interval: "0" is not a positive duration`, flag: "--watch-interval"},
	}
	return slices.Concat(rows, planCasesGNUExec(), planCasesGNUCLI(), planCasesGNUPipe(), planCasesParset(), planCasesCompressFiles())
}

// args is one ::: group's source plan.
func args(sep string, vals ...string) []sourcePlan {
	return []sourcePlan{{name: sep, args: vals, linked: strings.HasSuffix(sep, "+")}}
}

// argFiles are the source plans of -a files.
func argFiles(paths ...string) []sourcePlan {
	var s []sourcePlan
	for _, p := range paths {
		s = append(s, sourcePlan{name: "-a " + p, path: p})
	}
	return s
}

const filesErr = "--files=PATTERN cannot be combined with :::, :::: or -a (ration's --files PATTERN names the input files by glob; GNU parallel's --files, print the output file names, is --output-files, and a bare --files before the command and such inputs is read so)"

// inShard counts the inputs in shard i/n.
func inShard(i, n int, inputs ...string) int64 {
	s := runner.Shard{Index: i, Count: n}
	var k int64
	for _, in := range inputs {
		if s.Contains(in) {
			k++
		}
	}
	return k
}

// planOf plans args in the environment env (nothing else is read), and
// returns the plan with its functions taken out for comparison: the
// line DryRunLine prints for input "a", job 1.
func planOf(t *testing.T, args []string, env map[string]string) (runPlan, string, error) {
	t.Helper()
	getenv := func(k string) string { return env[k] }
	p, _, err := planRun(args, getenv)
	if err != nil {
		return p, "", err
	}
	var dry string
	if p.cfg.DryRunLine != nil {
		dry = p.cfg.DryRunLine("a", 1)
		p.cfg.DryRunLine = nil
	}
	if !p.help {
		if p.limits.Getenv == nil || p.limits.Getenv("RATION_JOBS") != env["RATION_JOBS"] {
			t.Errorf("%q: the limits options do not read the environment given to plan", args)
		}
		p.limits.Getenv = nil
	}
	return p, dry, nil
}

// TestPlan: every flag of `ration run`, and the environment it reads,
// gives its plan or its one usage error, in-process and without I/O.
func TestPlan(t *testing.T) {
	for _, c := range planCases() {
		name := strings.Join(c.args, " ")
		if len(c.env) > 0 {
			name = strings.TrimSpace(envString(c.env) + " " + name)
		}
		p, dry, err := planOf(t, c.args, c.env)
		if c.err != "" {
			var ue *usageError
			switch {
			case err == nil:
				t.Errorf("%s: no error, want %q", name, c.err)
			case err.Error() != c.err:
				t.Errorf("%s: error\n  %q\nwant\n  %q", name, err.Error(), c.err)
			case c.flag != "" && (!errors.As(err, &ue) || ue.Flag != c.flag):
				t.Errorf("%s: error %#v does not name the flag %s", name, err, c.flag)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		want := basePlan()
		if c.want != nil {
			c.want(&want)
		}
		want.args = c.args
		if !reflect.DeepEqual(p, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, p, want)
		}
		if dry != c.dryLine {
			t.Errorf("%s: dry-run line %q, want %q", name, dry, c.dryLine)
		}
	}
}

func envString(env map[string]string) string {
	var kv []string
	for k, v := range env {
		kv = append(kv, k+"="+v)
	}
	slices.Sort(kv)
	return strings.Join(kv, " ")
}

// TestPlanCoversEveryFlag fails when a flag of `ration run` has no row in
// planCases that sets it and plans successfully, or when the environment
// variables ration run reads have none: a new flag must come with its
// row.
func TestPlanCoversEveryFlag(t *testing.T) {
	covered := map[string]bool{}
	envCovered := map[string]bool{}
	for _, c := range planCases() {
		if c.err != "" {
			continue
		}
		var f runFlags
		fs := newRunFlagSet(&f)
		if err := fs.Parse(c.args); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		fs.Visit(func(fl *pflag.Flag) { covered[fl.Name] = true })
		for k := range c.env {
			envCovered[k] = true
		}
	}
	newRunFlagSet(&runFlags{}).VisitAll(func(fl *pflag.Flag) {
		if !covered[fl.Name] {
			t.Errorf("flag --%s has no successful row in planCases", fl.Name)
		}
	})
	for _, k := range []string{"RATION_JOBS", "RATION_SHARD_COUNT", "JOB_COMPLETION_INDEX", "PARALLEL_SHELL"} {
		if !envCovered[k] {
			t.Errorf("environment variable %s has no successful row in planCases", k)
		}
	}
}

// TestPlanReadsNoProcessEnvironment: plan reads the environment through
// the getenv it is given only.
func TestPlanReadsNoProcessEnvironment(t *testing.T) {
	t.Setenv("RATION_JOBS", "x")
	t.Setenv("RATION_SHARD_COUNT", "3")
	p, _, err := planOf(t, []string{"echo"}, nil)
	if err != nil || p.jobsSpec != "" || p.cfg.Shard != (runner.Shard{}) {
		t.Errorf("plan read the process environment: %v, jobs %q, shard %v", err, p.jobsSpec, p.cfg.Shard)
	}
}

// TestRunUsageErrorOneLine: a usage error, whichever step finds it, is one
// line after "ration run: " and exit status 255, with the library's
// message once (RATION_JOBS=x through runner.New used to print "usage
// error: usage error: ...").
func TestRunUsageErrorOneLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"true", ":::", "a"}, map[string]string{"RATION_JOBS": "x"}, "RATION_JOBS: " + jobsErr("x")},
		{[]string{"-j", "zero", "true", ":::", "a"}, nil, "--jobs: " + jobsFlagErr("zero")},
		{[]string{"--fs-root", "/does/not/exist", "true", ":::", "a"}, nil, "--fs-root /does/not/exist: not a directory"},
		{[]string{"-a", "/does/not/exist", "true"}, nil, "-a /does/not/exist: no such file or directory"},
	} {
		var out, errb strings.Builder
		code := runMain(c.args, func(k string) string { return c.env[k] }, strings.NewReader(""), &out, &errb)
		if code != exitUsage || out.Len() > 0 || errb.String() != "ration run: "+c.want+"\n" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 255 and %q", c.args, code, out.String(), errb.String(), "ration run: "+c.want)
		}
	}
}
