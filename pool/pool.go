package pool

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Clock reads cost 25-125 ns here, more than a trivial task: timing is
// sampled. A task is timed when hooks are set (they get the durations),
// when its submission was sampled and blocked, when tasks have recently run
// longer than longTask (then a clock read is noise), and otherwise one in
// sampleEvery per worker. Submissions are sampled for the queue wait at the
// same rate. (One in 16 cost trivial tasks about 4% of their throughput
// against one in 64: bench/pool/results/README.md.) Timed tasks shorter
// than shortTask make Map pull one item fewer (see PullSlack).
const (
	sampleEvery = 64
	longTask    = 50 * time.Microsecond
	shortTask   = time.Microsecond
)

// sampleSubmission reports whether a submission's queue wait is measured.
func (p *Pool) sampleSubmission() bool {
	return p.timeAll || p.long.Load() || rand.Uint32()%sampleEvery == 0
}

// Pool is a bounded set of worker goroutines. The zero value is not usable;
// create pools with [New]. All methods are safe for concurrent use.
type Pool struct {
	cfg   config
	epoch time.Time

	// tasks carries jobs to the workers. Its buffer is the pool's queue:
	// at most cfg.queue jobs wait in it (tasks waiting for a busy worker,
	// and tasks handed to an idle worker that has not taken them yet).
	tasks   chan job
	closing chan struct{} // closed by Close
	closed  atomic.Bool
	parked  atomic.Int64 // workers that announced a park on tasks
	// nestedHandoffs counts the nested submissions handed to a worker
	// and not yet started (see retire).
	nestedHandoffs atomic.Int64
	exited         chan struct{} // closed when every worker has exited after Close
	exitOne        sync.Once

	mu   sync.Mutex             // guards spawning, closing, maps
	maps map[mapHandle]struct{} // running Maps, to wake on Resize and Close

	want atomic.Int64 // target size
	// live counts the worker goroutines started and not yet decided to
	// exit. Workers start on demand (see spawn), so live stays below want
	// on a pool that never ran want tasks at once.
	live atomic.Int64

	slots slotSet

	workers   zeroWaiter // worker goroutines alive
	goPending zeroWaiter // Go/TryGo tasks accepted and not finished
	waiting   zeroWaiter // submitters blocked waiting for a worker

	errMu    sync.Mutex
	firstErr error

	notStarted atomic.Int64
	lastStats  atomic.Int64
	st         stats

	timeAll bool        // hooks are set: time every task
	long    atomic.Bool // recently timed tasks ran longer than longTask
	short   atomic.Bool // recently timed tasks ran shorter than shortTask
}

// New returns a pool of size workers. If size <= 0, the size is
// [DefaultSize]'s: the RATION_JOBS environment variable when it is set
// (ration's -j syntax: N, N%, +N, -N, counted from GOMAXPROCS), else 2 x
// GOMAXPROCS, capped at 8. DefaultSize also returns the reason for that
// size, and an invalid RATION_JOBS as an error: New itself ignores an
// invalid value, takes the default and logs a warning through log/slog's
// default logger. To size the pool from the container's cgroup limits
// (package limits' policy), pass the count of limits.Jobs.
//
// Worker goroutines start on demand, when a task finds no idle one, and
// then stay until Close (or a shrink), so an idle pool costs the same
// whatever its size. A pool must be closed with [Pool.Close] to stop its
// workers.
func New(size int, opts ...Option) *Pool {
	if size <= 0 {
		n, _, err := DefaultSize()
		if err != nil {
			slog.Warn("pool: invalid RATION_JOBS ignored", "err", err, "size", n)
		}
		size = n
	}
	p := &Pool{
		cfg:     config{queue: QueueSlack},
		epoch:   time.Now(),
		closing: make(chan struct{}),
		exited:  make(chan struct{}),
		maps:    make(map[mapHandle]struct{}),
	}
	for _, o := range opts {
		if o != nil {
			o(&p.cfg)
		}
	}
	p.tasks = make(chan job, p.cfg.queue)
	p.timeAll = p.cfg.onStart != nil || p.cfg.onFinish != nil || p.cfg.onStats != nil
	p.lastStats.Store(0)
	p.Resize(size)
	return p
}

func (p *Pool) now() int64 { return int64(time.Since(p.epoch)) }

// Size returns the pool's target size, as last set by New or Resize.
func (p *Pool) Size() int { return int(p.want.Load()) }

