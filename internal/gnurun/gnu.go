package gnurun

import (
	"io"
	"iter"
	"log/slog"
	"strings"
	"time"

	"github.com/ration-run/ration/internal/gnu"
	"github.com/ration-run/ration/internal/gnuinput"
	"github.com/ration-run/ration/internal/runhook"
	"github.com/ration-run/ration/internal/template"
)

// GNU are the options of GNU parallel's input model and bookkeeping: input
// sources with several fields, several arguments per job, custom
// replacement strings, and what a job's output is tagged with or written
// to. The zero value runs one job per input of runner.Config.Input, as
// the engine alone does. A *GNU is a runhook.Dialect: ration run sets it
// as runner.Config.Dialect, and runner.New checks it (Check) and installs
// its hooks (Install).
type GNU struct {
	// Args, when set, yields the arguments of the run (gnuinput.Open's All)
	// instead of runner.Config.Input; each argument may have several fields.
	Args gnuinput.ArgSeq
	// Batch says how many arguments a job takes (-n, -N, -L, -X, -m,
	// --xargs, -s). Its Measure and Keep are the runner's: Measure is the
	// command's Measurer when MaxChars is set, Keep is runner.Config.Shard's.
	Batch gnuinput.BatchOptions
	// NoFields is -N0: every job takes one argument and none of its fields
	// (the command runs as written, once per argument).
	NoFields bool
	// Pipe is --pipe: every argument is a block of stdin (gnuinput.Blocks)
	// that is the job's stdin (runner.Attempt.Stdin) and none of its fields; the
	// command runs as written. Batch must take one argument per job;
	// Stdin, SendSize and PipeArg need it (runner.New refuses them without).
	Pipe bool
	// Stdin, when set with Pipe, gives a job's stdin instead of its input
	// (--pipepart's part of a file, --round-robin's stream of blocks): it
	// is called at each attempt with the job's input, and done, when not
	// nil, once the attempt ended (see pipe.go). A non-nil err
	// (--cat's file could not be written) fails the attempt without
	// running it: a job must never run on part of its input.
	Stdin func(input string) (stdin io.Reader, done func(), err error)
	// SendSize, when set with Pipe, is the joblog's Send of the job of
	// input, asked once when the job is recorded: the bytes of the
	// block(s) Stdin gave it (--cat's and --fifo's file, --round-robin's
	// blocks). Without it, Send is the input's length with Pipe and no
	// Stdin (the input is the block, its header included), else 0
	// (--pipepart), as GNU parallel 20221122 counts it.
	SendSize func(input string) int64
	// InShard, when set, says whether an argument is runner.Config.Shard's,
	// instead of the hash of its fields: --cat's and --fifo's arguments
	// are names of files made per process, so the shard must hash the
	// block each stands for. It is asked once per argument, as it is read.
	InShard func(a gnuinput.Arg) bool
	// PipeArg, with Pipe, makes a job's input its one field, so {} is it
	// (--cat, --fifo: the name of a file Stdin's hook makes, which then
	// returns a nil stdin: /dev/null). The block is given once: not with
	// runner.Config.Retries > 1.
	PipeArg bool
	// Template are the options of the command's template (--header's
	// names, -X's context, -I and the other custom strings, the shell of
	// --shell); its Shell is runner.Config.Shell.
	Template template.Options
	// Tag prefixes every line of a job's output with its arguments and a
	// tab (--tag); TagString, when set, is the prefix instead, with
	// replacement strings (--tagstring), and implies Tag.
	Tag       bool
	TagString string
	// Results is --results DIR: a job's stdout and stderr go to files
	// under DIR (GNU parallel's layout: DIR/1/ARG1/2/ARG2/stdout, with the
	// --header names for the source numbers, and a seq file), not to
	// Stdout and Stderr.
	Results string
	// Ungroup is -u: GNU parallel's joblog then has a Receive of 0 (it
	// never sees the output); ration prints as with runner.Config.LineBuffer,
	// which must be set too.
	Ungroup bool
	// Verbose prints each job's command on its stdout before its output
	// (-v, as GNU parallel does); VerboseStderr prints it on its stderr
	// (-t, --verbose).
	Verbose, VerboseStderr bool
	// InputIsCommand runs each job's arguments, joined by spaces, as a
	// shell command line (GNU parallel without a command); runner.Config.Command
	// is then unused but must not be empty.
	InputIsCommand bool
	// Delay is the least time between two job starts (--delay).
	Delay time.Duration
	// TimeoutPercent, when > 0, stops an attempt running longer than
	// this percentage of the median runtime of the jobs that succeeded
	// (--timeout P%, as GNU parallel), and never sooner than after 1 s;
	// before one succeeded there is no limit. It counts as runner.Config.Timeout
	// does.
	TimeoutPercent float64
	// Exec are the options that change how a job runs (exec.go).
	Exec GNUExec

	// readMachine, when set, reads the machine for the start gate instead
	// of /proc (tests of the gate's decisions in a run).
	readMachine func(dir string, load bool) (machine, error)
}

