// Package pool is a lazy, bounded, deadlock-free worker pool for in-process
// parallelism.
//
// A [Pool] has a bounded number of workers (its size), which can be changed
// while the pool is running with [Pool.Resize]. A worker's goroutine starts
// when a task first needs it, so an idle pool costs the same whatever its
// size. Work reaches the workers in three ways:
//
//   - [Pool.Go] and [Pool.TryGo] submit heterogeneous tasks. Go blocks until a
//     worker is free or the pool's small bounded queue ([QueueSlack] tasks,
//     or as set with [Queue]) has room (backpressure); with Queue(0) it
//     returns only once a worker has taken the task, as errgroup's Go with
//     SetLimit. TryGo never blocks and succeeds whenever a worker is idle.
//     [Pool.Wait] waits for every task submitted with them.
//   - [Pool.Group] scopes tasks to one caller, in the shape of errgroup's
//     WithContext: a service keeps one process-wide pool, and each request
//     submits through its own [Group], waits only for its own tasks and gets
//     only their first error; the group's context is canceled when a task
//     fails.
//   - [Map] and [MapOrdered] apply a function to a lazily pulled
//     [iter.Seq] and return the results as an iterator, in completion order or
//     in input order. [Collect] gathers a Map's values in input order into
//     a slice in one call; [StopErr] tells a Map that ran to completion from
//     one cut short (a canceled context, FailFast, Close).
//
// # Size
//
// The size is given to [New]. The package imports the standard library
// only and reads no cgroup files: to size a pool from the container's
// limits (the tightest CPU quota of the cgroup hierarchy, the cpuset,
// RATION_JOBS), pass the count of package limits' Jobs, as the package
// example does:
//
//	n, why, err := limits.Jobs(ctx) // err: an invalid RATION_JOBS
//	p := pool.New(n)                // why: "jobs=4: 2 host CPUs ..."
//
// New(0) takes [DefaultSize]: the RATION_JOBS environment variable when it
// is set, else 2 x GOMAXPROCS, capped at 8 (since Go 1.25, GOMAXPROCS
// follows the CPU quota of the process's own cgroup, rounded up, at least
// 2). DefaultSize also returns the reason for that size, and an invalid
// RATION_JOBS as an error, which New only logs as a warning.
//
// # Bounds
//
// The pool holds at most its queue's length ([QueueSlack] unless set with
// [Queue]) of submitted tasks beyond the ones its workers run: when every
// worker is busy, a task waits in the pool's queue, and a submitter blocks
// only when the queue is full too. So a pool never holds more than its
// size plus the queue's length in unfinished tasks (inline nested tasks
// aside), and [Stats] shows the queued ones. The queue is what lets a busy
// worker take its next task without parking and being woken for it; with
// Queue(0) nothing is queued, and Go returns only once a worker has taken
// the task.
//
// Map pulls the next input item only after the previous one was handed to a
// worker or queued and fewer than size+[PullSlack] items (with a queue
// set by Queue, size plus its length plus 1) are pulled and not yet
// delivered to the consumer ("outstanding"; one fewer while the pool's
// tasks are very short, see PullSlack). So at no time are more than
// size+PullSlack items outstanding, where size is the pool's size at the
// moment of the pull; after a shrink, no item is pulled until the
// outstanding count has dropped below the new bound. The same bound is the
// reorder window of MapOrdered: when the head item is slow, the other
// workers finish at most size+PullSlack-1 items after it and then wait;
// memory stays bounded. [Window] sets another bound.
//
// # Deadlock freedom
//
// The pool is built so that the three classic pool deadlocks cannot happen:
//
//   - Results never wait behind submissions. Map's consumer delivers finished
//     results while it waits for a free worker, and a worker never blocks
//     publishing a result: each outstanding item has its own result slot. A
//     consumer that stops reading only stops the pulling of input; when it
//     resumes or breaks, every goroutine finishes.
//   - A task may submit to, or map over, its own pool. Every task runs with a
//     context that identifies the pool. When Go, or Map's dispatcher, is
//     called with that context (or one derived from it) and no worker is idle,
//     the task runs inline on the calling goroutine instead of waiting for a
//     worker that may never come (all of them could be waiting the same way).
//     Nested work thus always makes progress, across a shrink too (a
//     surplus worker stays until the tasks and items handed to it by
//     nested calls have started). Its concurrency is bounded by
//     the nesting depth. A nested call with an unrelated context (for example
//     [context.Background]) is an ordinary blocking submission and can
//     deadlock like any bounded pool; so can calling Wait or Close from a
//     task, which would wait for itself.
//   - User code (tasks, input iterators, hooks) is never called while the pool
//     holds a lock. Hooks run on the worker goroutine, outside every lock, and
//     may call Go, TryGo, Resize and Stats (but not Wait or Close, which would
//     wait for the hook itself).
//
// # Errors
//
// A task's error is returned by Wait (for Go and TryGo; Group.Wait for a
// group's tasks) or carried in its [Result] (for Map). A panic in a task or a
// hook is recovered and becomes a [*PanicError] carrying the panic value and
// stack; the worker survives. A task that calls [runtime.Goexit] fails with
// [ErrGoexit] and its worker is replaced, so the pool keeps its size. (A
// nested task that ran inline was on its submitting task's goroutine: its
// Goexit ends that task too, which fails with ErrGoexit, and a nested Map
// it was an item of ends with it.) A
// panic in a Map loop body or input iterator propagates to the caller as
// itself, after the Map's running items were canceled and waited for.
//
// The first error is always recorded before anything is canceled: a
// Group's Wait returns the failing task's error and [FailFast] delivers the
// failed item's Result before any result its cancellation causes, so the
// real failure is never hidden behind a sibling's context.Canceled. A Map
// item whose context is done before it starts never starts: it yields
// [ErrNotStarted].
//
// # Slots
//
// [Slot] returns the 1-based slot of the running task, like GNU parallel's
// {%}: slots are unique among concurrently running tasks of a pool and the
// lowest free slot is always reused, so a pool of size n uses slots 1..n
// (inline nested tasks may use slots above n, as they run in addition to the
// n workers).
package pool
