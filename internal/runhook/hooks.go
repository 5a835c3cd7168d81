package runhook

import (
	"context"
	"io"
	"iter"
	"log/slog"
	"time"

	"github.com/ration-run/ration/internal/template"
	"github.com/ration-run/ration/runner/input"
	"github.com/ration-run/ration/runner/joblog"
)

// A Dialect configures the engine for a family of options.
type Dialect interface {
	// Check reports, in one line, the first of its settings that
	// contradicts another or the engine's settings s; runner.New returns
	// it as it is.
	Check(s Settings) error
	// TemplateOptions are the options the command is parsed with; the
	// engine sets their Shell.
	TemplateOptions() template.Options
	// Install returns the run's hooks. Its error (a template of the
	// dialect's that does not parse) is runner.New's.
	Install(e Engine) (Hooks, error)
}

// Settings are the engine's settings a dialect's rules depend on.
type Settings struct {
	LineBuffer, KeepOrder, DryRun bool
	Retries                       int
}

// Engine is what a dialect's hooks may use of the engine.
type Engine struct {
	// Template is the command's, parsed.
	Template *template.Template
	// Input is the run's input (runner.Config.Input; nil: none).
	Input input.Seq
	// Keep reports whether an argument is of the run's shard, from its
	// key (its fields joined by NUL bytes); nil: every argument is.
	Keep func(key string) bool
	// LineBuffer: the run prints output line by line.
	LineBuffer bool
	// Logger receives warnings (never nil).
	Logger *slog.Logger
}

// Gate decides whether a job may start now, beyond the pool's room and
// the memory admission. The engine asks it while another job of the run
// runs; when none does, the job starts whatever the gate says, so that a
// run never waits for ever on a machine busy with others' work, and the
// engine tells the gate (Allowed).
type Gate interface {
	// Open reports whether a job may start now. It may read files; the
	// engine calls it without its locks held.
	Open(now time.Time) bool
	// Allowed notes a start the engine let through.
	Allowed(now time.Time)
}

// Hooks are what a dialect changes of a run. A nil field (or an empty
// list) leaves the engine's own behaviour.
type Hooks struct {
	// Source yields the run's jobs, numbered (nil: one job per input of
	// Engine.Input, numbered from 1, the shard's only).
	Source func() iter.Seq2[Item, error]
	// Argv is the argv of the job of it in slot, and Display its command
	// as a shell reads it (--dry-run, the joblog); nil: the template's.
	Argv    func(it Item, slot int) []string
	Display func(it Item, slot int) string
	// AnyCommand: each job's command is its input, so a resumed joblog
	// may hold any command, and its jobs are matched by command.
	AnyCommand bool
	// BySeq: a resumed run matches its jobs to the joblog's records by
	// job number, not by command (a job's identity is its place).
	BySeq bool

	// BeforeStart is called before each job is handed to the pool; it
	// may wait, and returns false when the run stopped (stop closed)
	// meanwhile.
	BeforeStart func(stop <-chan struct{}) bool
	// Gate holds each attempt's start, after the pool has room.
	Gate Gate

	// Bound wrap each attempt's context, outermost first, after the
	// engine's Config.Timeout. A bound that cancels it with
	// runner.ErrTimeout (or an error wrapping it, which says the limit)
	// timed the attempt out; with one of Requeue, stopped it to run it
	// again without counting against Config.Retries.
	Bound   []func(ctx context.Context, j Job) (context.Context, context.CancelFunc)
	Requeue []error
	// Prepare set up each attempt, in order: its writers, directory,
	// stdin and how it runs. done, when not nil, is called once the
	// attempt ended. An error fails the attempt without running it; no
	// later Prepare runs. With Prepare set, the writers are the
	// dialect's (Job.Count counts Receive); without, the engine counts
	// the job's stdout (and with LineBuffer its stderr).
	Prepare []func(j Job, a *Attempt) (done func(), err error)
	// Skip ends an attempt that needs no command: it succeeds at once.
	Skip func(j Job) bool

	// DryRunPrefix is what --dry-run writes before a job's line, in a
	// Write of its own (nil result: nothing).
	DryRunPrefix func(it Item) []byte
	// CompressSpill deflates the output a job spills to a file.
	CompressSpill bool
	// SendSize is the joblog's Send of an ended job (nil: 0).
	SendSize func(j Job) int64
	// Records record each ended job before the joblog does, given its
	// joblog entry; an error fails the job as a failed output does.
	Records []func(j Job, e joblog.Entry) error
	// Ended is called once a job is counted, with whether it succeeded
	// and its last attempt's runtime.
	Ended func(j Job, succeeded bool, runtime time.Duration)
}

// Item is one job's arguments.
type Item struct {
	Seq int64
	// Input is the arguments as events show them: every field, separated
	// by spaces.
	Input string
	// Fields are the flat list of the arguments' fields (nil: the one
	// field Input); Args are the arguments (nil: Input alone).
	Fields []string
	Args   [][]string
}

// FieldList is the flat list of the job's fields.
func (it Item) FieldList() []string {
	if it.Fields == nil {
		return []string{it.Input}
	}
	return it.Fields
}

// Job is what a hook sees of one job.
type Job interface {
	// Item is the job's arguments, Slot its slot ({%}).
	Item() Item
	Slot() int
	// Stream is the job's own stdout (or stderr): what the engine
	// prints.
	Stream(stderr bool) io.Writer
	// Count is w counting what passes through it into the joblog's
	// Receive.
	Count(w io.Writer) io.Writer
	// YoungestOfSeveral reports whether the job's attempt runs, another
	// job runs too, and none of them has a higher job number.
	YoungestOfSeveral() bool
}

// Attempt is what Prepare sets up of one attempt (runner.Attempt's
// fields of the same names).
type Attempt struct {
	Stdout, Stderr io.Writer
	Stdin          io.Reader
	Dir            string
	Nice           int
	NiceSet        bool
	TermSeq        TermSeq
	SlotVar        string
}
