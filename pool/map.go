package pool

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// PullSlack is the number of input items Map and MapOrdered may hold beyond
// the pool size on a pool with the default queue: by default at most
// size+PullSlack items are pulled from the input and not yet delivered to
// the consumer. On a pool whose queue is set with [Queue], the slack is the
// queue's length plus 1 (1 with Queue(0)). The extra items are the ones
// that may wait in the pool's queue (see [QueueSlack]) while every worker is
// busy, plus the one pulled and waiting for room there. (With room for
// queued items, a worker that finishes an item takes the next one without a
// goroutine wake-up; measured on trivial items, that made Map about 25%
// faster than a slack of one.)
//
// The last one is pulled ahead so that a worker taking a task from the full
// queue moves it in at once, without waiting for the consumer to be
// scheduled. Map (not MapOrdered) leaves it out while the pool's recent
// tasks ran under a microsecond (sampled): the consumer, not the workers,
// then sets the pace, and waiting for a result costs it less than retrying
// the hand-over (7% to 12% less CPU per trivial item; bench/pool/results,
// wave 9).
const PullSlack = QueueSlack + 1

// ErrNotStarted is wrapped by the error of a Map result whose item was
// pulled from the input but never started: the Map's context was done (ctx
// canceled, [FailFast], a Close deadline) before a worker started it, or,
// with FailFast, an earlier item had failed. The error also wraps that
// cause. An item never starts once this holds, even if it was already
// handed to a worker.
var ErrNotStarted = errors.New("pool: item not started")

// ErrFailFast is the cause (see [context.Cause]) with which [FailFast]
// cancels the context of a Map's tasks; the error wraps the first failure.
var ErrFailFast = errors.New("pool: fail-fast")

// Map calls fn on every item of in, using p's workers, and returns the
// results in completion order. The input is pulled lazily, on the
// consumer's goroutine, only while fewer than Pool.Size()+PullSlack items are
// outstanding (pulled and not yet delivered; one fewer while the pool's tasks
// are very short, see [PullSlack]) and after the previous item was
// handed to a worker; Resize changes the bound immediately. The consumer
// receives finished results while Map waits for a free worker.
//
// Every item pulled yields exactly one Result, unless the consumer stops
// early. The tasks run with a context derived from ctx; when ctx is done,
// Map stops pulling, cancels the running tasks' contexts, yields the
// remaining results and returns. When the consumer breaks out of its loop,
// Map stops pulling, cancels the running tasks and waits for them before
// the loop ends, so no goroutine outlives it. A panic in the input iterator
// or in the loop body propagates to the caller, as itself, after the same
// cleanup. An item whose Map's context is done before a worker starts it
// does not start and yields ErrNotStarted. [StopErr] reports why a Map
// ended.
//
// A pull runs on the consumer's goroutine, so an input that blocks in a
// pull holds up the delivery of finished results and Map's return, whatever
// ctx does, until it yields (the item it yields after ctx is done never
// starts) or returns; the running tasks' contexts are canceled meanwhile.
// An input that can block (on a channel, the network) should watch ctx
// itself.
//
// Called from a task of p with the task's context, Map runs an item inline
// on the calling goroutine whenever no worker is idle, so mapping over the
// own pool cannot deadlock. If p, in or fn is nil, the sequence yields a single
// Result with Index -1 and Err ErrNilTask and pulls nothing.
func Map[T, R any](ctx context.Context, p *Pool, in iter.Seq[T], fn func(context.Context, T) (R, error), opts ...MapOption) iter.Seq[Result[T, R]] {
	return mapSeq(ctx, p, in, fn, false, opts)
}

// MapOrdered is like [Map] but yields the results in input order. Finished
// results wait in a reorder window whose size is the pull bound
// (Pool.Size()+PullSlack, or [Window]): when the head item is slow, the
// other workers finish at most that many items after it, then Map stops
// pulling and waits for the head, so memory stays bounded.
func MapOrdered[T, R any](ctx context.Context, p *Pool, in iter.Seq[T], fn func(context.Context, T) (R, error), opts ...MapOption) iter.Seq[Result[T, R]] {
	return mapSeq(ctx, p, in, fn, true, opts)
}

