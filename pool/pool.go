package pool

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ration-run/ration/limits"
)

// ErrClosed is returned by Go, and carried by Map results, when the pool was
// closed before the task could start.
var ErrClosed = errors.New("pool: closed")

// ErrGoexit is the error of a task that called [runtime.Goexit] (for
// example through testing.T.FailNow) instead of returning. The pool
// replaces the worker whose goroutine ended.
var ErrGoexit = errors.New("pool: task called runtime.Goexit")

// ErrNilTask is returned by Go when the task is nil.
var ErrNilTask = errors.New("pool: nil task")

// PanicError is the error a task (or hook) that panicked returns instead. The
// worker that ran it survives.
type PanicError struct {
	// Value is the value passed to panic.
	Value any
	// Stack is the goroutine stack at the panic, as by [runtime/debug.Stack].
	Stack []byte
}

// Error returns the panic value and the stack.
func (e *PanicError) Error() string {
	return fmt.Sprintf("pool: task panicked: %v\n\n%s", e.Value, e.Stack)
}

// Unwrap returns the panic value if it is an error, so that errors.Is and
// errors.As see through a panic(err).
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// TaskInfo describes one task to the hooks set by [OnStart] and [OnFinish].
type TaskInfo struct {
	// Slot is the task's slot, see [Slot].
	Slot int
	// Wait is how long the task's submitter was blocked waiting for a free
	// worker before the task started (0 when a worker was idle, as the pool
	// has no queue, and for inline tasks).
	Wait time.Duration
	// Run is the task's run time (0 for OnStart).
	Run time.Duration
	// Err is the task's error (nil for OnStart); a panic is a *PanicError.
	Err error
	// Inline reports whether the task ran inline on a submitting task's
	// goroutine because no worker was free (see the package documentation).
	Inline bool
}

// Option configures a Pool.
type Option func(*config)

