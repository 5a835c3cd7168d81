// Package runhook is the runner's extension point: what a dialect (a
// family of options that configures the engine without being part of it,
// such as ration run's GNU-compatible ones in internal/gnurun) may change
// of a run, and what of a job it may see.
//
// A Dialect is given to the engine in runner.Config; runner.New asks it to
// check its settings against the engine's (Check), for the options the
// command template is parsed with (TemplateOptions), then for its Hooks
// (Install). The engine runs every job on one path and calls the hooks at
// fixed points: the input source, the command of a job, before a start,
// the start gate, the attempt's context, its preparation, its skip, the
// records of an ended job. A hook sees a job through Job, never the
// engine's own state.
//
// runhook is internal so that the hooks are no part of the public API:
// an embedder leaves Config.Dialect nil. It imports runner/input, runner/
// joblog and internal/template only; never runner (which imports it) nor
// a dialect.
package runhook