// Resize sets the pool's size to n (values below 1 mean 1). Growing lets
// up to n tasks run at once now: blocked submitters get new workers at once,
// and later tasks start more on demand. Shrinking retires workers after
// their current task: a running task is never interrupted, and no
// submitted item is lost: queued tasks, blocked submitters and Map
// dispatchers simply wait for one of the remaining workers. Map picks up
// the new size for its pull bound immediately. Resize after Close does
// nothing.
func (p *Pool) Resize(n int) {
	n = max(n, 1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Load() {
		return
	}
	old := p.want.Swap(int64(n))
	if int64(n) > old {
		// Submitters already blocked, and queued tasks, wait on the
		// channel, not in offer: start a worker for each (up to the new
		// size). One that has not
		// counted itself as waiting yet offers again after it did, and
		// then sees the new size (it is stored before waiting is read).
		for range min(p.waiting.n.Load()+int64(len(p.tasks)), int64(n)-p.live.Load()) {
			p.startLocked(job{})
		}
	}
	if old != int64(n) {
		// Wake idle workers (so surplus ones retire) and Map consumers (so
		// they re-read the bound). The size is stored before, so a woken
		// goroutine sees it.
		if int64(n) < old {
			p.kick()
		}
		for h := range p.maps {
			h.wake()
		}
	}
}

// belowSize reports whether fewer workers have started than the pool's
// size (then offer may start one).
func (p *Pool) belowSize() bool { return p.live.Load() < p.want.Load() }

// spawn starts a worker goroutine that runs j first, if the pool is open
// and below its size, and reports whether it did. A zero j starts an idle
// worker.
func (p *Pool) spawn(j job) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Load() {
		return false
	}
	return p.startLocked(j)
}

// startLocked is spawn with p.mu held and the pool open.
func (p *Pool) startLocked(j job) bool {
	for {
		l := p.live.Load()
		if l >= p.want.Load() {
			return false
		}
		if p.live.CompareAndSwap(l, l+1) {
			p.workers.add(1)
			go p.worker(j)
			return true
		}
	}
}

// QueueSlack is the default length of the pool's queue (see [Queue]): the
// number of submitted tasks the pool holds beyond its running ones. When
// every worker is busy, Go (and Map's hand-over) puts up to QueueSlack
// tasks in the pool's queue and returns at once; a submitter blocks only
// when the queue is full too. A worker that finishes a task takes the next
// one from the queue without parking, so a busy pool pays no goroutine
// wake-up per task. At no time does a pool hold more than its
// size plus its queue's length in tasks that have not finished (inline
// nested tasks aside); Stats.Queued counts the queued ones.
const QueueSlack = 4

// Go submits task and blocks until the pool accepts it: a worker takes it,
// or it is put in the pool's bounded queue (see [QueueSlack]) while every
// worker is busy; with [Queue](0), only a worker taking it. It returns nil
// once the task has been accepted (it is then counted in Stats.Busy or
// Stats.Queued); the task's own error is
// reported by Wait. The task receives a context derived from ctx that
// identifies the pool (see [Slot]).
//
// Go returns ctx.Err() without running the task if ctx is done before the
// pool accepts it, [ErrClosed] if the pool is or gets closed first, and
// [ErrNilTask] for a nil task. (When ctx is done at the moment the pool
// has room, either may happen; an accepted task then runs with the done
// context.) Tasks accepted before Close run before Close returns. A nil
// ctx panics.
//
// If ctx is a task context of this pool (Go called from a task or a hook,
// passing on its context) and no worker is idle, the task runs inline on the
// calling goroutine and Go returns after it finished, so that nested
// submission cannot deadlock.
func (p *Pool) Go(ctx context.Context, task func(context.Context) error) error {
	mustContext(ctx, "Go")
	if task == nil {
		return ErrNilTask
	}
	return p.submit(ctx, job{fn: task, ctx: ctx}, &p.goPending)
}

// submit is Go for a task whose outcome is counted by pending (the pool's
// or a Group's).
func (p *Pool) submit(ctx context.Context, j job, pending *zeroWaiter) error {
	if p.closed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	pending.add(1)
	// A nested submission runs inline rather than wait in the queue.
	j.nested = p.isTaskOf(ctx)
	if p.sampleSubmission() {
		// The wait is measured from here, as the task may be queued.
		j.enq = enqNoWait
		if !j.nested {
			j.enq = p.now()
		}
	}
	if p.offer(j, !j.nested) {
		return nil
	}
	if j.nested {
		p.runNested(j)
		return nil
	}
	if p.retryQueue(j) {
		return nil
	}
	p.waiting.add(1)
	defer p.waiting.add(-1)
	// A Resize that grew the pool since the offer above either sees this
	// submitter waiting or is seen here.
	if p.belowSize() && p.offer(j, false) {
		return nil
	}
	// Counted busy before the send, so that offer never sees a worker
	// idle that is not.
	p.st.busy.add(1)
	// Counted waiting before the closed flag is read: Close, which sets
	// the flag before it waits for the waiting submitters, either waits
	// for this one (which may still send, and then runs what is left in
	// the queue, see sent) or is seen here. The select alone could pick
	// the send after Close returned.
	if p.closed.Load() {
		p.st.busy.add(-1)
		p.notStarted.Add(1)
		pending.add(-1)
		return ErrClosed
	}
	select {
	case p.tasks <- j:
		p.sent(true)
		return nil
	case <-ctx.Done():
		p.st.busy.add(-1)
		pending.add(-1)
		return ctx.Err()
	case <-p.closing:
		p.st.busy.add(-1)
		p.notStarted.Add(1) // before the counters Close waits for
		pending.add(-1)
		return ErrClosed
	}
}

