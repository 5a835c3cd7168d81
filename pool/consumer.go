package pool

import (
	"errors"
	"fmt"
	"iter"
)

// poll delivers the finished results without blocking. The consumer polls
// after every hand-over, because a worker wakes it only when it sleeps
// (see mapState.sleep).
func (c *consumer[T, R]) poll() {
	if c.m.hasDone() {
		// A stale wake-up only makes the next sleep return early.
		select {
		case <-c.m.signal:
		default:
		}
		c.drain()
	}
}

// consumer is the state of a Map's iterator; only the consumer's goroutine
// touches it.
type consumer[T, R any] struct {
	p       *Pool
	m       *mapState[T, R]
	cfg     mapConfig
	ordered bool
	yield   func(Result[T, R]) bool

	nested      bool // the Map's context is a task context of p
	sample      uint32
	closed      bool // pulling stopped because the pool was closed
	next        int  // index of the next item to pull
	outstanding int  // pulled and not yet delivered (or discarded)
	running     int  // handed to a worker and not yet taken back
	stopped     bool
	free        []*item[T, R]
	ring        []*item[T, R] // ordered: finished items by index & (len-1)
	head        int           // ordered: next index to deliver
}

func (c *consumer[T, R]) bound() int {
	if c.cfg.window > 0 {
		return c.cfg.window
	}
	b := int(c.p.want.Load()) + cap(c.p.tasks) + 1 // PullSlack by default
	if !c.ordered && c.p.short.Load() {
		b-- // see PullSlack
	}
	return b
}

func (c *consumer[T, R]) loop(in iter.Seq[T]) {
	if c.m.stopCause() == nil {
		for v := range in {
			it := c.alloc()
			it.res.Index, it.res.Input = c.next, v
			c.next++
			c.outstanding++
			if !c.dispatch(it) || c.stopped || !c.makeRoom() {
				break
			}
		}
	}
	// Input exhausted or pulling stopped: deliver what is still running.
	for {
		c.poll()
		if c.running == 0 || c.stopped {
			return
		}
		c.m.sleep()
	}
}

func (c *consumer[T, R]) alloc() *item[T, R] {
	if n := len(c.free); n > 0 {
		it := c.free[n-1]
		c.free = c.free[:n-1]
		return it
	}
	return &item[T, R]{m: c.m}
}

// dispatch hands it to a worker (or runs it inline) and reports whether
// pulling may go on. An item that cannot start is delivered with an error.
func (c *consumer[T, R]) dispatch(it *item[T, R]) bool {
	p, m := c.p, c.m
	j := job{item: it, ctx: m.ctx, nested: c.nested}
	// Sampled like Pool.sampleSubmission, from a counter of the
	// consumer's own; the wait is measured from here, as the item may
	// wait in the queue.
	c.sample++
	if p.timeAll || p.long.Load() || c.sample%sampleEvery == 0 {
		j.enq = p.now()
	}
	if p.closed.Load() {
		c.closed = true
		c.reject(it, ErrClosed)
		return false
	}
	// A nested Map runs an item inline rather than queue it.
	if p.offer(j, !c.nested) {
		c.running++
		return true
	}
	if c.nested {
		c.running++
		p.runNested(j)
		return true
	}
	if p.retryQueue(j) {
		c.running++
		return true
	}
	for {
		// Deliver finished results while waiting for a worker: results
		// never wait behind submissions.
		c.poll()
		if c.stopped {
			c.discard(it)
			return false
		}
		// While counted as waiting, decide without calling user code, so
		// that Close sees this dispatcher's decision before it returns.
		p.waiting.add(1)
		var err error
		for {
			if cause := m.stopCause(); cause != nil {
				err = fmt.Errorf("%w: %w", ErrNotStarted, cause)
				break
			}
			if p.closed.Load() {
				p.notStarted.Add(1)
				c.closed = true
				err = ErrClosed
				break
			}
			// Offer again while counted as waiting: a Resize that grew
			// the pool either starts a worker for this dispatcher or is
			// seen here (and it wakes the Map, so this runs again).
			if p.belowSize() && p.offer(j, false) {
				p.waiting.add(-1)
				c.running++
				return true
			}
			// Counted busy before the send, so that offer never sees a
			// worker idle that is not.
			p.st.busy.add(1)
			m.sleeping.Store(true)
			if m.hasDone() {
				m.sleeping.Store(false)
				p.st.busy.add(-1)
				break
			}
			select {
			case p.tasks <- j:
				m.sleeping.Store(false)
				p.sent(true)
				p.waiting.add(-1)
				c.running++
				return true
			case <-m.signal: // a result, cancellation, Close or Resize
			}
			m.sleeping.Store(false)
			p.st.busy.add(-1)
			if m.hasDone() {
				break
			}
		}
		p.waiting.add(-1)
		if err != nil {
			// A failure that stopped the Map was published before the
			// stop: deliver it before this item's ErrNotStarted.
			c.poll()
			if c.stopped {
				c.discard(it)
			} else {
				c.reject(it, err)
			}
			return false
		}
	}
}

