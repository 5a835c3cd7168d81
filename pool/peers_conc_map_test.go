package pool_test

// Ports of github.com/sourcegraph/conc@v0.3.0's result pools, stream and
// iter tests to Collect, Map and MapOrdered (see peers_conc_test.go for
// the mapping and the documented differences).

import (
	"context"
	"errors"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/pool"
)

// concTask is one of a test's hand-written items: conc submits such
// closures to its result pools, ration maps concRun over them.
type concTask = func(context.Context) (int, error)

func concRun(ctx context.Context, task concTask) (int, error) { return task(ctx) }

func concValue(v int, err error) concTask {
	return func(context.Context) (int, error) { return v, err }
}

func concTasks(tasks ...concTask) iter.Seq[concTask] { return slices.Values(tasks) }

// concMapAll is conc's MapErr and ResultErrorPool shape on MapOrdered
// without FailFast: every item's value in input order, the values of the
// items that succeeded, and all errors joined.
func concMapAll[T, R any](ctx context.Context, p *pool.Pool, in iter.Seq[T], fn func(context.Context, T) (R, error)) (all, ok []R, err error) {
	var errs []error
	for r := range pool.MapOrdered(ctx, p, in, fn) {
		all = append(all, r.Value)
		if r.Err != nil {
			errs = append(errs, r.Err)
			continue
		}
		ok = append(ok, r.Value)
	}
	return all, ok, errors.Join(errs...)
}

// concMapDuring runs a MapOrdered, calling during after each result.
func concMapDuring(p *pool.Pool, during func()) error {
	var errs []error
	for r := range pool.MapOrdered(context.Background(), p, seqN(3), func(_ context.Context, i int) (int, error) { return i, nil }) {
		errs = append(errs, r.Err)
		during()
	}
	return errors.Join(errs...)
}

// concCollectLimit is the body of the result pools' "limit" subtests.
func concCollectLimit(t *testing.T, p *pool.Pool, n int, task func() error) {
	got, err := pool.Collect(context.Background(), p, seqN(n), func(_ context.Context, i int) (int, error) { return i, task() })
	if err != nil || !slices.Equal(got, slices.Collect(seqN(n))) {
		t.Errorf("Collect = %d values, %v; want 0..%d in order", len(got), err, n-1)
	}
}

// concRecover returns the value fn panicked with, or nil.
func concRecover(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}

