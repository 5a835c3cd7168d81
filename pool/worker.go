package pool

import (
	"context"
	"errors"
	"runtime"
	"runtime/debug"
	"time"
)

// job is what travels from a submitter to a worker. It is passed by value
// through a channel, so submitting allocates nothing.
type job struct {
	fn   func(context.Context) error // a Go/TryGo task, or nil
	grp  *Group                      // the Group of a task, or nil
	item mapItem                     // a Map item, or nil
	ctx  context.Context             // parent of the task's context
	// enq samples the queue wait: p.now() when a sampled submitter started
	// to block, enqNoWait if a sampled submitter did not block, 0 if the
	// submission is not sampled.
	enq int64
	// nested marks a nested submission (a task or a Map item submitted
	// with a task context of the pool), counted in Pool.nestedHandoffs
	// from its offer to its start on a worker.
	nested bool
}

const enqNoWait = -1

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
		// A nested submission (a Map's item, a Go or Group task) may just
		// have been handed to this worker, seen idle: leaving now could
		// strand it in the queue, while its submitter holds a worker that
		// waits for it. Stay until it started.
		if p.nestedHandoffs.Load() > 0 {
			return false
		}
		if p.live.CompareAndSwap(l, l-1) {
			return true
		}
	}
}

// worker is a worker goroutine; it runs first first, unless first is zero.
func (p *Pool) worker(first job) {
	defer func() {
		if p.workers.add(-1) == 0 && p.closed.Load() {
			// After Close, a worker starts only in place of a dying one,
			// counted before that one leaves: this is the last one.
			p.exitOne.Do(func() { close(p.exited) })
		}
	}()
	// last is the clock reading at the end of the previous task if it was
	// timed, else 0. A task received without blocking starts then, which
	// saves a clock read.
	var last int64
	var n uint32 // tasks run, for sampling
	long, short := false, false
	do := func(j job, start int64) {
		n++
		timed := p.timeAll || long || j.enq > 0 || n%sampleEvery == 1
		if !timed {
			p.run(j, onWorker, false, 0)
			last = 0
			return
		}
		if start == 0 {
			start = p.now()
		}
		last = p.run(j, onWorker, true, start)
		if last == 0 {
			return // a Map item that did not start: no duration
		}
		if l := last-start >= int64(longTask); l != long {
			long = l
			p.long.Store(l)
		}
		if s := last-start < int64(shortTask); s != short {
			short = s
			p.short.Store(s)
		}
	}
	if !first.isKick() {
		do(first, 0)
	}
	for {
		if p.retire() {
			return
		}
		if p.closed.Load() {
			// Tasks accepted into the queue run before the workers
			// leave.
			p.drainQueue(func(j job) { do(j, 0) })
			// Once closed, Resize is a no-op: every worker leaves, and
			// Stats.Workers counts down to 0.
			p.live.Add(-1)
			return
		}
		// A queued task is taken without parking.
		select {
		case j := <-p.tasks:
			if j.isKick() {
				// The kick was sent for a worker that announced a park
				// (see kick), and this one had not. After a shrink, this
				// worker retiring in its place does the same; after Close,
				// every worker must leave: pass the kick on, or the parked
				// one sleeps on and Close never returns.
				if p.closed.Load() && p.parked.Load() > 0 {
					p.sendKicks(1)
				}
				continue
			}
			do(j, last)
			continue
		default:
		}
		// Park on a plain receive (a select here cost a fifth of a trivial
		// task). Resize and Close reach parked workers with kicks (see
		// kick); announcing the park before re-checking the size and the
		// closed flag, which they store before reading parked, means that
		// either this worker sees their change or they see it parked.
		p.parked.Add(1)
		if p.surplus() || p.closed.Load() {
			p.parked.Add(-1)
			if p.nestedHandoffs.Load() > 0 {
				runtime.Gosched() // see retire
			}
			continue
		}
		j := <-p.tasks
		p.parked.Add(-1)
		last = 0
		if j.isKick() {
			continue
		}
		do(j, 0)
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
func (p *Pool) kick() { p.sendKicks(p.parked.Load()) }

// sendKicks sends n kicks: what the queue takes now, the rest from a
// goroutine that ends when they are taken or every worker has exited.
func (p *Pool) sendKicks(n int64) {
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

// runMode is how a job runs.
type runMode uint8

const (
	// onWorker: on a worker; counted in busy from its hand-over.
	onWorker runMode = iota
	// nestedInline: a nested submission on the submitting task's
	// goroutine; counted in inlineRunning, never in busy, so that busy
	// minus the job being offered is exactly what the workers hold (see
	// offer).
	nestedInline
	// rescued: taken from the queue of a closed pool for its submitter
	// (see rescue); counted in busy since it was queued, and reported
	// inline, as it runs beside the workers.
	rescued
)

// rescue runs what is left in a closed pool's queue for a submitter that
// has just put a task there (see sent), and returns when the queue is
// empty. The tasks run on a goroutine of rescue's own, not the
// submitter's: a task that calls runtime.Goexit then ends that goroutine,
// as it would end a worker's, and fails with ErrGoexit, while the
// submitter (a caller of Go, or a Map's consumer) survives and starts
// another goroutine for the tasks still queued. Run on the submitter's
// goroutine, such a task ended it: its Go call never returned.
func (p *Pool) rescue() {
	done := make(chan bool)
	for {
		go func() {
			drained := false
			defer func() { done <- drained }()
			p.drainQueue(func(j job) { p.run(j, rescued, true, p.now()) })
			drained = true
		}()
		if <-done {
			return
		}
	}
}

// runNested runs a nested submission inline on the calling goroutine.
func (p *Pool) runNested(j job) {
	p.st.inlineRunning.add(1)
	defer p.st.inlineRunning.add(-1)
	p.run(j, nestedInline, true, p.now())
}

// run runs one job on the calling goroutine (a worker, the submitter for
// a nested inline job, or rescue's). If timed, start is a clock reading at
// its start, and run returns the clock reading at its end (else 0).
func (p *Pool) run(j job, mode runMode, timed bool, start int64) int64 {
	inline := mode != onWorker
	if j.nested && mode != nestedInline {
		p.nestedHandoffs.Add(-1) // see retire
	}
	if j.item != nil {
		// An item may wait a little between its hand-over and its start;
		// one whose Map stopped meanwhile never starts.
		if err := j.item.notStarted(); err != nil {
			if mode != nestedInline {
				p.st.busy.add(-1)
			}
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
		// one's place so the pool keeps its size (rescue starts another
		// goroutine for a rescued task's).
		run := int64(-1)
		if timed {
			run = p.now() - start
		}
		p.finish(j, slot, wait, run, ErrGoexit, mode)
		if mode == onWorker {
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
	p.finish(j, slot, wait, run, err, mode)
	return end
}

// finish does the bookkeeping after a task and publishes its outcome; wait
// and run are -1 when not measured.
func (p *Pool) finish(j job, slot int, wait, run int64, err error, mode runMode) {
	p.st.record(wait, run, err, mode != onWorker)
	if mode != nestedInline {
		p.st.busy.add(-1)
	}
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
// abnormally; the live count is unchanged. After Close too: the dying
// worker may have been the last one, with tasks still queued (or it was
// draining them), and the replacement drains them before it leaves.
func (p *Pool) replaceWorker() {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Counted before the dying worker's own exit, so exited cannot close
	// in between.
	p.workers.add(1)
	go p.worker(job{})
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