// tryQueue puts j in the queue if it has room and reports whether it did.
func (p *Pool) tryQueue(j job) bool {
	// Counted busy before the closed flag is read: Close, which sets the
	// flag before it waits for busy to drop to zero, either waits for j
	// or makes this fail.
	p.st.busy.add(1)
	if p.closed.Load() {
		p.st.busy.add(-1)
		return false
	}
	if p.enqueue(j) {
		return true
	}
	p.st.busy.add(-1)
	return false
}

// enqueue puts j, already counted busy, in the queue if it has room and
// reports whether it did.
func (p *Pool) enqueue(j job) bool {
	select {
	case p.tasks <- j:
		p.sent(true)
		return true
	default:
		return false
	}
}

// submitYields is how often a submitter that found the queue full yields
// the processor and tries again before it blocks, when tasks have recently
// been short: a yield lets a worker on the same processor finish its task
// and take a queued one, which costs less than the submitter parking and
// being woken.
const submitYields = 2

// retryQueue is tryQueue after up to submitYields yields.
func (p *Pool) retryQueue(j job) bool {
	if p.long.Load() {
		return false
	}
	for range submitYields {
		runtime.Gosched()
		if p.tryQueue(j) {
			return true
		}
	}
	return false
}

// sent is called by a submitter that has put a job in the channel, queued
// (every worker was busy) or for an idle worker.
//
// For a queued job, if the pool is below its size, it starts an idle
// worker: concurrent offers count each other's tasks for a moment, so a
// task may be queued while workers are still to be started, and some
// worker must come for it. If the pool has been closed meanwhile, its
// workers may have drained the queue and left: the submitter then has
// what is left in the queue run (see rescue), so that no accepted task is
// stranded. (Close waits until no task is counted busy, so it waits for
// these tasks too.)
func (p *Pool) sent(queued bool) {
	if queued && p.belowSize() {
		p.spawn(job{})
	}
	if p.closed.Load() {
		p.rescue()
	}
}

// drainQueue takes every job left in the queue, without blocking, and
// runs the tasks with run. It re-sends the kicks it took (see kick) to the
// workers that are still parked, deferred: a task that calls
// runtime.Goexit ends the draining goroutine, and a kick lost with it
// would leave a parked worker asleep through Close.
func (p *Pool) drainQueue(run func(job)) {
	kicked := false
	defer func() {
		if kicked {
			p.kick()
		}
	}()
	for {
		select {
		case j := <-p.tasks:
			if j.isKick() {
				kicked = true
				continue
			}
			run(j)
			continue
		default:
		}
		break
	}
}

// TryGo submits task if a worker is idle and reports whether it did: it
// returns true whenever fewer tasks run on the pool's workers than its
// size (a worker that has just been started, or is finishing the
// bookkeeping of its previous task, counts as idle), false when every
// worker is busy (TryGo never puts a task in the queue), for a closed pool
// and for a nil task. It never waits for a task to finish and never runs
// the task inline. The task receives a context derived from
// [context.Background] that identifies the pool.
func (p *Pool) TryGo(task func(context.Context) error) bool {
	if task == nil || p.closed.Load() {
		return false
	}
	p.goPending.add(1)
	if p.offer(job{fn: task, ctx: context.Background(), enq: p.tryGoEnq()}, false) {
		return true
	}
	p.goPending.add(-1)
	return false
}

