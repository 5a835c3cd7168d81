package pool

import (
	"context"
	"time"
)

// Option configures a Pool.
type Option func(*config)

type config struct {
	queue      int
	onStart    func(context.Context, TaskInfo)
	onFinish   func(context.Context, TaskInfo)
	onStats    func(context.Context, Stats)
	statsEvery time.Duration
}

// OnStart sets a hook called on the worker goroutine just before each task
// starts, with the task's context. It is never called while the pool holds a
// lock and may call Go (with ctx, to run inline when the pool is full),
// TryGo, Resize and Stats; it must not call Wait or Close. A panic in the
// hook is recovered and becomes the task's error; the task does not run.
func OnStart(fn func(ctx context.Context, t TaskInfo)) Option {
	return func(c *config) { c.onStart = fn }
}

// OnFinish sets a hook called on the worker goroutine after each task
// returned and before its result is published (so Wait and Map observe the
// hook's effects), with the task's context. The same rules as for [OnStart]
// apply. A panic in the hook is recovered and joined to the task's error.
func OnFinish(fn func(ctx context.Context, t TaskInfo)) Option {
	return func(c *config) { c.onFinish = fn }
}

// OnStats sets a hook called with a snapshot of the pool's statistics at most
// once per interval, by the worker that finishes a task after the interval
// elapsed (so an idle pool makes no calls and needs no extra goroutine);
// every <= 0 means after every task. The first task to finish always calls
// it. The same rules as for [OnStart] apply; a panic in the hook is
// recovered and counted in Stats.Panics.
func OnStats(every time.Duration, fn func(ctx context.Context, s Stats)) Option {
	return func(c *config) { c.onStats, c.statsEvery = fn, every }
}

// Queue sets the length of the pool's queue to n (default [QueueSlack];
// values below 0 mean 0): how many submitted tasks the pool holds beyond
// the ones its workers run before Go blocks. A pool never holds more than
// its size plus n unfinished tasks (inline nested tasks aside), and Map
// and MapOrdered pull up to size+n+1 items ahead (see [PullSlack]). New
// allocates the queue's n slots at once.
//
// Queue(0) is a strict hand-off, errgroup's semantics with SetLimit: Go,
// Group.Go and Map's hand-over return only once a worker has taken the
// task, so no task is accepted before a worker is free for it. A busy
// pool then pays a goroutine wake-up per task, which a queue saves (see
// QueueSlack).
func Queue(n int) Option {
	return func(c *config) { c.queue = max(n, 0) }
}
