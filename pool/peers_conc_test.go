package pool_test

// Ports of github.com/sourcegraph/conc@v0.3.0's own tests to ration's API,
// so that what conc's suite checks stays checked here. This
// file holds pool/pool_test.go, pool/error_pool_test.go,
// pool/context_pool_test.go and the root waitgroup_test.go;
// peers_conc_map_test.go holds the result pools, stream and iter.
//
// The mapping: conc's pool with WithMaxGoroutines(n) is pool.New(n) with
// Go and Wait (conc.WaitGroup too); WithErrors, WithContext,
// WithCancelOnError and WithFirstError are Pool.Group (first error,
// context canceled on failure); ResultPool and iter are Collect, Map and
// MapOrdered; stream's ordered callbacks are a MapOrdered loop body.
//
// Where ration documents another behaviour on purpose, the ports assert
// ration's, and say so:
//   - Wait does not re-panic a task's panic: it returns a *PanicError
//     carrying the value (so do a Map's Results); only a Map loop body's
//     own panic propagates as itself, as conc's stream callbacks do;
//   - Wait returns the first error, not a join of all of them, and a
//     group's first error is the failing task's own, never a sibling's
//     context.Canceled;
//   - Resize changes a pool's size at any time, where conc panics on
//     reconfiguration after the first Go, and a size below 1 is not a
//     panic (New: the default size; Resize: 1);
//   - Collect returns values in input order and, on failure, the first
//     failure in input order with the values before it.
//
// The originals sleep to let tasks overlap or to let one error land before
// another; the ports use barriers instead, and the order in which ration
// documents recording an error and canceling a context.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/pool"
)

var (
	errConc1 = errors.New("err1")
	errConc2 = errors.New("err2")
)

// concLimiter counts a pool's running tasks. Where conc's tasks sleep a
// millisecond so that they overlap, the first size tasks here wait until
// size of them run at once: the limit must be reached, not only kept.
type concLimiter struct {
	size    int64
	running atomic.Int64
	full    chan struct{}
	once    sync.Once
}

func concNewLimiter(size int) *concLimiter {
	return &concLimiter{size: int64(size), full: make(chan struct{})}
}

// task is the body of every task: it fails if more than size run at once.
// (To pass size, the count goes through size, so full gets closed.)
func (l *concLimiter) task() error {
	defer l.running.Add(-1)
	n := l.running.Add(1)
	if n > l.size {
		return fmt.Errorf("%d tasks ran at once, want at most %d", n, l.size)
	}
	if n == l.size {
		l.once.Do(func() { close(l.full) })
	}
	<-l.full
	return nil
}

// concEachLimit runs conc's "limit" subtests: on pools of 1, 10 and 100
// workers, run submits tasks(size) tasks that each call task, and waits.
func concEachLimit(t *testing.T, tasks func(size int) int, run func(t *testing.T, p *pool.Pool, n int, task func() error)) {
	t.Helper()
	for _, size := range []int{1, 10, 100} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			p := newPool(t, size)
			l := concNewLimiter(size)
			within(t, 10*time.Second, "the tasks", func() { run(t, p, tasks(size), l.task) })
			if n := l.running.Load(); n != 0 {
				t.Fatalf("%d tasks still running after the wait", n)
			}
		})
	}
}

func concTimes10(size int) int { return 10 * size }

// concReconfigure ports conc's "panics on configuration after init": conc
// forbids WithMaxGoroutines once a task was submitted, ration documents
// Resize as valid at any time, so the port asserts that a Resize while
// run's work is in flight (during) or after it finished takes effect and
// the work still completes.
func concReconfigure(t *testing.T, run func(p *pool.Pool, during func()) error) {
	t.Helper()
	t.Run("before wait", func(t *testing.T) {
		p := newPool(t, 1)
		if err := run(p, func() { p.Resize(10) }); err != nil {
			t.Fatal(err)
		}
		if p.Size() != 10 {
			t.Fatalf("Size = %d after Resize(10)", p.Size())
		}
	})
	t.Run("after wait", func(t *testing.T) {
		p := newPool(t, 1)
		if err := run(p, func() {}); err != nil {
			t.Fatal(err)
		}
		p.Resize(10)
		if err := run(p, func() {}); err != nil || p.Size() != 10 {
			t.Fatalf("after Resize(10): %v, Size = %d", err, p.Size())
		}
	})
}