// oneArg reports whether every job takes one argument: then a job's number
// ({#}, the joblog's Seq) is its input's number, as before batches.
func (g *GNU) oneArg() bool {
	b := g.Batch
	return b.MaxChars <= 0 && b.MaxArgs <= 1
}

// TemplateOptions are the options the command is parsed with
// (runhook.Dialect).
func (g *GNU) TemplateOptions() template.Options { return g.Template }

// state is one run's state of the GNU options: what Install's hooks share.
type state struct {
	g   GNU
	e   runhook.Engine
	log *slog.Logger
	// tag is --tagstring parsed; nil when it is literal or not given.
	tag *template.Template
	// workdir is GNUExec.Workdir parsed; nil when it is literal or not
	// given.
	workdir *template.Template
	// runtimes feed --timeout P%.
	runtimes gnu.Runtimes
	// exec is GNUExec's state.
	exec execState
}

// args yields the run's arguments: GNU.Args, else the engine's inputs as
// one-field arguments.
func (r *state) args() gnuinput.ArgSeq {
	if r.g.Args != nil {
		return r.g.Args
	}
	return func(yield func(gnuinput.Arg, error) bool) {
		if r.e.Input == nil {
			return
		}
		for in, err := range r.e.Input {
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(gnuinput.Arg{in}, nil) {
				return
			}
		}
	}
}

// batches groups the arguments into jobs: the GNU options' batching, this
// shard's arguments only (chosen before batching, so shards stay disjoint
// whatever the batch sizes). A job's number is the batch's number, or,
// when every job takes one argument, the input's number, which a joblog
// written before batches existed also holds.
func (r *state) batches() iter.Seq2[runhook.Item, error] {
	g := &r.g
	opts := g.Batch
	if opts.MaxChars > 0 {
		opts.Measure = r.e.Template.Measurer()
	}
	if keep := r.e.Keep; keep != nil {
		opts.Keep = func(a gnuinput.Arg) bool { return keep(a.Key()) }
		if g.InShard != nil {
			opts.Keep = g.InShard
		}
	}
	one := g.oneArg()
	return func(yield func(runhook.Item, error) bool) {
		for b, err := range gnuinput.Batches(r.args(), opts) {
			if err != nil {
				yield(runhook.Item{}, err)
				return
			}
			it := runhook.Item{Seq: b.Seq, Fields: b.Fields(), Args: argFields(b.Args)}
			if one {
				it.Seq = b.First
			}
			if g.NoFields || g.Pipe && !g.PipeArg {
				it.Fields = []string{}
			}
			it.Input = argsString(b.Args)
			if !yield(it, nil) {
				return
			}
		}
	}
}

// argFields is args as the engine carries them: each argument's fields.
func argFields(args []gnuinput.Arg) [][]string {
	fields := make([][]string, len(args))
	for i, a := range args {
		fields[i] = a
	}
	return fields
}

// argsString is the arguments of a job as events and --dry-run's worker
// lines show them: every field, separated by spaces.
func argsString(args []gnuinput.Arg) string {
	if len(args) == 1 && len(args[0]) == 1 {
		return args[0][0]
	}
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.String()
	}
	return strings.Join(parts, " ")
}

// argv is the argv of the job of it with InputIsCommand: its arguments,
// joined by spaces, as a shell command line.
func (r *state) argv(it runhook.Item, _ int) []string {
	sh := r.g.Template.ShellPath
	if sh == "" {
		sh = template.ShellPath
	}
	return []string{sh, "-c", strings.Join(it.FieldList(), " ")}
}

// display is the command of the job of it with InputIsCommand: what
// --dry-run prints and the joblog's Command column holds.
func (r *state) display(it runhook.Item, _ int) string {
	return strings.Join(it.FieldList(), " ")
}