type config struct {
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

// job is what travels from a submitter to a worker. It is passed by value
// through an unbuffered channel, so submitting allocates nothing.
type job struct {
	fn   func(context.Context) error // a Go/TryGo task, or nil
	grp  *Group                      // the Group of a task, or nil
	item mapItem                     // a Map item, or nil
	ctx  context.Context             // parent of the task's context
	// enq samples the queue wait: p.now() when a sampled submitter started
	// to block, enqNoWait if a sampled submitter did not block, 0 if the
	// submission is not sampled.
	enq int64
}

const enqNoWait = -1

// Clock reads cost 25-125 ns here, more than a trivial task: timing is
// sampled. A task is timed when hooks are set (they get the durations),
// when its submission was sampled and blocked, when tasks have recently run
// longer than longTask (then a clock read is noise), and otherwise one in
// sampleEvery per worker. Submissions are sampled for the queue wait at the
// same rate.
const (
	sampleEvery = 16
	longTask    = 50 * time.Microsecond
)

// sampleSubmission reports whether a submission's queue wait is measured.
func (p *Pool) sampleSubmission() bool {
	return p.timeAll || p.long.Load() || rand.Uint32()%sampleEvery == 0
}

// mapItem is one item of a running Map, run by a worker.
type mapItem interface {
	// run runs the item with the task context and returns its error.
	run(ctx context.Context) error
	// finish publishes the item's result (err includes hook panics)
	// without waking the consumer; started is false for an item that
	// never ran.
	finish(err error, started bool)
	// notStarted returns the error of an item that must not start (its
	// Map's context is done, or an earlier item failed fast), else nil.
	notStarted() error
	// signal wakes the consumer of the item's Map.
	signal()
	// owner identifies the item's Map.
	owner() any
}

// Pool is a bounded set of worker goroutines. The zero value is not usable;
// create pools with [New]. All methods are safe for concurrent use.
type Pool struct {
	cfg   config
	epoch time.Time

	tasks   chan job      // unbuffered: a send succeeds only into an idle worker
	closing chan struct{} // closed by Close
	closed  atomic.Bool
	parked  atomic.Int64  // workers that announced a park on tasks
	exited  chan struct{} // closed when every worker has exited after Close
	exitOne sync.Once

	mu   sync.Mutex             // guards spawning, closing, maps
	maps map[mapHandle]struct{} // running Maps, to wake on Resize and Close

	want atomic.Int64 // target size
	live atomic.Int64 // workers that have not decided to exit

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
}

// New returns a pool with size workers, started now. If size <= 0, the size
// is the default job count from the limits package (derived from the
// container's CPU quota). A pool must be closed with [Pool.Close] to stop its
// workers.
func New(size int, opts ...Option) *Pool {
	if size <= 0 {
		size = defaultSize()
	}
	p := &Pool{
		epoch:   time.Now(),
		tasks:   make(chan job),
		closing: make(chan struct{}),
		exited:  make(chan struct{}),
		maps:    make(map[mapHandle]struct{}),
	}
	for _, o := range opts {
		if o != nil {
			o(&p.cfg)
		}
	}
	p.timeAll = p.cfg.onStart != nil || p.cfg.onFinish != nil || p.cfg.onStats != nil
	p.lastStats.Store(0)
	p.Resize(size)
	return p
}

// defaultSize is the pool size used when New is given size <= 0: the job
// count limits.Decide chooses for this container (RATION_JOBS, else the CPU
// quota policy). If the limits cannot be read, GOMAXPROCS (which honours the
// quota when automaxprocs or Go 1.25+ container awareness applies) is used.
func defaultSize() int {
	if d, err := limits.Decide(limits.Options{}); err == nil && d.Jobs >= 1 {
		return d.Jobs
	}
	return max(1, runtime.GOMAXPROCS(0))
}

func (p *Pool) now() int64 { return int64(time.Since(p.epoch)) }

// Size returns the pool's target size, as last set by New or Resize.
func (p *Pool) Size() int { return int(p.want.Load()) }

// Resize sets the pool's size to n (values below 1 mean 1). Growing starts
// the new workers now. Shrinking retires workers after their current task:
// a running task is never interrupted, and as the pool queues nothing, no
// submitted item is lost; blocked submitters and Map dispatchers simply
// wait for one of the remaining workers. Map picks up the new size for its
// pull bound immediately. Resize after Close does nothing.
func (p *Pool) Resize(n int) {
	n = max(n, 1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Load() {
		return
	}
	old := p.want.Swap(int64(n))
	for {
		l := p.live.Load()
		if l >= int64(n) {
			break
		}
		if p.live.CompareAndSwap(l, l+1) {
			p.workers.add(1)
			go p.worker()
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

// surplus reports whether the pool has more workers than its size.
func (p *Pool) surplus() bool { return p.live.Load() > p.want.Load() }

// retire reports whether the calling worker must exit because the pool
// has more workers than its size, and if so, accounts for its exit.
func (p *Pool) retire() bool {
	for {
		l := p.live.Load()
		if l <= p.want.Load() {
			return false
		}
		if p.live.CompareAndSwap(l, l-1) {
			return true
		}
	}
}

func (p *Pool) worker() {
	defer func() {
		if p.workers.add(-1) == 0 && p.closed.Load() {
			// No worker starts after Close: this is the last one.
			p.exitOne.Do(func() { close(p.exited) })
		}
	}()
	// last is the clock reading at the end of the previous task if it was
	// timed, else 0. A task received without blocking starts then, which
	// saves a clock read.
	var last int64
	var n uint32 // tasks run, for sampling
	long := false
	// pend is the Map item this worker finished last and whose consumer has
	// not been woken yet. Waking a consumer costs it a full select; when the
	// next task is an item of the same Map, that consumer is running (it
	// just handed the item over) and will find the result by polling, so the
	// wake-up is skipped. Otherwise it is sent before this worker blocks,
	// exits or starts anything else, so a result never waits for a wake-up
	// behind an unrelated task.
	var pend mapItem
	do := func(j job, start int64) {
		n++
		timed := p.timeAll || long || j.enq > 0 || n%sampleEvery == 1
		if !timed {
			p.run(j, false, false, 0)
			last = 0
			return
		}
		if start == 0 {
			start = p.now()
		}
		last = p.run(j, false, true, start)
		if l := last-start >= int64(longTask); l != long {
			long = l
			p.long.Store(l)
		}
	}
	for {
		if p.retire() {
			if pend != nil {
				pend.signal()
			}
			return
		}
		if p.closed.Load() {
			if pend != nil {
				pend.signal()
			}
			// Once closed, Resize is a no-op: every worker leaves, and
			// Stats.Workers counts down to 0.
			p.live.Add(-1)
			return
		}
		select {
		case j := <-p.tasks:
			if j.isKick() {
				continue
			}
			if pend != nil && (j.item == nil || j.item.owner() != pend.owner()) {
				pend.signal()
			}
			do(j, last)
			pend = j.item
			continue
		default:
		}
		if pend != nil {
			pend.signal()
			pend = nil
		}
		// Park on a plain receive (a select here cost a fifth of a trivial
		// task). Resize and Close reach parked workers with kicks (see
		// kick); announcing the park before re-checking the size and the
		// closed flag, which they store before reading parked, means that
		// either this worker sees their change or they see it parked.
		p.parked.Add(1)
		if p.surplus() || p.closed.Load() {
			p.parked.Add(-1)
			continue
		}
		j := <-p.tasks
		p.parked.Add(-1)
		last = 0
		if j.isKick() {
			continue
		}
		do(j, 0)
		pend = j.item
	}
}

// isKick reports whether j is a kick (see Pool.kick) rather than a task.
func (j *job) isKick() bool { return j.fn == nil && j.item == nil }

// kick makes every parked worker re-check the pool's size and closed
// flag, which the caller has just changed: it sends one kick per worker
// that announced a park. The workers already blocked in their receive get
// theirs now, before kick returns (so a surplus worker cannot take a task
// after Resize returned); the rest (a worker may not have reached its
// receive yet) get theirs from a goroutine, which ends when they are taken
// or when every worker has exited after Close.
func (p *Pool) kick() {
	n := p.parked.Load()
	for n > 0 {
		select {
		case p.tasks <- job{}:
			n--
			continue
		default:
		}
		break
	}
	if n == 0 {
		return
	}
	go func() {
		for range n {
			select {
			case p.tasks <- job{}:
			case <-p.exited:
				return
			}
		}
	}()
}

// Go submits task and blocks until a worker accepts it (backpressure: the
// pool holds no queue). It returns nil once the task has been accepted (it
// is then counted in Stats.Busy); the task's own error is reported by
// Wait. A worker that is idle but not yet waiting for work (just started,
// or finishing its previous task's bookkeeping) accepts the task when it
// gets there. The task receives a context derived from ctx that identifies
// the pool (see [Slot]).
//
// Go returns ctx.Err() without running the task if ctx is done before a
// worker accepts it, [ErrClosed] if the pool is or gets closed first, and
// [ErrNilTask] for a nil task. (When ctx is done at the moment a worker
// becomes free, either may happen; an accepted task then runs with the done
// context.)
//
// If ctx is a task context of this pool (Go called from a task or a hook,
// passing on its context) and no worker is idle, the task runs inline on the
// calling goroutine and Go returns after it finished, so that nested
// submission cannot deadlock.
func (p *Pool) Go(ctx context.Context, task func(context.Context) error) error {
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
	sampled := p.sampleSubmission()
	if sampled {
		j.enq = enqNoWait
	}
	if p.offer(j) {
		return nil
	}
	if p.isTaskOf(ctx) {
		p.runInline(j)
		return nil
	}
	if p.retryOffer(j) {
		return nil
	}
	if sampled {
		j.enq = p.now()
	}
	p.waiting.add(1)
	defer p.waiting.add(-1)
	select {
	case p.tasks <- j:
		p.st.busy.Add(1)
		return nil
	case <-ctx.Done():
		pending.add(-1)
		return ctx.Err()
	case <-p.closing:
		p.notStarted.Add(1) // before the counters Close waits for
		pending.add(-1)
		return ErrClosed
	}
}

// TryGo submits task if a worker is idle and reports whether it did: it
// returns true whenever fewer tasks run on the pool's workers than its
// size (a worker that has just been started, or is finishing the
// bookkeeping of its previous task, counts as idle), false when every
// worker is busy, for a closed pool and for a nil task. It never waits for
// a task to finish and never runs the task inline. The task receives a
// context derived from [context.Background] that identifies the pool.
func (p *Pool) TryGo(task func(context.Context) error) bool {
	if task == nil || p.closed.Load() {
		return false
	}
	p.goPending.add(1)
	if p.offer(job{fn: task, ctx: context.Background(), enq: p.tryGoEnq()}) {
		return true
	}
	p.goPending.add(-1)
	return false
}

// offer hands j to an idle worker without blocking and reports whether it
// did; the task is then counted in Stats.Busy. A worker counts as idle
// from the moment its previous task is finished (or it started) and the
// pool is below its size, even before it waits on the channel: offer
// yields the processor until that worker takes j or some other submitter
// takes the worker. This waits for the pool's own bookkeeping only, never
// for a task.
func (p *Pool) offer(j job) bool {
	p.st.busy.Add(1) // before the hand-over, so Busy never lags Go's return
	for {
		select {
		case p.tasks <- j:
			return true
		default:
		}
		onWorkers := p.st.busy.Load() - 1 - p.st.inlineRunning.Load() // minus j
		if onWorkers >= min(p.live.Load(), p.want.Load()) || p.closed.Load() {
			p.st.busy.Add(-1)
			return false
		}
		runtime.Gosched()
	}
}

// submitYields is how often a submitter that found every worker busy
// yields the processor and offers again before it blocks, when tasks have
// recently been short: a yield lets a worker on the same processor finish
// its task, which costs less than the submitter parking and being woken.
// (More yields measured no better on 2 cores; spinning idle workers
// measured worse.)
const submitYields = 2

// retryOffer is offer after up to submitYields yields, for a submitter
// that would block otherwise.
func (p *Pool) retryOffer(j job) bool {
	if p.long.Load() {
		return false
	}
	for range submitYields {
		runtime.Gosched()
		if p.offer(j) {
			return true
		}
	}
	return false
}

// runInline runs j on the calling goroutine, as a nested submission.
func (p *Pool) runInline(j job) {
	// inlineRunning goes up first and down last, so that offer never
	// counts this task as one on a worker (which could make TryGo fail
	// while a worker is idle); in between, offer may see one task too few
	// on the workers and retry for a moment.
	p.st.inlineRunning.Add(1)
	defer p.st.inlineRunning.Add(-1)
	p.st.busy.Add(1)
	p.run(j, true, true, p.now())
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
// accepted to finish and for the workers to exit. Submitters blocked in Go
// get [ErrClosed]; Map stops pulling input and reports the item it had
// pulled but not started with ErrClosed. notStarted is the number of
// submissions (Go calls and Map items) that were waiting for a worker when
// Close was called and were rejected. (A Map consumer that is running its
// loop body at that moment is not waiting; its pending item still gets
// ErrClosed in its Result but may be counted only by a later Close.)
//
// If ctx is done first, Close cancels the contexts of the running Map items,
// returns ctx.Err() and leaves the remaining tasks to finish in the
// background (Go tasks run with their submitter's context: cancel it to stop
// them). Close may be called more than once; every call waits again.
func (p *Pool) Close(ctx context.Context) (notStarted int, err error) {
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
	}
	p.mu.Unlock()
	done := ctx.Done()
	err = p.waiting.wait(done)
	if err == nil {
		err = p.goPending.wait(done)
	}
	// Map items (and inline tasks, which run inside worker tasks) are done
	// when the workers have exited.
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

// run runs one job on the calling goroutine (a worker, or the submitter for
// an inline job). If timed, start is a clock reading at its start, and run
// returns the clock reading at its end (else 0).
func (p *Pool) run(j job, inline, timed bool, start int64) int64 {
	if j.item != nil {
		// An item may wait a little between its hand-over and its start;
		// one whose Map stopped meanwhile never starts.
		if err := j.item.notStarted(); err != nil {
			p.st.busy.Add(-1)
			j.item.finish(err, false)
			return 0
		}
	}
	slot, tctx := p.slots.acquire(p, j.ctx)
	wait := int64(-1) // not measured
	switch {
	case j.enq == enqNoWait:
		wait = 0
	case j.enq > 0 && timed:
		wait = max(start-j.enq, 0)
	}
	info := TaskInfo{Slot: slot, Wait: time.Duration(max(wait, 0)), Inline: inline}
	returned := false
	defer func() {
		if returned {
			return
		}
		// The task or a hook called runtime.Goexit (t.FailNow, for
		// instance): recover cannot stop it, and this goroutine is ending.
		// Account for the task as failed, and put a new worker in the dying
		// one's place so the pool keeps its size.
		run := int64(-1)
		if timed {
			run = p.now() - start
		}
		p.finish(j, slot, wait, run, ErrGoexit, inline)
		if j.item != nil {
			j.item.signal() // this worker will not wake the consumer later
		}
		if !inline {
			p.replaceWorker()
		}
	}()
	var err error
	if p.cfg.onStart != nil {
		err = p.callHook(func() { p.cfg.onStart(tctx, info) })
	}
	if err == nil {
		if j.item != nil {
			err = j.item.run(tctx)
		} else {
			err = safeCall(j.fn, tctx)
		}
	}
	var end int64
	run := int64(-1)
	if timed {
		end = p.now()
		run = end - start
		info.Run = time.Duration(run)
	}
	info.Err = err
	if p.cfg.onFinish != nil {
		if herr := p.callHook(func() { p.cfg.onFinish(tctx, info) }); herr != nil {
			err = errors.Join(err, herr)
		}
	}
	if p.cfg.onStats != nil {
		p.maybeStats(tctx, end)
	}
	returned = true
	p.finish(j, slot, wait, run, err, inline)
	return end
}

// finish does the bookkeeping after a task and publishes its outcome; wait
// and run are -1 when not measured.
func (p *Pool) finish(j job, slot int, wait, run int64, err error, inline bool) {
	p.st.record(wait, run, err, inline)
	p.st.busy.Add(-1)
	p.slots.release(slot)
	if j.item != nil {
		j.item.finish(err, true)
		return
	}
	if g := j.grp; g != nil {
		if err != nil {
			g.record(err)
		}
		g.pending.add(-1)
		return
	}
	if err != nil {
		p.errMu.Lock()
		if p.firstErr == nil {
			p.firstErr = err
		}
		p.errMu.Unlock()
	}
	p.goPending.add(-1)
}

// replaceWorker starts a worker in place of one whose goroutine is ending
// abnormally; the live count is unchanged.
func (p *Pool) replaceWorker() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Load() {
		p.live.Add(-1) // the dying worker leaves for good
		return
	}
	p.workers.add(1)
	go p.worker()
}

func (p *Pool) maybeStats(ctx context.Context, now int64) {
	last := p.lastStats.Load()
	if last != 0 && now-last < int64(p.cfg.statsEvery) {
		return
	}
	if !p.lastStats.CompareAndSwap(last, max(now, 1)) {
		return
	}
	if err := p.callHook(func() { p.cfg.onStats(ctx, p.Stats()) }); err != nil {
		p.st.panics.Add(1)
	}
}

// callHook runs a hook, turning a panic into a *PanicError.
func (p *Pool) callHook(fn func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	fn()
	return nil
}

// safeCall runs a task, turning a panic into a *PanicError.
func safeCall(fn func(context.Context) error, ctx context.Context) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return fn(ctx)
}

// isTaskOf reports whether ctx is (derived from) a task context of p.
func (p *Pool) isTaskOf(ctx context.Context) bool {
	tc, _ := ctx.Value(taskKey{}).(*taskCtx)
	return tc != nil && tc.pool == p
}

// mapHandle is how the pool reaches a running Map.
type mapHandle interface {
	// wake wakes the Map's consumer (never blocks).
	wake()
	// abort cancels the Map's context.
	abort(cause error)
}

func (p *Pool) registerMap(h mapHandle) {
	p.mu.Lock()
	p.maps[h] = struct{}{}
	p.mu.Unlock()
}

func (p *Pool) unregisterMap(h mapHandle) {
	p.mu.Lock()
	delete(p.maps, h)
	p.mu.Unlock()
}

// zeroWaiter is a counter whose return to zero can be waited for. Unlike
// sync.WaitGroup it may go up again while somebody waits, which a pool that
// keeps accepting work needs.
type zeroWaiter struct {
	n       atomic.Int64
	waiters atomic.Int64
	mu      sync.Mutex
	ch      chan struct{}
}

// add adds d to the counter and returns the new value.
func (z *zeroWaiter) add(d int64) int64 {
	n := z.n.Add(d)
	if n == 0 && z.waiters.Load() > 0 {
		z.mu.Lock()
		if z.ch != nil {
			close(z.ch)
			z.ch = nil
		}
		z.mu.Unlock()
	}
	return n
}

// wait waits until the counter is zero or done is closed (then it returns
// a non-nil error).
func (z *zeroWaiter) wait(done <-chan struct{}) error {
	z.waiters.Add(1)
	defer z.waiters.Add(-1)
	for {
		z.mu.Lock()
		if z.n.Load() == 0 {
			z.mu.Unlock()
			return nil
		}
		if z.ch == nil {
			z.ch = make(chan struct{})
		}
		ch := z.ch
		z.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			return context.Canceled
		}
	}
}
