package memory

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// rerunOwner is a pool in miniature: attempts in flight and a size, both
// guarded by mu, which guards its Reruns too.
type rerunOwner struct {
	mu       sync.Mutex
	inFlight int
	size     int
	changes  int
	stopErr  error
	q        *Reruns
}

func newRerunOwner(inFlight, size int) *rerunOwner {
	o := &rerunOwner{inFlight: inFlight, size: size}
	o.q = NewReruns(&o.mu)
	o.q.Changed = func() { o.changes++ }
	return o
}

func (o *rerunOwner) room() (int, int) { return o.inFlight, o.size }
func (o *rerunOwner) stopped() error   { return o.stopErr }

// set changes what room reads and signals, as an owner does when an
// attempt ends or the size changes.
func (o *rerunOwner) set(inFlight, size int) {
	o.mu.Lock()
	o.inFlight, o.size = inFlight, size
	o.q.Signal()
	o.mu.Unlock()
}

// wait runs Wait in a goroutine; its error arrives on the channel.
func (o *rerunOwner) wait(ctx context.Context, below int) <-chan error {
	done := make(chan error, 1)
	go func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		done <- o.q.Wait(ctx, below, o.room, o.stopped)
	}()
	return done
}

func (o *rerunOwner) locked(f func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f()
}

func returned(t *testing.T, done <-chan error) (error, bool) {
	t.Helper()
	synctest.Wait()
	select {
	case err := <-done:
		return err, true
	default:
		return nil, false
	}
}

func TestRerunsWaitUntilFewerInFlightThanBelow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Killed beside 5 others: below is 3, so it runs again once
		// fewer than 3 others are in flight, although the size is 8.
		o := newRerunOwner(5, 8)
		done := o.wait(t.Context(), OOMRetry{}.Below(5))
		if _, ok := returned(t, done); ok {
			t.Fatal("Wait returned with 5 in flight and below 3")
		}
		o.locked(func() {
			if !o.q.Waiting() || !o.q.Holding(5, 8) {
				t.Errorf("while a re-run waits: Waiting %v, Holding %v, want both true", o.q.Waiting(), o.q.Holding(5, 8))
			}
		})
		o.set(3, 8)
		if _, ok := returned(t, done); ok {
			t.Fatal("Wait returned with 3 in flight and below 3")
		}
		o.set(2, 8)
		err, ok := returned(t, done)
		if !ok || err != nil {
			t.Fatalf("with 2 in flight and below 3: returned %v, err %v; want nil", ok, err)
		}
		o.locked(func() {
			if !o.q.Waiting() {
				t.Error("a re-run let go and not started: Waiting is false")
			}
			if o.changes != 2 {
				t.Errorf("Changed called %d times, want 2 (held, let go)", o.changes)
			}
			o.q.Started()
			if o.q.Waiting() || o.q.Holding(8, 8) {
				t.Error("after Started: still Waiting or Holding")
			}
		})
	})
}

func TestRerunsWaitBoundBySize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The concurrency was halved to 1: below 4 does not let it run
		// beside another.
		o := newRerunOwner(1, 1)
		done := o.wait(t.Context(), 4)
		if _, ok := returned(t, done); ok {
			t.Fatal("Wait returned with 1 in flight and size 1")
		}
		o.set(1, 2) // the size grew back: room
		if err, ok := returned(t, done); !ok || err != nil {
			t.Fatalf("after the size grew to 2: returned %v, err %v", ok, err)
		}
	})
}

func TestRerunsClaimedTakesRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newRerunOwner(0, 4)
		if err, ok := returned(t, o.wait(t.Context(), 1)); !ok || err != nil {
			t.Fatalf("first re-run with nothing in flight: returned %v, err %v", ok, err)
		}
		// The first is let go but not yet started: the second must not
		// take the same room.
		second := o.wait(t.Context(), 1)
		if _, ok := returned(t, second); ok {
			t.Fatal("second re-run let go while the first was claimed")
		}
		o.locked(func() { o.q.Unclaim(); o.q.Signal() })
		if err, ok := returned(t, second); !ok || err != nil {
			t.Fatalf("after the first was given up: returned %v, err %v", ok, err)
		}
		o.locked(o.q.Started)
	})
}