// why is StopErr's report, once the loop has returned.
func (c *consumer[T, R]) why() error {
	if c.stopped {
		return nil
	}
	// stopCause, not the context alone: Map's worker cancels just after
	// publishing the failure, and the loop may have ended in between.
	if err := c.m.stopCause(); err != nil {
		return err
	}
	// The loop may also have ended after delivering the failure and
	// before the failing worker published it (failPub).
	if err := c.m.failure(); err != nil {
		return err
	}
	if c.closed {
		return ErrClosed
	}
	return nil
}

// makeRoom delivers finished results and waits until one more item may be
// pulled. It returns false when pulling must stop.
func (c *consumer[T, R]) makeRoom() bool {
	for {
		c.poll()
		// failure, beside stopCause: the consumer may already have
		// delivered the failed item before its worker published it. (No
		// item is pending here, so no ErrNotStarted can overtake it.)
		if c.stopped || c.m.stopCause() != nil || (c.cfg.failFast && c.m.failure() != nil) {
			return false
		}
		if c.p.closed.Load() {
			c.closed = true
			return false
		}
		if c.outstanding < c.bound() {
			return true
		}
		c.m.sleep() // a result, cancellation, Close or Resize
	}
}

// drain takes the finished items from the workers and delivers them.
func (c *consumer[T, R]) drain() {
	// The stack holds the newest item first: reverse it, to deliver in
	// completion order.
	var batch *item[T, R]
	n := 0
	for it := c.m.done.Swap(nil); it != nil; n++ {
		next := it.next
		it.next = batch
		batch = it
		it = next
	}
	// Account first: if the loop body panics inside deliver, the deferred
	// cleanup must not wait for items it already holds.
	c.running -= n
	for it := batch; it != nil; {
		next := it.next
		it.next = nil
		c.deliver(it)
		it = next
	}
}

func (c *consumer[T, R]) reject(it *item[T, R], err error) {
	it.res.Err = err
	c.deliver(it)
}

// deliver yields a finished item (in order, for MapOrdered) unless the
// consumer has stopped.
func (c *consumer[T, R]) deliver(it *item[T, R]) {
	if c.stopped {
		c.discard(it)
		return
	}
	if !c.ordered {
		c.emit(it)
		return
	}
	c.place(it)
	for !c.stopped {
		i := c.head & (len(c.ring) - 1)
		h := c.ring[i]
		if h == nil || h.res.Index != c.head {
			return
		}
		c.ring[i] = nil
		c.head++
		if int64(h.res.Index) == c.m.failIdx.Load() {
			// Every item before the first failure has been delivered:
			// now cancel the ones after it.
			c.m.cancel(*c.m.failErr.Load())
		}
		c.emit(h)
	}
	if c.stopped {
		for i, h := range c.ring {
			if h != nil {
				c.ring[i] = nil
				c.discard(h)
			}
		}
	}
}

// place puts it into the reorder ring, growing the ring when the window
// has grown (Resize) beyond it.
func (c *consumer[T, R]) place(it *item[T, R]) {
	need := it.res.Index - c.head + 1
	if need > len(c.ring) {
		n := max(len(c.ring), 8)
		for n < need {
			n *= 2
		}
		ring := make([]*item[T, R], n)
		for _, h := range c.ring {
			if h != nil {
				ring[h.res.Index&(n-1)] = h
			}
		}
		c.ring = ring
	}
	c.ring[it.res.Index&(len(c.ring)-1)] = it
}

func (c *consumer[T, R]) emit(it *item[T, R]) {
	r := it.res
	c.discard(it)
	if !c.yield(r) {
		c.stopped = true
		c.m.cancel(errConsumerStopped)
	}
}

// discard forgets a pulled item and recycles its record.
func (c *consumer[T, R]) discard(it *item[T, R]) {
	c.outstanding--
	it.res = Result[T, R]{}
	c.free = append(c.free, it)
}

func isPanic(err error) bool {
	var pe *PanicError
	return errors.As(err, &pe)
}