// concFirstErr is the first error among results, in their order.
func concFirstErr[T, R any](results []pool.Result[T, R]) error {
	for _, r := range results {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

// concResultErrorCases are the subtests conc runs for ResultErrorPool and
// again for ResultContextPool ("behaves the same as ErrorGroup").
func concResultErrorCases(t *testing.T) {
	t.Helper()
	t.Run("wait returns no error if no errors", func(t *testing.T) {
		got, err := pool.Collect(context.Background(), newPool(t, 4), concTasks(concValue(1, nil)), concRun)
		if err != nil || !slices.Equal(got, []int{1}) {
			t.Fatalf("Collect = %v, %v; want [1]", got, err)
		}
	})
	t.Run("wait error if func returns error", func(t *testing.T) {
		got, err := pool.Collect(context.Background(), newPool(t, 4), concTasks(concValue(0, errConc1)), concRun)
		if len(got) != 0 || !errors.Is(err, errConc1) {
			t.Fatalf("Collect = %v, %v; want no values and err1", got, err)
		}
	})
	t.Run("wait error is all returned errors", func(t *testing.T) {
		p := newPool(t, 4)
		in := concTasks(concValue(0, errConc1), concValue(0, nil), concValue(0, errConc2))
		_, ok, err := concMapAll(context.Background(), p, in, concRun)
		if len(ok) != 1 || !errors.Is(err, errConc1) || !errors.Is(err, errConc2) {
			t.Fatalf("MapOrdered: %d values, errors %v; want 1 value, err1 and err2", len(ok), err)
		}
		// Collect stops at the first failure in input order.
		if got, err := pool.Collect(context.Background(), p, in, concRun); len(got) != 0 || !errors.Is(err, errConc1) || errors.Is(err, errConc2) {
			t.Fatalf("Collect = %v, %v; want no values and err1 alone", got, err)
		}
	})
}

// concCollectErrored ports conc's WithCollectErrored: every Result carries
// its fn's value, a failed item's too.
func concCollectErrored(t *testing.T) {
	all, ok, err := concMapAll(context.Background(), newPool(t, 4), concTasks(concValue(7, errConc1)), concRun)
	if !slices.Equal(all, []int{7}) || len(ok) != 0 || !errors.Is(err, errConc1) {
		t.Fatalf("MapOrdered: values %v, ok %v, %v; want the failed item's 7 and err1", all, ok, err)
	}
}

// From github.com/sourcegraph/conc@v0.3.0 pool/result_pool_test.go,
// ExampleResultPool. Adapted: Collect, whose values come in input order,
// so they are not sorted first.
func TestPeerConcExampleResultPool(t *testing.T) {
	got, err := pool.Collect(context.Background(), newPool(t, 0), seqN(10), func(_ context.Context, i int) (int, error) { return i * 2, nil })
	if err != nil || !slices.Equal(got, []int{0, 2, 4, 6, 8, 10, 12, 14, 16, 18}) {
		t.Fatalf("Collect = %v, %v", got, err)
	}
}

// From github.com/sourcegraph/conc@v0.3.0 pool/result_pool_test.go,
// TestResultGroup. Adapted: ResultPool is Collect, in input order (no
// sort); reconfiguration is Resize during or after a MapOrdered.
func TestPeerConcResultGroup(t *testing.T) {
	t.Run("panics on configuration after init", func(t *testing.T) { concReconfigure(t, concMapDuring) })
	t.Run("basic", func(t *testing.T) {
		got, err := pool.Collect(context.Background(), newPool(t, 0), seqN(100), func(_ context.Context, i int) (int, error) { return i, nil })
		if err != nil || !slices.Equal(got, slices.Collect(seqN(100))) {
			t.Fatalf("Collect = %v, %v", got, err)
		}
	})
	t.Run("limit", func(t *testing.T) { concEachLimit(t, concTimes10, concCollectLimit) })
}

// From github.com/sourcegraph/conc@v0.3.0 pool/result_error_pool_test.go,
// TestResultErrorGroup. Adapted: ResultErrorPool is Collect (first
// failure, values before it) or, where conc collects every error or the
// failed values, MapOrdered without FailFast. WithFirstError means the
// first failure in time in conc; Collect returns the first in input order
// (documented), Map with FailFast the first in time: both are asserted.
func TestPeerConcResultErrorGroup(t *testing.T) {
	t.Run("panics on configuration after init", func(t *testing.T) { concReconfigure(t, concMapDuring) })
	concResultErrorCases(t)
	t.Run("WithCollectErrored", concCollectErrored)
	t.Run("WithFirstError", func(t *testing.T) {
		p := newPool(t, 4)
		synchronizer := make(chan struct{})
		got, err := pool.Collect(context.Background(), p, concTasks(
			func(context.Context) (int, error) { <-synchronizer; return 0, errConc1 },
			func(context.Context) (int, error) { defer close(synchronizer); return 0, errConc2 },
		), concRun)
		if len(got) != 0 || !errors.Is(err, errConc1) || errors.Is(err, errConc2) {
			t.Fatalf("Collect = %v, %v; want no values and err1 (first in input order)", got, err)
		}
		// In completion order, the first error is err2: item 0 fails only
		// once FailFast canceled it, which comes after err2 is published.
		results := slices.Collect(pool.Map(context.Background(), p, concTasks(
			func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, errConc1 },
			concValue(0, errConc2),
		), concRun, pool.FailFast()))
		if err := concFirstErr(results); err != errConc2 {
			t.Fatalf("Map with FailFast: first error %v, want err2", err)
		}
	})
	t.Run("limit", func(t *testing.T) { concEachLimit(t, concTimes10, concCollectLimit) })
}

// From github.com/sourcegraph/conc@v0.3.0 pool/result_context_pool_test.go,
// TestResultContextPool. Adapted: ResultContextPool is Collect or
// MapOrdered with a context; WithCancelOnError is FailFast on Map (in
// completion order: MapOrdered, and so Collect, leaves the items before a
// failed one undisturbed, documented), and conc's joined error is the
// Results' errors: the failure first, then the Canceled it caused. A panic
// is a *PanicError Result. The item that failed waits until its siblings
// started, so that they are canceled rather than not started.
func TestPeerConcResultContextPool(t *testing.T) {
	t.Run("panics on configuration after init", func(t *testing.T) { concReconfigure(t, concMapDuring) })
	t.Run("behaves the same as ErrorGroup", concResultErrorCases)
	t.Run("context cancel propagates", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		got, err := pool.Collect(ctx, newPool(t, 1), concTasks(func(ctx context.Context) (int, error) {
			cancel()
			<-ctx.Done()
			return 0, ctx.Err()
		}), concRun)
		if len(got) != 0 || !errors.Is(err, context.Canceled) {
			t.Fatalf("Collect = %v, %v; want no values and context.Canceled", got, err)
		}
	})
	t.Run("WithCancelOnError", func(t *testing.T) {
		started := make(chan struct{})
		var cause error
		results := slices.Collect(pool.Map(context.Background(), newPool(t, 2), concTasks(
			func(ctx context.Context) (int, error) {
				close(started)
				<-ctx.Done()
				cause = context.Cause(ctx)
				return 0, ctx.Err()
			},
			func(context.Context) (int, error) { <-started; return 0, errConc1 },
		), concRun, pool.FailFast()))
		if len(results) != 2 || results[0].Err != errConc1 || !errors.Is(results[1].Err, context.Canceled) {
			t.Fatalf("results %+v, want err1, then context.Canceled", results)
		}
		if !errors.Is(cause, pool.ErrFailFast) || !errors.Is(cause, errConc1) {
			t.Fatalf("the sibling's cancel cause %v, want ErrFailFast and err1", cause)
		}
	})
	t.Run("WithCancelOnError and panic", func(t *testing.T) {
		var started sync.WaitGroup
		started.Add(2)
		var cancelledTasks atomic.Int64
		waiter := func(ctx context.Context) (int, error) {
			started.Done()
			<-ctx.Done()
			cancelledTasks.Add(1)
			return 0, ctx.Err()
		}
		results := slices.Collect(pool.Map(context.Background(), newPool(t, 3), concTasks(
			waiter, waiter, func(context.Context) (int, error) { started.Wait(); panic("abort!") },
		), concRun, pool.FailFast()))
		concWantPanic(t, concFirstErr(results), "abort!")
		if cancelledTasks.Load() != 2 {
			t.Fatalf("%d tasks saw the cancellation, want 2", cancelledTasks.Load())
		}
	})
	t.Run("no WithCancelOnError", func(t *testing.T) {
		// Without FailFast, the sibling carries on past the delivered
		// failure and finds its context live.
		seen := make(chan struct{})
		var ok []int
		var errs []error
		for r := range pool.Map(context.Background(), newPool(t, 2), concTasks(
			func(ctx context.Context) (int, error) { <-seen; return 0, ctx.Err() },
			concValue(0, errConc1),
		), concRun) {
			if r.Err != nil {
				errs = append(errs, r.Err)
				close(seen)
				continue
			}
			ok = append(ok, r.Value)
		}
		if err := errors.Join(errs...); len(ok) != 1 || !errors.Is(err, errConc1) || errors.Is(err, context.Canceled) {
			t.Fatalf("%d values, errors %v; want 1 value and err1 alone", len(ok), err)
		}
	})
	t.Run("WithCollectErrored", concCollectErrored)
	t.Run("WithFirstError", func(t *testing.T) {
		// Item 0 is first in input order, whenever item 1 fails: no sleep.
		firstDone := make(chan struct{})
		got, err := pool.Collect(context.Background(), newPool(t, 2), concTasks(
			func(context.Context) (int, error) { defer close(firstDone); return 0, errConc1 },
			func(context.Context) (int, error) { <-firstDone; return 0, errConc2 },
		), concRun)
		if len(got) != 0 || !errors.Is(err, errConc1) || errors.Is(err, errConc2) {
			t.Fatalf("Collect = %v, %v; want no values and err1 alone", got, err)
		}
	})
	t.Run("limit", func(t *testing.T) { concEachLimit(t, concTimes10, concCollectLimit) })
}