// Collect maps fn over in with MapOrdered and [FailFast] (whatever opts
// say; a [StopErr] in opts is not filled in) and returns the values in
// input order, in one call: the errgroup
// shape for a Map. On success the slice has one value per input item and
// the error is nil. Otherwise the error is the first failure in input order
// (fn's error, a [*PanicError], or an error wrapping [ErrNotStarted] or
// [ErrClosed]), or, if no item failed but the Map stopped early, the
// [StopErr] reason; the slice then holds the values of the items before
// the first failure. If p, in or fn is nil, Collect returns nil,
// [ErrNilTask].
func Collect[T, R any](ctx context.Context, p *Pool, in iter.Seq[T], fn func(context.Context, T) (R, error), opts ...MapOption) ([]R, error) {
	var stop, first error
	var out []R
	opts = append(opts[:len(opts):len(opts)], FailFast(), StopErr(&stop))
	for r := range MapOrdered(ctx, p, in, fn, opts...) {
		if first != nil {
			continue
		}
		if r.Err != nil {
			first = r.Err
			continue
		}
		out = append(out, r.Value)
	}
	if first != nil {
		return out, first
	}
	return out, stop
}

func mapSeq[T, R any](ctx context.Context, p *Pool, in iter.Seq[T], fn func(context.Context, T) (R, error), ordered bool, opts []MapOption) iter.Seq[Result[T, R]] {
	var cfg mapConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return func(yield func(Result[T, R]) bool) {
		if p == nil || fn == nil || in == nil {
			if cfg.stopErr != nil {
				*cfg.stopErr = ErrNilTask
			}
			yield(Result[T, R]{Index: -1, Err: ErrNilTask})
			return
		}
		mctx, cancel := context.WithCancelCause(ctx)
		m := &mapState[T, R]{fn: fn, ctx: mctx, cancel: cancel, failFast: cfg.failFast, ordered: ordered, signal: make(chan struct{}, 1)}
		m.failIdx.Store(math.MaxInt64)
		c := &consumer[T, R]{p: p, m: m, cfg: cfg, ordered: ordered, yield: yield, nested: p.isTaskOf(mctx)}
		// The consumer only ever blocks on m.signal: cancellation, Close,
		// Resize and finished results all send it.
		stop := context.AfterFunc(mctx, m.wake)
		p.registerMap(m)
		defer func() {
			// Also runs when the input or the loop body panics.
			stop()
			cancel(errConsumerStopped)
			c.stopped = true
			for {
				c.poll()
				if c.running == 0 {
					break
				}
				m.sleep()
			}
			p.unregisterMap(m)
		}()
		c.loop(in)
		if cfg.stopErr != nil {
			*cfg.stopErr = c.why()
		}
	}
}

const sleepYields = 2

var errConsumerStopped = errors.New("pool: map consumer stopped")

// mapState is shared between a Map's consumer and the workers.
type mapState[T, R any] struct {
	fn       func(context.Context, T) (R, error)
	ctx      context.Context
	cancel   context.CancelCauseFunc
	failFast bool
	ordered  bool
	// failIdx is the lowest index of an item that failed with FailFast
	// set (MaxInt64: none); failErr is the error to cancel with, wrapping
	// that item's error. Both are written under mu.
	failIdx atomic.Int64
	failErr atomic.Pointer[error]
	// failPub is failErr once the item that set it is in done: the
	// consumer stops on it, and must then find that failure to deliver
	// before any ErrNotStarted. Written under mu.
	failPub atomic.Pointer[error]

	// mu orders FailFast's failure records; finished items are published
	// without it.
	mu sync.Mutex
	// done is the stack of finished items not yet taken by the consumer,
	// linked through item.next: workers push, the consumer takes them all
	// at once, without a lock on either side: with a mutex-guarded slice
	// here, trivial items cost about 6% more in Map.
	done   atomic.Pointer[item[T, R]]
	signal chan struct{} // capacity 1: "done may not be empty"
	// sleeping is set while the consumer blocks on signal; finish wakes
	// it only then. The consumer sets it before re-reading done and
	// finish reads it after pushing, so one of them sees the other.
	sleeping atomic.Bool
}