// concWantPanic asserts ration's counterpart of conc's re-panic on Wait.
func concWantPanic(t *testing.T, err error, value any) {
	t.Helper()
	var pe *pool.PanicError
	if !errors.As(err, &pe) || pe.Value != value {
		t.Fatalf("error = %v, want a *PanicError with value %v", err, value)
	}
}

// concGoWait is conc's Pool and ErrorPool: Pool.Go, then Pool.Wait.
func concGoWait(p *pool.Pool, tasks ...func(context.Context) error) error {
	for _, task := range tasks {
		if err := p.Go(context.Background(), task); err != nil {
			return err
		}
	}
	return p.Wait()
}

// concGoDuring submits a task, calls during, then waits.
func concGoDuring(p *pool.Pool, during func()) error {
	if err := p.Go(context.Background(), nop); err != nil {
		return err
	}
	during()
	return p.Wait()
}

// concRepeat is n tasks, the i-th of which returns task(i).
func concRepeat(n int, task func(i int) error) []func(context.Context) error {
	tasks := make([]func(context.Context) error, n)
	for i := range tasks {
		tasks[i] = func(context.Context) error { return task(i) }
	}
	return tasks
}

// concGoWaitLimit is the body of conc's Pool and ErrorPool "limit".
func concGoWaitLimit(t *testing.T, p *pool.Pool, n int, task func() error) {
	if err := concGoWait(p, concRepeat(n, func(int) error { return task() })...); err != nil {
		t.Error(err)
	}
}

// concCounted runs n tasks that count themselves with Go and Wait.
func concCounted(t *testing.T, p *pool.Pool, n int) {
	t.Helper()
	var count atomic.Int64
	err := concGoWait(p, concRepeat(n, func(int) error { count.Add(1); return nil })...)
	if err != nil || count.Load() != int64(n) {
		t.Fatalf("Wait = %v, %d tasks ran, want %d", err, count.Load(), n)
	}
}

// concGroupWait is conc's ContextPool: a Group's Go, then its Wait.
func concGroupWait(p *pool.Pool, tasks ...func(context.Context) error) error {
	g, _ := p.Group(context.Background())
	for _, task := range tasks {
		g.Go(task)
	}
	return g.Wait()
}

func concFail(err error) func(context.Context) error {
	return func(context.Context) error { return err }
}