// From github.com/sourcegraph/conc@v0.3.0 stream/stream_test.go,
// ExampleStream: tasks that finish out of order have their callbacks run
// in submission order. Adapted: MapOrdered's loop body is the callback;
// instead of sleeping for its duration, each item waits for the one that
// would finish just before it.
func TestPeerConcExampleStream(t *testing.T) {
	times := []int{20, 52, 16, 45, 4, 80}
	byDuration := slices.Sorted(slices.Values(times))
	done := make(map[int]chan struct{}, len(times))
	for _, ms := range times {
		done[ms] = make(chan struct{})
	}
	var finished, printed []int
	within(t, 10*time.Second, "MapOrdered", func() {
		for r := range pool.MapOrdered(context.Background(), newPool(t, len(times)), slices.Values(times), func(_ context.Context, ms int) (int, error) {
			if k := slices.Index(byDuration, ms); k > 0 {
				<-done[byDuration[k-1]]
			}
			finished = append(finished, ms) // the chain serializes the appends
			close(done[ms])
			return ms, nil
		}) {
			printed = append(printed, r.Value)
		}
	})
	if !slices.Equal(finished, byDuration) || !slices.Equal(printed, times) {
		t.Fatalf("finished %v, callbacks %v; want %v and %v", finished, printed, byDuration, times)
	}
}

