package pool

import (
	"context"
	"sync"
	"sync/atomic"
)

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
