package pool

import (
	"context"
	"sync"
)

// Group is a scope of tasks on a shared pool, with the shape of
// golang.org/x/sync/errgroup.WithContext: a service keeps one process-wide
// pool, sized by the container's limits, and each request submits its
// tasks through its own Group, waits only for them and gets only their
// errors. Create groups with [Pool.Group]; the zero value is not usable. A
// Group's methods are safe for concurrent use.
type Group struct {
	p       *Pool
	ctx     context.Context
	cancel  context.CancelCauseFunc
	pending zeroWaiter

	mu  sync.Mutex
	err error
}

// Group returns a new Group of tasks on p and the context its tasks run
// with, derived from ctx. That context is canceled, with the error as its
// cause (see [context.Cause]), when a task of the group fails (the error
// is recorded first, so Wait returns it and not a sibling's
// context.Canceled), and when Wait returns.
//
// Called with a task's context of p (or one derived from it), the group's
// submissions run inline when no worker is idle, like [Pool.Go]'s.
func (p *Pool) Group(ctx context.Context) (*Group, context.Context) {
	gctx, cancel := context.WithCancelCause(ctx)
	return &Group{p: p, ctx: gctx, cancel: cancel}, gctx
}

// Go submits task to the group's pool, blocking like [Pool.Go] until the
// pool accepts it (a worker, or room in the pool's queue); the task
// receives a context derived from the group's context that identifies the
// pool (see [Slot]). If the task cannot be submitted, because the group's
// context is done (a task failed, Wait returned, or ctx was canceled)
// before the pool had room, or the pool is closed, or task is nil, Go does
// not run it and records the reason (context.Cause of the group's context,
// [ErrClosed], [ErrNilTask]) as the group's error, unless one is already
// recorded. A task the pool has accepted always runs, as with errgroup,
// even if the group's context is done by the time a worker takes it from
// the queue: a task that must not start late checks its context.
//
// A task of the group that calls Go on the group makes an ordinary
// submission, not a nested one: the group's context is the task
// context's parent, not derived from it. When every worker runs such a
// task and the queue is full, they wait for each other forever (as with
// errgroup's SetLimit). To fan out from a task, create a Group from the
// task's context and wait for it in the task: its submissions run inline
// when no worker is idle.
func (g *Group) Go(task func(context.Context) error) {
	if task == nil {
		g.record(ErrNilTask)
		return
	}
	if err := g.p.submit(g.ctx, job{fn: task, grp: g, ctx: g.ctx}, &g.pending); err != nil {
		if g.ctx.Err() != nil {
			err = context.Cause(g.ctx)
		}
		g.record(err)
	}
}

// TryGo submits task if a worker of the pool is idle, with the rule of
// [Pool.TryGo], and reports whether it did. It returns false, recording
// nothing, when every worker is busy, when the group's context is done, when
// the pool is closed and for a nil task. It never blocks and never runs the
// task inline.
func (g *Group) TryGo(task func(context.Context) error) bool {
	p := g.p
	if task == nil || p.closed.Load() || g.ctx.Err() != nil {
		return false
	}
	g.pending.add(1)
	// nested as in submit: a task that waits for the group must not lose
	// the worker it handed this to to a shrink (see retire).
	if p.offer(job{fn: task, grp: g, ctx: g.ctx, enq: p.tryGoEnq(), nested: p.isTaskOf(g.ctx)}, false) {
		return true
	}
	g.pending.add(-1)
	return false
}

// Wait blocks until every task submitted to the group has finished (tasks
// submitted concurrently with Wait may or may not be waited for), cancels
// the group's context and returns the group's first error: the first
// non-nil error a task returned (a panic as a [*PanicError]), or the
// reason a Go call could not submit its task. A group is meant to be
// waited for once: after Wait its context is done, so further Go calls
// only record that. Calling Wait from a task of the group deadlocks.
func (g *Group) Wait() error {
	g.pending.wait(nil)
	g.mu.Lock()
	err := g.err
	g.mu.Unlock()
	g.cancel(err)
	return err
}

// record sets the group's first error, then cancels the group's context,
// in that order, so that nobody can observe the cancellation without the
// error that caused it.
func (g *Group) record(err error) {
	g.mu.Lock()
	first := g.err == nil
	if first {
		g.err = err
	}
	g.mu.Unlock()
	if first {
		g.cancel(err)
	}
}
