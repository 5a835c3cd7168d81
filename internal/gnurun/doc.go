// Package gnurun is ration run's GNU parallel dialect: the options of GNU
// parallel's input model and bookkeeping (several sources and fields,
// several arguments per job, --pipe's blocks, --tag, --results, --files,
// -v, --workdir, --nice, --termseq, --timeout P%, --delay, --load,
// --noswap, --memfree, --compress, --_parset) as hooks of the runner's
// engine. A *GNU is a runhook.Dialect: ration run sets it as
// runner.Config.Dialect; runner.New checks it against the Config (Check,
// with the same one-line messages whatever builds the Config) and
// installs its hooks (Install), which configure the engine without being
// part of it.
//
// The engine's own semantics that ration shares with GNU parallel
// 20221122 (--halt's conditions and exit statuses, the joblog's columns
// and Send/Receive, -k --line-buffer's order, the job slots and their
// variables, --resume's matching) are the runner's, documented there in
// their own terms; this package holds what only GNU's options do. GNU
// parallel's formats (the --results tree and table, --tag's prefix,
// --_parset's assignments) are package internal/gnu's.
//
// gnurun imports runner (its errors, Config), internal/runhook (the
// engine's extension point), internal/gnu, internal/template and
// internal/memory; never the CLI's packages. runner must not import it.
package gnurun