// concWaitCanceled is a task that runs until its context is canceled.
func concWaitCanceled(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// concErrorCases are the subtests conc runs for ErrorPool and again for
// ContextPool ("behaves the same as ErrorGroup").
func concErrorCases(t *testing.T, run func(p *pool.Pool, tasks ...func(context.Context) error) error) {
	t.Helper()
	t.Run("wait returns no error if no errors", func(t *testing.T) {
		if err := run(newPool(t, 4), nop); err != nil {
			t.Fatalf("Wait = %v", err)
		}
	})
	t.Run("wait error if func returns error", func(t *testing.T) {
		if err := run(newPool(t, 4), concFail(errConc1)); !errors.Is(err, errConc1) {
			t.Fatalf("Wait = %v, want err1", err)
		}
	})
	t.Run("wait error is all returned errors", func(t *testing.T) {
		// conc joins all errors; ration's Wait returns the first only.
		err := run(newPool(t, 4), concFail(errConc1), nop, concFail(errConc2))
		if errors.Is(err, errConc1) == errors.Is(err, errConc2) {
			t.Fatalf("Wait = %v, want exactly one of err1 and err2", err)
		}
	})
}

// From github.com/sourcegraph/conc@v0.3.0 pool/pool_test.go, ExamplePool:
// five tasks on a pool of three all run. Adapted: pool.New(3), Go and
// Wait; the tasks count instead of printing.
func TestPeerConcExamplePool(t *testing.T) {
	concCounted(t, newPool(t, 3), 5)
}

// From github.com/sourcegraph/conc@v0.3.0 pool/pool_test.go, TestPool.
// Adapted: New() (unbounded) is the default size, New(0); a panic comes
// back from Wait as a *PanicError instead of being re-panicked;
// WithMaxGoroutines is Resize, valid at any time, and a size below 1 means
// the default (New) or 1 (Resize) instead of a panic. "basic" (the pool
// is closed at cleanup) is what found Close hanging in a few of thousands
// of runs under -race; see TestCloseWakesParkingWorker.
func TestPeerConcPool(t *testing.T) {
	t.Run("basic", func(t *testing.T) {
		var completed atomic.Int64
		err := concGoWait(newPool(t, 0), concRepeat(100, func(int) error {
			completed.Add(1)
			return nil
		})...)
		if err != nil || completed.Load() != 100 {
			t.Fatalf("Wait = %v after %d tasks, want nil after 100", err, completed.Load())
		}
	})
	t.Run("panics on configuration after init", func(t *testing.T) {
		concReconfigure(t, concGoDuring)
	})
	t.Run("limit", func(t *testing.T) {
		concEachLimit(t, concTimes10, concGoWaitLimit)
	})
	t.Run("propagate panic", func(t *testing.T) {
		concWantPanic(t, concGoWait(newPool(t, 0), concRepeat(10, func(i int) error {
			if i == 5 {
				panic(i)
			}
			return nil
		})...), 5)
	})
	t.Run("panics do not exhaust goroutines", func(t *testing.T) {
		p := newPool(t, 2)
		concWantPanic(t, concGoWait(p, concRepeat(10, func(int) error { panic(42) })...), 42)
		// The workers survived all ten panics and still run tasks.
		if err := concGoWait(p, nop); err != nil {
			t.Fatal(err)
		}
		if s := p.Stats(); s.Panics != 10 || s.Completed != 11 || s.Workers != 2 {
			t.Fatalf("stats = %+v, want 10 panics, 11 completed, 2 workers", s)
		}
	})
	t.Run("panics on invalid WithMaxGoroutines", func(t *testing.T) {
		p := newPool(t, 0)
		if p.Size() < 1 {
			t.Fatalf("New(0).Size() = %d, want the default, at least 1", p.Size())
		}
		p.Resize(0)
		if p.Size() != 1 {
			t.Fatalf("Size = %d after Resize(0), want 1", p.Size())
		}
	})
	t.Run("returns correct MaxGoroutines", func(t *testing.T) {
		p := newPool(t, 42)
		if p.Size() != 42 || p.Stats().Size != 42 {
			t.Fatalf("Size = %d, Stats().Size = %d, want 42", p.Size(), p.Stats().Size)
		}
	})
}

// From github.com/sourcegraph/conc@v0.3.0 pool/error_pool_test.go,
// ExampleErrorPool: Wait returns the failing task's error. Adapted: Pool.Go
// and Wait; the error is compared instead of printed.
func TestPeerConcExampleErrorPool(t *testing.T) {
	err := concGoWait(newPool(t, 0), concRepeat(3, func(i int) error {
		if i == 2 {
			return errors.New("oh no!")
		}
		return nil
	})...)
	if err == nil || err.Error() != "oh no!" {
		t.Fatalf("Wait = %v, want oh no!", err)
	}
}

// From github.com/sourcegraph/conc@v0.3.0 pool/error_pool_test.go,
// TestErrorPool. Adapted: ErrorPool is Pool.Go and Wait; Wait returns the
// first error, not all of them joined; a panic comes back as a
// *PanicError; reconfiguration is Resize (see concReconfigure).
func TestPeerConcErrorPool(t *testing.T) {
	t.Run("panics on configuration after init", func(t *testing.T) {
		concReconfigure(t, concGoDuring)
	})
	concErrorCases(t, concGoWait)
	t.Run("propagates panics", func(t *testing.T) {
		concWantPanic(t, concGoWait(newPool(t, 0), concRepeat(10, func(i int) error {
			if i == 5 {
				panic("fatal")
			}
			return nil
		})...), "fatal")
	})
	t.Run("limit", func(t *testing.T) {
		concEachLimit(t, concTimes10, concGoWaitLimit)
	})
}

// From github.com/sourcegraph/conc@v0.3.0 pool/context_pool_test.go,
// ExampleContextPool_WithCancelOnError: one task's error cancels the
// others and is what Wait returns. Adapted: a Group on a pool of 4.
func TestPeerConcExampleContextPoolWithCancelOnError(t *testing.T) {
	p := newPool(t, 4)
	g, _ := p.Group(context.Background())
	for i := range 3 {
		g.Go(func(ctx context.Context) error {
			if i == 2 {
				return errors.New("I will cancel all other tasks!")
			}
			<-ctx.Done()
			return nil
		})
	}
	within(t, 10*time.Second, "Wait", func() {
		if err := g.Wait(); err == nil || err.Error() != "I will cancel all other tasks!" {
			t.Errorf("Wait = %v", err)
		}
	})
}

// From github.com/sourcegraph/conc@v0.3.0 pool/context_pool_test.go,
// TestContextPool. Adapted: a ContextPool with WithCancelOnError and
// WithFirstError is a Group, which always cancels its context on the first
// failure and returns only that error: where conc joins the failure with
// the siblings' context.Canceled, ration returns the failure alone, never
// the Canceled it caused. Without WithCancelOnError, it is Pool.Go with a
// context, which a failure does not cancel. A panic comes back from Wait
// as a *PanicError. The sleeps that let err1 land before err2 are replaced
// by waiting for the group's context, which ration cancels only after it
// recorded the error.
func TestPeerConcContextPool(t *testing.T) {
	t.Run("panics on configuration after init", func(t *testing.T) {
		concReconfigure(t, func(p *pool.Pool, during func()) error {
			g, _ := p.Group(context.Background())
			g.Go(nop)
			during()
			return g.Wait()
		})
	})
	t.Run("behaves the same as ErrorGroup", func(t *testing.T) {
		concErrorCases(t, concGroupWait)
	})
	t.Run("context error propagates", func(t *testing.T) {
		t.Run("canceled", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			g, _ := newPool(t, 1).Group(ctx)
			g.Go(concWaitCanceled)
			cancel()
			if err := g.Wait(); !errors.Is(err, context.Canceled) {
				t.Fatalf("Wait = %v, want context.Canceled", err)
			}
		})
		t.Run("timed out", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			defer cancel()
			g, _ := newPool(t, 1).Group(ctx)
			g.Go(concWaitCanceled)
			if err := g.Wait(); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Wait = %v, want context.DeadlineExceeded", err)
			}
		})
	})
	laterErr2 := func(ctx context.Context) error { <-ctx.Done(); return errConc2 }
	for _, tc := range []struct {
		name  string
		tasks []func(context.Context) error
	}{
		{"WithCancelOnError", []func(context.Context) error{concWaitCanceled, concFail(errConc1)}},
		{"WithFirstError", []func(context.Context) error{concFail(errConc1), laterErr2}},
		{"WithFirstError and WithCancelOnError", []func(context.Context) error{concFail(errConc1), concWaitCanceled}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPool(t, 2)
			g, ctx := p.Group(context.Background())
			for _, task := range tc.tasks {
				g.Go(task)
			}
			within(t, 10*time.Second, "Wait", func() {
				if err := g.Wait(); err != errConc1 || context.Cause(ctx) != errConc1 {
					t.Errorf("Wait = %v, cause %v; want err1 alone", err, context.Cause(ctx))
				}
			})
		})
	}
	t.Run("no WithCancelOnError", func(t *testing.T) {
		// The sibling carries on past the failure (the hook runs once the
		// failing task returned) and finds its context live.
		failed := make(chan struct{})
		p := newPool(t, 2, pool.OnFinish(func(_ context.Context, ti pool.TaskInfo) {
			if ti.Err == errConc1 {
				close(failed)
			}
		}))
		var siblingErr error
		err := concGoWait(p, func(ctx context.Context) error {
			<-failed
			siblingErr = ctx.Err()
			return siblingErr
		}, concFail(errConc1))
		if err != errConc1 || siblingErr != nil {
			t.Fatalf("Wait = %v, sibling's context error %v; want err1 and nil", err, siblingErr)
		}
	})
	t.Run("WithCancelOnError and panic", func(t *testing.T) {
		p := newPool(t, 3)
		g, _ := p.Group(context.Background())
		var cancelledTasks atomic.Int64
		for range 2 {
			g.Go(func(ctx context.Context) error {
				<-ctx.Done()
				cancelledTasks.Add(1)
				return ctx.Err()
			})
		}
		g.Go(func(context.Context) error { panic("abort!") })
		var err error
		within(t, 10*time.Second, "Wait", func() { err = g.Wait() })
		concWantPanic(t, err, "abort!")
		if cancelledTasks.Load() != 2 {
			t.Fatalf("%d tasks saw the cancellation, want 2", cancelledTasks.Load())
		}
	})
	t.Run("limit", func(t *testing.T) {
		concEachLimit(t, func(int) int { return 100 }, func(t *testing.T, p *pool.Pool, n int, task func() error) {
			g, _ := p.Group(context.Background())
			for range n {
				g.Go(func(context.Context) error { return task() })
			}
			if err := g.Wait(); err != nil {
				t.Error(err)
			}
		})
	})
}

