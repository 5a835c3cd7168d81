// Package worker runs tasks on a pool of long-lived worker processes that
// keep their warm state (an interpreter, a loaded model, a parsed config)
// from one task to the next, and survives their breaking.
//
// It is what `ration run --worker 'CMD ARGS'` uses, and a Go service can
// use it directly:
//
//	p, err := worker.New(ctx, worker.Config{Command: []string{"python3", "worker.py"}, Size: 4})
//	if err != nil { ... }
//	defer p.Close(context.Background())
//	out, err := p.Do(ctx, "input line")
//
// # Protocol
//
// One JSON object per line, UTF-8 (docs/workers.md has complete workers in
// Python and Go). The pool writes {"id":N,"input":"..."} to the worker's
// stdin; the worker answers on stdout with {"id":N,"ok":true,"output":V}
// (V any JSON value) or {"id":N,"ok":false,"error":"..."}. Other fields are
// ignored. Closed stdin means "exit now". stderr is free text, passed
// through line by line with the prefix "[slot] ". Each worker has at most
// one task at a time, so a crash is always attributed to one task.
//
// # Every task ends exactly once
//
// [Pool.Run] (and [Pool.Do]) returns once per task, as succeeded (the
// worker said ok:true), failed (ok:false: a [*TaskError]; or the pool
// closed: [ErrClosed]), quarantined ([*QuarantinedError]), stopped (the
// task's context ended after a worker took it: its error) or not started.
// The pool reports worker and pool events only (event.WorkerStarted,
// WorkerBroken, WorkerRetired, PoolRecreated): a task's own start and end
// are its owner's to report, from Task.Started and the Result (the runner
// does, once per job). All errors are errors.Is/As-able.
//
// # Breakage
//
// A worker is broken when it exits (CauseExit), dies by a signal
// (CauseSignal), is OOM-killed (CauseOOM: SIGKILL while the oom_kill
// counter of its memory cgroup rose during its task), writes a line that
// is not the protocol, an answer with the wrong id or missing fields, or
// anything while it has no task (CauseProtocol), or exceeds
// Config.Timeout on a task (CauseTimeout). Its process group is killed and
// it is replaced at once; its task is re-dispatched to another worker,
// ahead of new tasks. A task that has broken Config.MaxBreaks workers is
// quarantined with the cause and the last stderr lines of the worker; no
// other task is affected. A worker that breaks before it read any of its
// task (its request was still all in the pipe, on Linux, or could not be
// written) broke as if idle: the task is re-dispatched and not charged,
// except on a timeout (which counts from the handing over). A
// [*BreakError] describes each break.
//
// # OOM kills
//
// A task whose worker was OOM-killed follows the runner's rule for a job
// (memory.OOMRetry, with the same constants) instead of Config.MaxBreaks:
//
//  1. It is re-dispatched only once the tasks in flight, counted as busy
//     workers (retiring workers of a recreation that still finish their
//     task included) and OOM re-dispatches let go before it, are fewer than
//     both the pool's size and half of the tasks that were in flight
//     beside it at the kill (at least 1: then it runs alone). The size is
//     read as it is then, so after a recreation that a controller halved
//     it waits for the number in flight to actually drop, not just the
//     target. While it waits, and until a worker has taken it, no worker
//     takes a first attempt, so the drop happens; running tasks are never
//     killed for it. While it runs, first attempts wait as long as that
//     many tasks are in flight: it runs at the lowered concurrency to its
//     end, with or without a controller.
//  2. A worker that is retiring never starts a task: one that receives a
//     task as it is being retired hands it back to be dispatched again.
//  3. It is quarantined (cause OOM, [QuarantinedError.Reason] says why)
//     once it was killed while no other task was in flight (it does not
//     fit alone), or at its Config.OOMAttempts-th OOM kill (3 by default,
//     memory.DefaultOOMAttempts), whichever comes first. The first kill is
//     always re-dispatched, as another process may have caused it.
//
// # Systemic breakage and recreation
//
// Breakage is systemic when, within Config.BreakWindow, either nothing
// works: since the last task that succeeded, workers broke in as many
// slots as the pool has workers, on at least max(2, size/2) distinct
// tasks; or memory is short: at least max(2, size/2) distinct tasks were
// OOM-killed, however many others succeed. Breaks caused by one task count
// once, each break with no task (a worker that dies idle or cannot start)
// counts, and breaks of retiring workers do not count. So poison tasks,
// each quarantined on its own, never recreate the pool while other tasks
// succeed, or run on a worker that did not break: they cost one worker
// start per break and nothing else. When every task crashes its worker,
// every slot breaks at once. Systemic breakage retires every worker
// (running tasks finish and are charged nothing; waiting tasks wait), the
// pool waits Config.Backoff (doubled for each recreation in a row) and
// starts afresh, with an event.PoolRecreated. The PoolRecreated event names
// the cause; a concurrency controller (package adapt) that observes the
// pool's events halves the size on a mostly-OOM recreation and resizes the
// pool through [Pool.Resize]. A recreation for another cause keeps the size:
// fewer workers do not mend a command or an environment that crashes every
// worker, the backoff and the giving up below answer it. The pool has no
// controller of its own: in ration run --worker the runner owns it (package
// internal/workerexec). After Config.MaxRecreations recreations without a
// successful task in between, the pool gives up: every task fails with a
// [*BrokenError].
//
// # Retiring
//
// Retiring is a state of its own, entered by a shrink ([Pool.Resize] or
// the controller), recycling (Config.MaxTasks, Config.MaxRSS), recreation
// and [Pool.Close]. A retiring worker finishes its current task, then its
// stdin is closed and it is killed after Config.StopGrace. It is never
// restarted, even when it crashes while retiring: a worker process is
// started exactly once, by the pool when it has fewer live (non-retiring)
// workers than its size, and a retiring worker is not live. If a retiring
// worker crashes mid-task, the task is re-dispatched like any other.
//
// # Processes and goroutines
//
// Each worker runs in its own process group with PR_SET_PDEATHSIG, so a
// break or Close kills the worker and everything it started, and a worker
// does not outlive ration. Those, the oom_score_adj below and the OOM-kill
// counter are Linux's: on other Unix systems workers get a process group
// but no parent-death signal and no OOM classification, and on Windows a
// break kills the worker process only. Its oom_score_adj is raised by [OOMScoreAdj], so
// that the OOM killer takes a worker rather than the pool's owner. Close returns when every worker has been reaped
// and every goroutine of the pool has ended. Observers are called outside
// the pool's locks, from the goroutine where the thing happened.
//
// Of this module it imports cgroup, limits, runner/event and the engine's
// internal packages (adapt, jobcgroup, jobtable, memory, pdeath, reaper). It
// must not import package runner (internal/workerexec adapts a pool to the
// runner) nor the command line's packages.
package worker