// sleep blocks the consumer until a wake-up, unless a result is already
// waiting.
func (m *mapState[T, R]) sleep() {
	for range sleepYields {
		if m.hasDone() {
			return
		}
		runtime.Gosched()
	}
	m.sleeping.Store(true)
	if !m.hasDone() {
		<-m.signal
	}
	m.sleeping.Store(false)
}

// push publishes a finished item to the consumer.
func (m *mapState[T, R]) push(it *item[T, R]) {
	for {
		h := m.done.Load()
		it.next = h
		if m.done.CompareAndSwap(h, it) {
			return
		}
	}
}

// hasDone reports whether a finished item waits for the consumer.
func (m *mapState[T, R]) hasDone() bool { return m.done.Load() != nil }

// item is one pulled input item; it is recycled by the consumer after
// delivery, so a Map allocates items only up to its window.
type item[T, R any] struct {
	m    *mapState[T, R]
	next *item[T, R] // in mapState.done
	res  Result[T, R]
}

func (it *item[T, R]) run(ctx context.Context) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	it.res.Value, err = it.m.fn(ctx, it.res.Input)
	return err
}

// finish publishes the result. It never blocks (with FailFast, a failure
// and an item that did not start take mu for a moment).
//
// With FailFast, a failure is published (and recorded as the Map's
// failure) before anything is canceled, so the consumer receives it before
// any result that the cancellation causes. Map cancels at once; MapOrdered
// leaves that to the consumer, when it reaches the failed item in input
// order (see consumer.deliver): the items before it run undisturbed, as the
// consumer must wait for them anyway.
func (it *item[T, R]) finish(err error, started bool) {
	m := it.m
	idx := it.res.Index // it belongs to the consumer once published
	it.res.Err = err
	failed := err != nil && started && m.failFast
	var cause *error
	if failed {
		// Recorded before the item is published, for notStarted and
		// MapOrdered's delivery; published to the consumer (failPub)
		// after it, under the lock, so that failPub's item is in done.
		m.mu.Lock()
		if int64(idx) < m.failIdx.Load() {
			cause = new(fmt.Errorf("%w: item %d: %w", ErrFailFast, idx, err))
			m.failErr.Store(cause)
			m.failIdx.Store(int64(idx))
		}
		m.push(it)
		m.failPub.Store(m.failErr.Load())
		m.mu.Unlock()
	} else if !started && m.failFast {
		// An item refused because failIdx named an earlier failure is
		// published after that failure: the failing worker holds mu from
		// recording failIdx until its own item is pushed. (Without the
		// lock, TestFailFastRealErrorFirst saw such an ErrNotStarted
		// first in 4 of 400 runs.)
		m.mu.Lock()
		m.push(it)
		m.mu.Unlock()
	} else {
		m.push(it)
	}
	// A consumer that is running finds the result by polling; waking it
	// would cost it a full select per item.
	if m.sleeping.Load() {
		m.wake()
	}
	if cause != nil && !m.ordered {
		m.cancel(*cause)
	}
}

// notStarted returns why the item must not start (nil if it may): the
// Map's context is done, or, with FailFast, an item before it failed.
func (it *item[T, R]) notStarted() error {
	m := it.m
	if m.ctx.Err() != nil {
		return fmt.Errorf("%w: %w", ErrNotStarted, context.Cause(m.ctx))
	}
	if int64(it.res.Index) > m.failIdx.Load() {
		return fmt.Errorf("%w: %w", ErrNotStarted, *m.failErr.Load())
	}
	return nil
}

// failure is the FailFast failure recorded so far (see failIdx), or nil.
// It is recorded before its item is published, so a consumer that has
// received that item finds it here even before failPub is stored.
func (m *mapState[T, R]) failure() error {
	if m.failIdx.Load() == math.MaxInt64 {
		return nil
	}
	return *m.failErr.Load()
}

// stopCause is why the Map must not start more items, or nil.
func (m *mapState[T, R]) stopCause() error {
	if m.ctx.Err() != nil {
		return context.Cause(m.ctx)
	}
	if e := m.failPub.Load(); e != nil {
		return *e
	}
	return nil
}

// wake wakes the consumer; one pending wake-up is enough, as the
// consumer re-checks everything when it wakes.
func (m *mapState[T, R]) wake() {
	select {
	case m.signal <- struct{}{}:
	default:
	}
}

func (m *mapState[T, R]) abort(cause error) { m.cancel(cause) }
