// Package runner runs a command once per input, in parallel, the way
// xargs -P and parallel do, within a job count decided elsewhere (package
// limits), and never loses track of a job: every job that starts ends with
// one event, one joblog line (unless the run itself stopped it) and one
// count in the Summary, even when the run is interrupted.
//
// Inputs are pulled lazily from an input.Seq through a bounded pool, so the
// first jobs start before the input ends and memory stays flat whatever the
// input's length. Each job's argv comes from its command template (see
// Config.Command); each attempt runs through an Executor: by default one
// process per attempt, in its own process group (ProcessExecutor), or a
// task on a long-lived worker process (ration's internal/workerexec).
//
// # One job engine
//
// The Runner is the only source of job events (JobStarted, JobRetried,
// JobFinished) and of the outcome counts in the Summary, whatever the
// executor: an executor runs one attempt and hands back one AttemptResult.
// Executors that own processes beyond one attempt (a worker pool) report
// their own worker and pool events through the observer Run gives them
// (Starter).
//
// # The engine and its dialects
//
// The engine (job.go, run.go, record.go, hooks.go) runs every attempt on
// one path: hooks bound the attempt's context (Config.Timeout's is the
// engine's own), prepare its Attempt (writers, options, directory,
// stdin) or end it without a command, then the Executor runs it. A family
// of options the engine knows nothing of (ration run's options compatible
// with parallel(1), in a package of their own under internal/) is a
// dialect, Config.Dialect: New asks it to check its settings against the
// Config's, for the options the command is parsed with, and for its
// hooks (the input source, the
// command of a job, a wait before each start, a start gate, bounds of an
// attempt's context, its preparation and skip, the dry run's prefix, the
// spill files' compression, the joblog's Send, record sinks, the end of a
// job). The engine calls them at fixed points and never asks which
// feature is behind one.
//
// The hooks and the view of a job they get are package
// internal/runhook's, not runner's: a public hook API would publish the
// engine's insides (items, job handles, attempt preparation) as API that
// embedders would then hold us to, for the benefit of one dialect that
// lives in this module. So Config.Dialect's type is internal: an embedder
// leaves it nil (the engine then runs one job per input with its own
// source and writers), and what an embedder does need of it (TermSeq,
// TermStep for an Executor) runner re-exports by type alias. There is no
// registration: a dialect is a value in the Config, so two runs in one
// process may run two dialects.
//
// runner imports pool, limits, its own event, input, joblog and adapt,
// and internal/{memory,runhook,template,reaper,jobcgroup,pdeath}; never a
// dialect, runner/worker or internal/workerexec (which import it), nor
// the CLI's packages (internal/flagvalue and the observers).
//
// # Concurrency
//
// The Runner owns the run's concurrency controller (adapt.Controller,
// Config.Adapt): the controller's inputs are job outcomes (successes grow
// the size back, OOM kills halve it, peak RSS teaches the memory per job),
// and those are the Runner's events; its output is the number of jobs that
// run at once, which the Runner enforces for every executor and passes on to
// an executor that sizes processes of its own (an adapt.Resizer, such as a
// worker pool). So there is one controller and one size, in both modes.
//
// # Out of memory
//
// With Config.Memory (ration's memory cgroup), each attempt waits for the
// memory admission of package internal/memory before it starts: it starts alone,
// or while one more job fits in the limit (the kernel's working set, the
// finished jobs' peaks and the running jobs' RSS; slow start before the
// first peak is known; a hold while PSI shows memory pressure). The pool
// size (the CPU policy, -j, the controller) stays the upper bound.
//
// With Config.OOMKills, an attempt that failed while the memory cgroup's
// oom_kill counter rose, and whose process group is gone, is OOM-killed
// (event.CauseOOM): SIGKILL, or exit 137 from a shell whose child was
// SIGKILLed (memory.Attribute; the jobs that ran then are named as
// candidates). The job is re-queued without counting against Retries:
// the first kill always (with Config.OOMAloneFails, not one while it ran
// alone with a peak past the memory for jobs), a later one unless it ran
// alone or it was the third (memory.OOMRetry). The re-queued attempt
// waits until fewer other jobs run than half of those at the kill and
// than the pool size (the controller with HalveOnJobOOM halves it on the
// JobRetried event), and no new job starts meanwhile. (A worker pool
// re-dispatches a task whose worker was OOM-killed itself, by the same
// rule, and quarantines it when the rule says so: that verdict is final;
// see package worker.)
//
// # Stopping
//
// Drain stops starting jobs at once (inputs already pulled do not start),
// lets the running jobs finish for Config.TermTimeout, then stops them
// (SIGTERM to their process groups, SIGKILL after Config.Grace). Kill stops
// them at once with SIGKILL. Canceling Run's context is like Drain with no
// wait. Jobs the run stopped are not written to the joblog, so --resume runs
// them again; they count as Killed, not Failed.
//
// # Events
//
// The runner emits one event.JobStarted per attempt, event.JobRetried
// between attempts, exactly one event.JobFinished per job pulled from the
// input (Outcome NotStarted for pulled jobs that never started,
// Quarantined for a job its executor set aside), event.JobSkipped and
// event.PoolResized to Config.Observer, never while holding a lock. So
// started = succeeded + failed + quarantined + running holds for the
// observers (internal/metrics) whatever the executor.
//
// # Platforms
//
// Process groups, oom_score_adj, the OOM-kill counter and the PID-1 reaper
// are Linux (process groups: Unix) features. On other Unix systems jobs
// still run in their own process groups, without OOM classification; on
// Windows, ProcessExecutor starts jobs with os/exec, without process groups
// (stopping a job kills its process only) and without peak RSS.
package runner