// offer hands j to an idle worker without blocking and reports whether it
// did; the task is then counted in Stats.Busy. A worker is idle when fewer
// tasks are accepted for the workers than there are workers (it may not be
// waiting on the channel yet: just started, or finishing the bookkeeping of
// its previous task); j then goes into the channel, for that worker to
// take. When every worker is busy and the pool is below its size, offer
// starts a new worker with j. This waits for the pool's own bookkeeping
// only (a full queue buffer with an idle worker about to drain it), never
// for a task.
//
// With queue set, offer also puts j in the queue if every worker is busy
// and the queue has room (tryQueue in one step).
func (p *Pool) offer(j job, queue bool) (ok bool) {
	if j.nested {
		// Counted before the size is read: a worker that retires after a
		// shrink either sees this count or is not seen idle here (see
		// retire).
		p.nestedHandoffs.Add(1)
		defer func() {
			if !ok {
				p.nestedHandoffs.Add(-1)
			}
		}()
	}
	p.st.busy.add(1) // before the hand-over, so Busy never lags Go's return
	for {
		// live before busy: a worker is started only for a task already
		// counted busy (or idle), so every worker in live has its task in
		// the busy read that follows. Read the other way round, a worker
		// just started for a concurrent submitter's task looked idle, and
		// j waited in the queue below the pool's size.
		live := p.live.Load()
		onWorkers := p.st.busy.n.Load() - 1 // minus j
		if onWorkers >= p.want.Load() || p.closed.Load() {
			if queue && !p.closed.Load() && p.enqueue(j) {
				return true
			}
			p.st.busy.add(-1)
			return false
		}
		if onWorkers >= live {
			if p.spawn(j) {
				return true
			}
		} else {
			select {
			case p.tasks <- j:
				p.sent(false)
				return true
			default:
			}
		}
		runtime.Gosched()
	}
}

// tryGoEnq is the enq of a TryGo submission, which never blocks.
func (p *Pool) tryGoEnq() int64 {
	if p.sampleSubmission() {
		return enqNoWait
	}
	return 0
}

// Wait blocks until every task submitted with Go or TryGo has finished
// (tasks submitted concurrently with Wait may or may not be waited for) and
// returns the first non-nil error returned by such a task since the previous
// call to Wait returned. Map items and the tasks of a [Group] are not
// included: Map's iterator and Group.Wait wait for their own. Calling Wait
// from a task deadlocks.
func (p *Pool) Wait() error {
	p.goPending.wait(nil)
	p.errMu.Lock()
	err := p.firstErr
	p.firstErr = nil
	p.errMu.Unlock()
	return err
}

// Close stops intake and waits, until ctx is done, for the tasks already
// accepted (running or queued) to finish and for the workers to exit.
// Submitters blocked in Go on a full queue get [ErrClosed]; Map stops
// pulling input and reports the item it had pulled but could not hand over
// with ErrClosed. notStarted is the number of submissions (Go calls and Map
// items) that were blocked when Close was called and were rejected. (A Map consumer that is running its
// loop body at that moment is not waiting; its pending item still gets
// ErrClosed in its Result but may be counted only by a later Close.)
//
// If ctx is done first, Close cancels the contexts of the running Map items,
// returns ctx.Err() and leaves the remaining tasks to finish in the
// background (Go tasks run with their submitter's context: cancel it to stop
// them). Close may be called more than once; every call waits again. A nil
// ctx panics, and the pool stays open.
func (p *Pool) Close(ctx context.Context) (notStarted int, err error) {
	mustContext(ctx, "Close")
	p.mu.Lock()
	if !p.closed.Load() {
		p.closed.Store(true)
		close(p.closing)
		// Wake the idle workers and the Map consumers so that they see
		// closed.
		p.kick()
		for h := range p.maps {
			h.wake()
		}
		if p.workers.n.Load() == 0 {
			// No worker will start now, and none is left to close exited.
			p.exitOne.Do(func() { close(p.exited) })
		}
	}
	p.mu.Unlock()
	done := ctx.Done()
	err = p.waiting.wait(done)
	if err == nil {
		err = p.goPending.wait(done)
	}
	// Queued tasks (and a task that a submitter put in the queue as the
	// workers left, which it then runs itself) are counted busy.
	if err == nil {
		err = p.st.busy.wait(done)
	}
	// Nested inline tasks are counted apart (see runMode).
	if err == nil {
		err = p.st.inlineRunning.wait(done)
	}
	// Map items are done when the workers have exited.
	if err == nil {
		err = p.workers.wait(done)
	}
	if err != nil {
		err = ctx.Err()
		p.mu.Lock()
		maps := make([]mapHandle, 0, len(p.maps))
		for h := range p.maps {
			maps = append(maps, h)
		}
		p.mu.Unlock()
		for _, h := range maps {
			h.abort(fmt.Errorf("%w: close deadline: %w", ErrClosed, err))
		}
	}
	return int(p.notStarted.Load()), err
}

// isTaskOf reports whether ctx is (derived from) a task context of p.
func (p *Pool) isTaskOf(ctx context.Context) bool {
	tc, _ := ctx.Value(taskKey{}).(*taskCtx)
	return tc != nil && tc.pool == p
}