func TestRerunsWaitEnds(t *testing.T) {
	errStop := errors.New("stopped")
	t.Run("Context", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			o := newRerunOwner(4, 4)
			ctx, cancel := context.WithCancelCause(t.Context())
			done := o.wait(ctx, 1)
			synctest.Wait()
			cancel(errStop)
			if err, ok := returned(t, done); !ok || err != errStop {
				t.Fatalf("after ctx ended: returned %v, err %v, want %v", ok, err, errStop)
			}
			o.locked(func() {
				if o.q.Waiting() || o.changes != 2 {
					t.Errorf("after the wait ended: Waiting %v, changes %d; want false, 2", o.q.Waiting(), o.changes)
				}
			})
		})
	})
	t.Run("StopChannel", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			o := newRerunOwner(4, 4)
			stop := make(chan struct{})
			o.q.Stop = stop
			done := o.wait(t.Context(), 1)
			synctest.Wait()
			o.locked(func() { o.stopErr = errStop }) // no Signal: Stop wakes it
			if _, ok := returned(t, done); ok {
				t.Fatal("Wait looked again without a wake")
			}
			close(stop)
			if err, ok := returned(t, done); !ok || err != errStop {
				t.Fatalf("after Stop closed: returned %v, err %v, want %v", ok, err, errStop)
			}
		})
	})
	t.Run("StoppedBeforeRoom", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			o := newRerunOwner(0, 4)
			o.stopErr = errStop
			if err, ok := returned(t, o.wait(t.Context(), 1)); !ok || err != errStop {
				t.Fatalf("stopped with room: returned %v, err %v, want %v", ok, err, errStop)
			}
			o.locked(func() {
				if o.q.Waiting() {
					t.Error("a stopped wait left the re-run counted")
				}
			})
		})
	})
}

func TestRerunsPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newRerunOwner(2, 4)
		o.q.Poll = 100 * time.Millisecond
		done := o.wait(t.Context(), 1)
		synctest.Wait()
		o.locked(func() { o.inFlight = 0 }) // no Signal
		time.Sleep(99 * time.Millisecond)
		if _, ok := returned(t, done); ok {
			t.Fatal("Wait looked again before Poll")
		}
		time.Sleep(time.Millisecond)
		if err, ok := returned(t, done); !ok || err != nil {
			t.Fatalf("after Poll: returned %v, err %v", ok, err)
		}
	})
}

func TestRerunsHolding(t *testing.T) {
	var mu sync.Mutex
	q := NewReruns(&mu)
	mu.Lock()
	defer mu.Unlock()
	if q.Holding(8, 8) {
		t.Error("empty Reruns holds first attempts")
	}
	a, b := new(int), new(int)
	q.claimed += 2 // as two Waits that returned
	q.Running(a, 3)
	q.Running(b, 2)
	for _, tt := range []struct {
		inFlight, size int
		want           bool
	}{
		{1, 8, false}, {2, 8, true}, // the smallest bound, 2, holds
		{1, 1, true}, // the size is smaller still
	} {
		if got := q.Holding(tt.inFlight, tt.size); got != tt.want {
			t.Errorf("Holding(%d, %d) with bounds 3 and 2 = %v, want %v", tt.inFlight, tt.size, got, tt.want)
		}
	}
	q.Ended(b)
	if q.Holding(2, 8) || !q.Holding(3, 8) {
		t.Error("after the bound-2 re-run ended: want holding from 3 in flight on")
	}
	q.Ended(a)
	q.Ended(a) // a second Ended is ignored
	if q.Holding(8, 8) || q.Waiting() {
		t.Error("after both ended: still holding")
	}
}

// TestRerunsConcurrent lets many re-runs with bound 1 wait at once, each
// starting some time after Wait let it go (as a worker takes it from a
// queue): at most one may ever be in flight.
func TestRerunsConcurrent(t *testing.T) {
	o := newRerunOwner(0, 4)
	var maxInFlight atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 20 {
				o.mu.Lock()
				if err := o.q.Wait(t.Context(), 1, o.room, o.stopped); err != nil {
					o.mu.Unlock()
					t.Error(err)
					return
				}
				o.mu.Unlock()
				time.Sleep(10 * time.Microsecond) // on its way to a worker
				o.mu.Lock()
				o.q.Started()
				o.inFlight++
				if n := int64(o.inFlight); n > maxInFlight.Load() {
					maxInFlight.Store(n)
				}
				o.mu.Unlock()
				time.Sleep(10 * time.Microsecond)
				o.locked(func() { o.inFlight--; o.q.Signal() })
			}
		})
	}
	wg.Wait()
	if got := maxInFlight.Load(); got != 1 {
		t.Errorf("at most %d re-runs with bound 1 in flight, want 1", got)
	}
	o.locked(func() {
		if o.q.Waiting() || o.inFlight != 0 {
			t.Errorf("at the end: Waiting %v, in flight %d", o.q.Waiting(), o.inFlight)
		}
	})
}