// From github.com/sourcegraph/conc@v0.3.0 waitgroup_test.go,
// ExampleWaitGroup: ten tasks all run. Adapted: conc.WaitGroup is Pool.Go
// and Wait.
func TestPeerConcExampleWaitGroup(t *testing.T) {
	concCounted(t, newPool(t, 0), 10)
}

// From github.com/sourcegraph/conc@v0.3.0 waitgroup_test.go,
// ExampleWaitGroup_WaitAndRecover: the panic value comes back from the
// wait. Adapted: Pool.Wait plays WaitAndRecover, returning a *PanicError.
func TestPeerConcExampleWaitGroupWaitAndRecover(t *testing.T) {
	p := newPool(t, 0)
	concWantPanic(t, concGoWait(p, func(context.Context) error { panic("super bad thing") }), "super bad thing")
}

// From github.com/sourcegraph/conc@v0.3.0 waitgroup_test.go, TestWaitGroup.
// Adapted: conc.WaitGroup is Pool.Go and Wait on a pool of 4. Wait returns
// a panic as a *PanicError, so it is both conc's Wait (which re-panics)
// and its WaitAndRecover: each pair of subtests is one here. "ctor" is not
// ported (a type check of conc's constructor).
func TestPeerConcWaitGroup(t *testing.T) {
	t.Run("all spawned run", func(t *testing.T) { concCounted(t, newPool(t, 4), 100) })
	// A nil entry is a task that returns, any other one panics with itself.
	for _, tc := range []struct {
		name  string
		tasks []any
	}{
		{"panic is propagated, is caught by waitandrecover", []any{"super bad thing"}},
		{"panic one is propagated, one is caught by waitandrecover", []any{"super bad thing", "super badder thing"}},
		{"panic non-panics do not overwrite panic", append([]any{"super bad thing"}, make([]any, 10)...)},
		{"panic non-panics run successfully (with waitandrecover)", []any{nil, "super bad thing", nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran atomic.Int64
			err := concGoWait(newPool(t, 4), concRepeat(len(tc.tasks), func(i int) error {
				if v := tc.tasks[i]; v != nil {
					panic(v)
				}
				ran.Add(1)
				return nil
			})...)
			var pe *pool.PanicError
			if !errors.As(err, &pe) || pe.Value == nil || !slices.Contains(tc.tasks, pe.Value) {
				t.Fatalf("Wait = %v, want a *PanicError with one of the panics", err)
			}
			want := int64(0)
			for _, v := range tc.tasks {
				if v == nil {
					want++
				}
			}
			if ran.Load() != want {
				t.Fatalf("%d tasks ran to the end, want %d", ran.Load(), want)
			}
		})
	}
}