// From github.com/sourcegraph/conc@v0.3.0 stream/stream_test.go,
// TestStream. Adapted: a stream is MapOrdered and its callbacks the loop
// body. A task's panic is its Result's *PanicError (the loop goes on); a
// callback's panic propagates as itself, as in conc, after Map canceled
// and waited for the running items.
func TestPeerConcStream(t *testing.T) {
	t.Run("simple", func(t *testing.T) {
		var res []int
		for r := range pool.MapOrdered(context.Background(), newPool(t, 0), seqN(5), func(_ context.Context, i int) (int, error) { return i * 2, nil }) {
			res = append(res, r.Value)
		}
		if !slices.Equal(res, []int{0, 2, 4, 6, 8}) {
			t.Fatalf("callbacks saw %v", res)
		}
	})
	t.Run("max goroutines", func(t *testing.T) {
		l := concNewLimiter(5)
		var callbacks, maxCallbacks atomic.Int64
		within(t, 10*time.Second, "MapOrdered", func() {
			for r := range pool.MapOrdered(context.Background(), newPool(t, 5), seqN(50), func(_ context.Context, i int) (int, error) { return i, l.task() }) {
				maxCallbacks.Store(max(maxCallbacks.Load(), callbacks.Add(1)))
				if r.Err != nil {
					t.Error(r.Err)
				}
				callbacks.Add(-1)
			}
		})
		if maxCallbacks.Load() != 1 {
			t.Fatalf("%d callbacks ran at once, want 1", maxCallbacks.Load())
		}
	})
	t.Run("panic in task is propagated", func(t *testing.T) {
		results := slices.Collect(pool.MapOrdered(context.Background(), newPool(t, 5), seqN(1), func(context.Context, int) (int, error) {
			panic("something really bad happened in the task")
		}))
		concWantPanic(t, concFirstErr(results), "something really bad happened in the task")
	})
	for _, tasks := range []int{1, 101} {
		name := map[int]string{1: "panic in callback is propagated", 101: "panic in callback does not block producers"}[tasks]
		t.Run(name, func(t *testing.T) {
			p := newPool(t, 5)
			var v any
			within(t, 10*time.Second, "MapOrdered", func() {
				v = concRecover(func() {
					for r := range pool.MapOrdered(context.Background(), p, seqN(tasks), func(_ context.Context, i int) (int, error) { return i, nil }) {
						if r.Index == 0 {
							panic("something really bad happened in the callback")
						}
					}
				})
			})
			if v != "something really bad happened in the callback" {
				t.Fatalf("recovered %v", v)
			}
			if s := p.Stats(); s.Busy != 0 || s.Queued != 0 {
				t.Fatalf("tasks left behind by the panic: %+v", s)
			}
		})
	}
}

