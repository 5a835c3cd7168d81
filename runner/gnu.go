package runner

import (
	"io"
	"iter"
	"strings"
	"time"

	"github.com/ration-run/ration/internal/gnu"
	"github.com/ration-run/ration/internal/gnuinput"
	"github.com/ration-run/ration/internal/template"
)

// GNU are the options of GNU parallel's input model and bookkeeping: input
// sources with several fields, several arguments per job, custom
// replacement strings, and what a job's output is tagged with or written
// to. The zero value runs one job per input of Config.Input, as before.
type GNU struct {
	// Args, when set, yields the arguments of the run (gnuinput.Open's All)
	// instead of Config.Input; each argument may have several fields.
	Args gnuinput.ArgSeq
	// Batch says how many arguments a job takes (-n, -N, -L, -X, -m,
	// --xargs, -s). Its Measure and Keep are the runner's: Measure is the
	// command's Measurer when MaxChars is set, Keep is Config.Shard.
	Batch gnuinput.BatchOptions
	// NoFields is -N0: every job takes one argument and none of its fields
	// (the command runs as written, once per argument).
	NoFields bool
	// Pipe is --pipe: every argument is a block of stdin (gnuinput.Blocks)
	// that is the job's stdin (Attempt.Stdin) and none of its fields; the
	// command runs as written. Batch must take one argument per job;
	// Stdin, SendSize and PipeArg need it (New refuses them without).
	Pipe bool
	// Stdin, when set with Pipe, gives a job's stdin instead of its input
	// (--pipepart's part of a file, --round-robin's stream of blocks): it
	// is called at each attempt with the job's input, and done, when not
	// nil, once the attempt ended (see runner/pipe_gnu.go). A non-nil err
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
	// InShard, when set, says whether an argument is Config.Shard's,
	// instead of the hash of its fields: --cat's and --fifo's arguments
	// are names of files made per process, so the shard must hash the
	// block each stands for. It is asked once per argument, as it is read.
	InShard func(a gnuinput.Arg) bool
	// PipeArg, with Pipe, makes a job's input its one field, so {} is it
	// (--cat, --fifo: the name of a file Stdin's hook makes, which then
	// returns a nil stdin: /dev/null). The block is given once: not with
	// Config.Retries > 1.
	PipeArg bool
	// Template are the options of the command's template (--header's
	// names, -X's context, -I and the other custom strings, the shell of
	// --shell); its Shell is Config.Shell.
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
	// never sees the output); ration prints as with Config.LineBuffer,
	// which must be set too.
	Ungroup bool
	// Verbose prints each job's command on its stdout before its output
	// (-v, as GNU parallel does); VerboseStderr prints it on its stderr
	// (-t, --verbose).
	Verbose, VerboseStderr bool
	// InputIsCommand runs each job's arguments, joined by spaces, as a
	// shell command line (GNU parallel without a command); Config.Command
	// is then unused but must not be empty.
	InputIsCommand bool
	// Delay is the least time between two job starts (--delay).
	Delay time.Duration
	// TimeoutPercent, when > 0, stops an attempt running longer than
	// this percentage of the median runtime of the jobs that succeeded
	// (--timeout P%, as GNU parallel), and never sooner than after 1 s;
	// before one succeeded there is no limit. It counts as Config.Timeout
	// does.
	TimeoutPercent float64
	// Exec are the options that change how a job runs (gnuexec).
	Exec GNUExec
}

// oneArg reports whether every job takes one argument: then a job's number
// ({#}, the joblog's Seq) is its input's number, as before batches.
func (g *GNU) oneArg() bool {
	b := g.Batch
	return b.MaxChars <= 0 && b.MaxArgs <= 1
}

// templateOptions are the options the command is parsed with.
func (c *Config) templateOptions() template.Options {
	o := c.GNU.Template
	o.Shell = c.Shell
	return o
}

// args yields the run's arguments: Config.GNU.Args, else Config.Input's
// inputs as one-field arguments.
func (r *Runner) args() gnuinput.ArgSeq {
	if r.cfg.GNU.Args != nil {
		return r.cfg.GNU.Args
	}
	return func(yield func(gnuinput.Arg, error) bool) {
		if r.cfg.Input == nil {
			return
		}
		for in, err := range r.cfg.Input {
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

// batches groups the arguments into jobs: the Config's batching, this
// shard's arguments only (chosen before batching, so shards stay disjoint
// whatever the batch sizes). A job's number is the batch's number, or,
// when every job takes one argument, the input's number, which a joblog
// written before batches existed also holds.
func (r *Runner) batches() iter.Seq2[item, error] {
	g := &r.cfg.GNU
	opts := g.Batch
	if opts.MaxChars > 0 {
		opts.Measure = r.tmpl.Measurer()
	}
	if r.cfg.Shard.Count > 1 {
		opts.Keep = func(a gnuinput.Arg) bool { return r.cfg.Shard.Contains(a.Key()) }
		if g.InShard != nil {
			opts.Keep = g.InShard
		}
	}
	one := g.oneArg()
	return func(yield func(item, error) bool) {
		for b, err := range gnuinput.Batches(r.args(), opts) {
			if err != nil {
				yield(item{}, err)
				return
			}
			it := item{seq: b.Seq, fields: b.Fields(), args: b.Args}
			if one {
				it.seq = b.First
			}
			if g.NoFields || g.Pipe && !g.PipeArg {
				it.fields = []string{}
			}
			it.input = argsString(b.Args)
			if !yield(it, nil) {
				return
			}
		}
	}
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

// argvOf is the argv of the job of it in slot.
func (r *Runner) argvOf(it item, slot int) []string {
	if r.cfg.GNU.InputIsCommand {
		sh := r.cfg.GNU.Template.ShellPath
		if sh == "" {
			sh = template.ShellPath
		}
		return []string{sh, "-c", strings.Join(it.fieldList(), " ")}
	}
	return r.tmpl.ExpandFields(it.fieldList(), it.seq, slot)
}

// displayOf is the command of the job of it in slot as a shell reads it:
// what --dry-run prints and the joblog's Command column holds.
func (r *Runner) displayOf(it item, slot int) string {
	if r.cfg.GNU.InputIsCommand {
		return strings.Join(it.fieldList(), " ")
	}
	return r.tmpl.DisplayFields(it.fieldList(), it.seq, slot)
}

// fieldList is the flat list of the job's fields (the input alone for an
// item made without fields, as tests of the runner's internals do).
func (it item) fieldList() []string {
	if it.fields == nil {
		return []string{it.input}
	}
	return it.fields
}

// gnuState is what the runner keeps for the GNU options.
type gnuState struct {
	// tag is --tagstring parsed; nil when it is literal or not given.
	tag *template.Template
	// workdir is GNUExec.Workdir parsed; nil when it is literal or not
	// given.
	workdir *template.Template
	// runtimes feed --timeout P%.
	runtimes gnu.Runtimes
	// exec is GNUExec's state (gnuexec).
	exec execState
}