// concPointers yields a pointer to each element of s, the item conc's iter
// functions pass, so that fn may mutate the input.
func concPointers(s []int) iter.Seq[*int] {
	return func(yield func(*int) bool) {
		for i := range s {
			if !yield(&s[i]) {
				return
			}
		}
	}
}

// From github.com/sourcegraph/conc@v0.3.0 iter/iter_test.go,
// ExampleIterator: ForEach on two goroutines mutates its input. Adapted:
// Collect over pointers on a pool of 2.
func TestPeerConcExampleIterator(t *testing.T) {
	input := []int{1, 2, 3, 4}
	_, err := pool.Collect(context.Background(), newPool(t, len(input)/2), concPointers(input), func(_ context.Context, v *int) (struct{}, error) {
		if *v%2 != 0 {
			*v = -1
		}
		return struct{}{}, nil
	})
	if err != nil || !slices.Equal(input, []int{-1, 2, -1, 4}) {
		t.Fatalf("input %v, %v", input, err)
	}
}

// From github.com/sourcegraph/conc@v0.3.0 iter/iter_test.go, TestIterator.
// Adapted: an Iterator's MaxGoroutines is the pool's size, which a Map
// over fewer items leaves alone; conc's default (GOMAXPROCS) is the pool's
// default size, New(0).
func TestPeerConcIterator(t *testing.T) {
	t.Run("safe for reuse", func(t *testing.T) {
		p := newPool(t, 999)
		for r := range pool.Map(context.Background(), p, seqN(3), func(_ context.Context, i int) (int, error) { return i, nil }) {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
		if p.Size() != 999 {
			t.Fatalf("Size = %d after a Map of 3 items, want 999", p.Size())
		}
	})
	t.Run("allows more than defaultMaxGoroutines() concurrent tasks", func(t *testing.T) {
		wantConcurrency := 2 * newPool(t, 0).Size()
		maxConcurrencyHit := make(chan struct{})
		var concurrentTasks atomic.Int64
		within(t, 10*time.Second, "Collect", func() {
			_, err := pool.Collect(context.Background(), newPool(t, wantConcurrency), seqN(wantConcurrency), func(context.Context, int) (int, error) {
				n := concurrentTasks.Add(1)
				defer concurrentTasks.Add(-1)
				if int(n) == wantConcurrency {
					close(maxConcurrencyHit) // all run at once: release them
				} else {
					<-maxConcurrencyHit
				}
				return 0, nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	})
}

// concForEachCases are conc's TestForEachIdx and TestForEach subtests;
// forEach calls fn with each element's index (withIdx) or -1, and its
// pointer.
func concForEachCases(t *testing.T, withIdx bool, forEach func(p *pool.Pool, ints []int, fn func(i int, v *int)) error) {
	t.Helper()
	t.Run("empty", func(t *testing.T) {
		called := false
		if err := forEach(newPool(t, 0), []int{}, func(int, *int) { called = true }); err != nil || called {
			t.Fatalf("error %v, fn called: %v", err, called)
		}
	})
	t.Run("panic is propagated", func(t *testing.T) {
		concWantPanic(t, forEach(newPool(t, 0), []int{1}, func(int, *int) { panic("super bad thing happened") }), "super bad thing happened")
	})
	t.Run("mutating inputs is fine", func(t *testing.T) {
		ints := []int{1, 2, 3, 4, 5}
		if err := forEach(newPool(t, 0), ints, func(_ int, v *int) { *v++ }); err != nil || !slices.Equal(ints, []int{2, 3, 4, 5, 6}) {
			t.Fatalf("ints %v, %v", ints, err)
		}
	})
	t.Run("huge inputs", func(t *testing.T) {
		// ForEachIdx stores each index, ForEach (no index: -1) a 1.
		want := func(i int) int { return i }
		if !withIdx {
			want = func(int) int { return 1 }
		}
		ints := make([]int, 10000)
		if err := forEach(newPool(t, 0), ints, func(i int, v *int) { *v = want(max(i, 0)) }); err != nil {
			t.Fatal(err)
		}
		for i, v := range ints {
			if v != want(i) {
				t.Fatalf("ints[%d] = %d, want %d", i, v, want(i))
			}
		}
	})
}

// From github.com/sourcegraph/conc@v0.3.0 iter/iter_test.go,
// TestForEachIdx. Adapted: Map over the indices, in completion order; a
// panic is the item's *PanicError, not re-panicked.
func TestPeerConcForEachIdx(t *testing.T) {
	concForEachCases(t, true, func(p *pool.Pool, ints []int, fn func(int, *int)) error {
		var errs []error
		for r := range pool.Map(context.Background(), p, seqN(len(ints)), func(_ context.Context, i int) (int, error) {
			fn(i, &ints[i])
			return i, nil
		}) {
			errs = append(errs, r.Err)
		}
		return errors.Join(errs...)
	})
}

// From github.com/sourcegraph/conc@v0.3.0 iter/iter_test.go, TestForEach.
// Adapted: Collect over pointers; a panic is Collect's *PanicError, not
// re-panicked.
func TestPeerConcForEach(t *testing.T) {
	concForEachCases(t, false, func(p *pool.Pool, ints []int, fn func(int, *int)) error {
		_, err := pool.Collect(context.Background(), p, concPointers(ints), func(_ context.Context, v *int) (struct{}, error) {
			fn(-1, v)
			return struct{}{}, nil
		})
		return err
	})
}

// From github.com/sourcegraph/conc@v0.3.0 iter/map_test.go, ExampleMapper.
// Adapted: Collect on a pool of 2.
func TestPeerConcExampleMapper(t *testing.T) {
	input := []int{1, 2, 3, 4}
	got, err := pool.Collect(context.Background(), newPool(t, len(input)/2), slices.Values(input), func(_ context.Context, v int) (bool, error) { return v%2 == 0, nil })
	if err != nil || !slices.Equal(got, []bool{false, true, false, true}) {
		t.Fatalf("Collect = %v, %v", got, err)
	}
}

// concIncrement is the fn of conc's "basic increment": *v+1.
func concIncrement(_ context.Context, v *int) (int, error) { return *v + 1, nil }

// concMapCases are the subtests conc's TestMap and TestMapErr share, on
// Collect over pointers; a panic is Collect's *PanicError.
func concMapCases(t *testing.T) {
	t.Helper()
	t.Run("empty", func(t *testing.T) {
		got, err := pool.Collect(context.Background(), newPool(t, 0), concPointers(nil), func(context.Context, *int) (int, error) {
			panic("this should never be called")
		})
		if err != nil || len(got) != 0 {
			t.Fatalf("Collect = %v, %v", got, err)
		}
	})
	t.Run("panic is propagated", func(t *testing.T) {
		_, err := pool.Collect(context.Background(), newPool(t, 0), concPointers([]int{1}), func(context.Context, *int) (int, error) {
			panic("super bad thing happened")
		})
		concWantPanic(t, err, "super bad thing happened")
	})
	t.Run("mutating inputs is fine, though not recommended", func(t *testing.T) {
		ints := []int{1, 2, 3, 4, 5}
		got, err := pool.Collect(context.Background(), newPool(t, 0), concPointers(ints), func(_ context.Context, v *int) (int, error) {
			*v++
			return 0, nil
		})
		if err != nil || !slices.Equal(ints, []int{2, 3, 4, 5, 6}) || !slices.Equal(got, []int{0, 0, 0, 0, 0}) {
			t.Fatalf("ints %v, Collect = %v, %v", ints, got, err)
		}
	})
	t.Run("basic increment", func(t *testing.T) {
		ints := []int{1, 2, 3, 4, 5}
		got, err := pool.Collect(context.Background(), newPool(t, 0), concPointers(ints), concIncrement)
		if err != nil || !slices.Equal(got, []int{2, 3, 4, 5, 6}) || !slices.Equal(ints, []int{1, 2, 3, 4, 5}) {
			t.Fatalf("ints %v, Collect = %v, %v", ints, got, err)
		}
	})
	t.Run("huge inputs", func(t *testing.T) {
		got, err := pool.Collect(context.Background(), newPool(t, 0), concPointers(make([]int, 10000)), func(context.Context, *int) (int, error) { return 1, nil })
		if err != nil || len(got) != 10000 || slices.ContainsFunc(got, func(v int) bool { return v != 1 }) {
			t.Fatalf("Collect = %d values, %v; want 10000 ones", len(got), err)
		}
	})
}

// From github.com/sourcegraph/conc@v0.3.0 iter/map_test.go, TestMap.
// Adapted: Collect over pointers (see concMapCases).
func TestPeerConcMap(t *testing.T) { concMapCases(t) }

// From github.com/sourcegraph/conc@v0.3.0 iter/map_test.go, TestMapErr.
// Adapted: Collect over pointers (see concMapCases). conc returns every
// value and all errors joined: that is MapOrdered without FailFast
// (concMapAll); Collect returns the first failure in input order and the
// values before it (documented). Both are asserted.
func TestPeerConcMapErr(t *testing.T) {
	concMapCases(t)
	for _, tc := range []struct {
		name    string
		errorAt map[int]error
		all     []int
	}{
		{"error is propagated", map[int]error{3: errConc1}, []int{2, 3, 0, 5, 6}},
		{"multiple errors are propagated", map[int]error{3: errConc1, 4: errConc2}, []int{2, 3, 0, 0, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn := func(ctx context.Context, v *int) (int, error) {
				if err := tc.errorAt[*v]; err != nil {
					return 0, err
				}
				return concIncrement(ctx, v)
			}
			ints := []int{1, 2, 3, 4, 5}
			p := newPool(t, 0)
			all, _, err := concMapAll(context.Background(), p, concPointers(ints), fn)
			for _, want := range tc.errorAt {
				if !errors.Is(err, want) {
					t.Fatalf("MapOrdered errors %v, want %v among them", err, want)
				}
			}
			if !slices.Equal(all, tc.all) || !slices.Equal(ints, []int{1, 2, 3, 4, 5}) {
				t.Fatalf("MapOrdered values %v, ints %v; want %v, unchanged", all, ints, tc.all)
			}
			got, err := pool.Collect(context.Background(), p, concPointers(ints), fn)
			if !slices.Equal(got, []int{2, 3}) || !errors.Is(err, errConc1) || errors.Is(err, errConc2) {
				t.Fatalf("Collect = %v, %v; want [2 3] and err1 alone", got, err)
			}
		})
	}
}
