package pool_test

// Ports of github.com/alitto/pond/v2@v2.7.1's tests, continued from
// peers_pond_test.go: the rest of pool_test.go, group_test.go (groups ->
// Group, result groups -> Collect), task_test.go, result_test.go, default_test.go.

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/pool"
)

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestPoolSubmitWhileStoppingHasNoRace (author: github.com/korotin).
// Adapted: NewPool(0) (unlimited) -> New(0) (the default size); 10000
// submitters -> 1000 (the race detector's goroutine limit is 8128); the
// 500µs sleep before the stop -> a start barrier, with Close racing the
// submitters; added: every accepted task ran, and every refusal is
// ErrClosed.
func TestPeerPondPoolSubmitWhileStoppingHasNoRace(t *testing.T) {
	p := newPool(t, 0)
	start := make(chan struct{})
	var accepted, ran atomic.Int64
	waitSubmitted := pondGoEach(t, 1000, func(int) error {
		<-start
		err := p.Go(context.Background(), func(context.Context) error { ran.Add(1); return nil })
		if err == nil {
			accepted.Add(1)
		}
		if err == pool.ErrClosed {
			return nil
		}
		return err
	})
	close(start)
	closePool(t, p, "pool")
	waitSubmitted()
	if err := p.Wait(); err != nil || ran.Load() != accepted.Load() {
		t.Fatalf("Wait = %v; accepted %d tasks, ran %d", err, accepted.Load(), ran.Load())
	}
}

// pondTryGo is pond's TrySubmit scenario on a pool of one worker:
// TryGo takes the idle worker, fails while it is busy (ration's TryGo
// never queues; pond's first fills its queue of one), succeeds again once
// the worker is free (with a task returning secondErr), and fails after
// Close. The values the tasks produce come back, as from a result pool.
func pondTryGo(t *testing.T, secondErr error) {
	p := newPool(t, 1)
	var out [2]int
	release := make(chan struct{})
	if !p.TryGo(func(context.Context) error { <-release; out[0] = 42; return nil }) {
		t.Fatal("TryGo on an idle pool = false")
	}
	if p.TryGo(nop) {
		t.Fatal("TryGo with the only worker busy = true")
	}
	close(release)
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if !p.TryGo(func(context.Context) error { out[1] = 43; return secondErr }) {
		t.Fatal("TryGo once the worker is free again = false")
	}
	if err := p.Wait(); err != secondErr {
		t.Fatalf("Wait = %v, want %v", err, secondErr)
	}
	closePool(t, p, "pool")
	if p.TryGo(nop) {
		t.Fatal("TryGo on a closed pool = true")
	}
	failed := int64(0)
	if secondErr != nil {
		failed = 1
	}
	if s := p.Stats(); out != [2]int{42, 43} || s.Completed != 2 || s.Failed != failed {
		t.Fatalf("values %v, stats %+v; want [42 43], 2 completed, %d failed", out, s, failed)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go, TestPoolTrySubmit
// (and result_test.go, TestResultPoolTrySubmit). Adapted: see pondTryGo.
func TestPeerPondPoolTrySubmit(t *testing.T) { pondTryGo(t, nil) }

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go, TestPoolTrySubmitErr
// (and result_test.go, TestResultPoolTrySubmitErr). Adapted: see pondTryGo.
func TestPeerPondPoolTrySubmitErr(t *testing.T) { pondTryGo(t, errPondSample) }

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestStopAndWaitWithGoexit (pond's #135): a task calling
// runtime.Goexit must not make the stop hang. Adapted: StopAndWait ->
// Close; the task's error is ErrGoexit.
func TestPeerPondStopAndWaitWithGoexit(t *testing.T) {
	p := newPool(t, 10)
	pondGo(t, p, func(context.Context) error { runtime.Goexit(); return nil })
	closePool(t, p, "pool")
	if err := p.Wait(); err != pool.ErrGoexit {
		t.Fatalf("Wait = %v, want ErrGoexit", err)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestTaskInvokesGoexitAndPoolRecovers: after a Goexit kills the only
// worker, the next task still runs. Adapted: the Goexit task's error is
// ErrGoexit (pond reports ErrPoolStopped); the pool keeps its one worker.
func TestPeerPondTaskInvokesGoexitAndPoolRecovers(t *testing.T) {
	p := newPool(t, 1)
	var normalRan atomic.Bool
	pondGo(t, p, func(context.Context) error { runtime.Goexit(); return nil })
	pondGo(t, p, func(context.Context) error { normalRan.Store(true); return nil })
	within(t, 10*time.Second, "Wait after a Goexit", func() {
		if err := p.Wait(); err != pool.ErrGoexit {
			t.Errorf("Wait = %v, want ErrGoexit", err)
		}
	})
	if s := p.Stats(); !normalRan.Load() || s.Completed != 2 || s.Failed != 1 || s.Workers != 1 {
		t.Fatalf("normal task ran %v; stats %+v; want 2 completed, 1 failed, 1 worker", normalRan.Load(), s)
	}
	closePool(t, p, "pool")
	if s := p.Stats(); s.Workers != 0 {
		t.Fatalf("after Close: %+v", s)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 task_test.go,
// TestInvokeTaskHandlesPanicByDefault. Adapted: pond's internal invokeTask
// -> a task through Go.
func TestPeerPondInvokeTaskHandlesPanicByDefault(t *testing.T) {
	pondPanic(t, newPool(t, 1), errPondSample)
}

// From github.com/alitto/pond/v2@v2.7.1 result_test.go,
// TestResultPoolSubmitAndWait. Adapted: a result pool's task -> Collect.
func TestPeerPondResultPoolSubmitAndWait(t *testing.T) {
	out, err := pool.Collect(context.Background(), newPool(t, 1000), seqN(1), func(context.Context, int) (int, error) { return 5, nil })
	if err != nil || len(out) != 1 || out[0] != 5 {
		t.Fatalf("Collect = %v, %v; want [5]", out, err)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 result_test.go,
// TestResultPoolSubmitTaskWithPanic. Adapted: -> Collect, which returns
// the *PanicError and no value (pond: the zero value).
func TestPeerPondResultPoolSubmitTaskWithPanic(t *testing.T) {
	out, err := pool.Collect(context.Background(), newPool(t, 1000), seqN(1), func(context.Context, int) (int, error) { panic("dummy panic") })
	var pe *pool.PanicError
	if !errors.As(err, &pe) || pe.Value != "dummy panic" || len(out) != 0 || !strings.HasPrefix(err.Error(), "pool: task panicked: dummy panic") {
		t.Fatalf("Collect = %v, %v; want no value and a *PanicError", out, err)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 result_test.go,
// TestResultPoolMetrics. Adapted: SubmitErr on a result pool -> Map.
func TestPeerPondResultPoolMetrics(t *testing.T) {
	pondHalfFailMetrics(t, func(p *pool.Pool, n int, executed *atomic.Int64) {
		got, failed := 0, 0
		fn := func(_ context.Context, i int) (int, error) { return i, pondHalfFailing(executed, i) }
		for r := range pool.Map(context.Background(), p, seqN(n), fn) {
			got++
			if r.Err != nil {
				failed++
			} else if r.Value != r.Index {
				t.Errorf("result %+v", r)
			}
		}
		if got != n || failed != n/2 {
			t.Errorf("%d results, %d failed", got, failed)
		}
	})
}

// From github.com/alitto/pond/v2@v2.7.1 result_test.go,
// TestResultPoolSubmitContextCanceled: a task before the cancel succeeds,
// a task after it does not run. Adapted: the pool's context -> MapOrdered's
// ctx; the task that cancels keeps its own result (pond replaces it with
// context.Canceled); the item after it never starts (ErrNotStarted
// wrapping context.Canceled, if it was pulled at all) and StopErr reports
// the cancel.
func TestPeerPondResultPoolSubmitContextCanceled(t *testing.T) {
	p := newPool(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var thirdRan atomic.Bool
	fn := func(_ context.Context, i int) (int, error) {
		switch i {
		case 1:
			cancel()
			return 222, nil
		case 2:
			thirdRan.Store(true)
			return 333, nil
		}
		return 111, nil
	}
	var stop error
	var got []pool.Result[int, int]
	for r := range pool.MapOrdered(ctx, p, seqN(3), fn, pool.StopErr(&stop)) {
		got = append(got, r)
	}
	if len(got) < 2 || got[0].Value != 111 || got[0].Err != nil || got[1].Value != 222 || got[1].Err != nil {
		t.Fatalf("results %+v, want 111 and 222 without errors", got)
	}
	if len(got) == 3 && (!errors.Is(got[2].Err, pool.ErrNotStarted) || !errors.Is(got[2].Err, context.Canceled)) {
		t.Fatalf("third result %+v, want ErrNotStarted wrapping context.Canceled", got[2])
	}
	if s := p.Stats(); thirdRan.Load() || stop != context.Canceled || s.Completed != 2 || s.Failed != 0 || s.Busy != 0 {
		t.Fatalf("third ran %v, StopErr %v, stats %+v; want not run, context.Canceled, 2 completed", thirdRan.Load(), stop, s)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 default_test.go, TestSubmit.
// Adapted: pond's default pool -> New(0), the default size.
func TestPeerPondSubmit(t *testing.T) { pondSubmitAndWait(t, newPool(t, 0)) }

// From github.com/alitto/pond/v2@v2.7.1 default_test.go,
// TestSubmitWithError. Adapted: the default pool -> New(0).
func TestPeerPondSubmitWithError(t *testing.T) { pondSubmitErr(t, newPool(t, 0)) }

// From github.com/alitto/pond/v2@v2.7.1 default_test.go,
// TestSubmitWithPanic. Adapted: the default pool -> New(0); ErrPanic ->
// *PanicError.
func TestPeerPondSubmitWithPanic(t *testing.T) { pondPanic(t, newPool(t, 0), "dummy panic") }

// From github.com/alitto/pond/v2@v2.7.1 default_test.go, TestNewGroup.
// Adapted: the default pool's group -> New(0).Group.
func TestPeerPondNewGroup(t *testing.T) { pondGroupRunsAll(t, newPool(t, 0), 10) }

// pondGroupRunsAll submits n counting tasks through a new group of p and
// checks that Wait returns nil after all of them ran.
func pondGroupRunsAll(t *testing.T, p *pool.Pool, n int32) {
	t.Helper()
	g, _ := p.Group(context.Background())
	var done atomic.Int32
	for range n {
		g.Go(func(context.Context) error { done.Add(1); return nil })
	}
	if err := g.Wait(); err != nil || done.Load() != n {
		t.Fatalf("Wait = %v, %d done; want nil, %d", err, done.Load(), n)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 group_test.go,
// TestResultTaskGroupWait: a result group's outputs come in submission
// order. Adapted: result group -> Collect.
func TestPeerPondResultTaskGroupWait(t *testing.T) {
	out, err := pool.Collect(context.Background(), newPool(t, 10), seqN(5), func(_ context.Context, i int) (int, error) { return i, nil })
	if err != nil || !slices.Equal(out, []int{0, 1, 2, 3, 4}) {
		t.Fatalf("Collect = %v, %v; want [0 1 2 3 4]", out, err)
	}
}

// pondCollectFailing collects n items on a pool of size, item fail failing.
func pondCollectFailing(t *testing.T, size, n, fail int) ([]int, error) {
	return pool.Collect(context.Background(), newPool(t, size), seqN(n), func(_ context.Context, i int) (int, error) {
		if i == fail {
			return 0, errPondSample
		}
		return i + 1, nil
	})
}

// From github.com/alitto/pond/v2@v2.7.1 group_test.go,
// TestResultTaskGroupWaitWithError: the group's error is the failing
// task's. Adapted: -> Collect, which documents that the slice then holds
// only the values before the first failure (pond's holds zero values for
// the failed and the skipped tasks).
func TestPeerPondResultTaskGroupWaitWithError(t *testing.T) {
	out, err := pondCollectFailing(t, 1, 5, 3)
	if err != errPondSample || !slices.Equal(out, []int{1, 2, 3}) {
		t.Fatalf("Collect = %v, %v; want [1 2 3], the sample error", out, err)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 group_test.go,
// TestResultTaskGroupWaitWithErrorInLastTask. Adapted: -> Collect (see
// above); the sleep that let the first task finish first is not needed,
// Collect keeps input order.
func TestPeerPondResultTaskGroupWaitWithErrorInLastTask(t *testing.T) {
	out, err := pondCollectFailing(t, 10, 2, 1)
	if err != errPondSample || !slices.Equal(out, []int{1}) {
		t.Fatalf("Collect = %v, %v; want [1], the sample error", out, err)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 group_test.go,
// TestResultTaskGroupWaitWithMultipleErrors: five tasks all running at
// once, the even ones failing. Adapted: -> Collect, whose error is the
// first failure in input order (item 0's, so no values before it); every
// task's own output is recorded as pond's outputs are; the even tasks'
// sleep, which made them fail last, is not needed.
func TestPeerPondResultTaskGroupWaitWithMultipleErrors(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(5)
	outputs := make([]int, 5)
	out, err := pool.Collect(context.Background(), newPool(t, 10), seqN(5), func(_ context.Context, i int) (int, error) {
		wg.Done()
		wg.Wait() // every task has started
		if i%2 == 0 {
			return 0, errPondSample
		}
		outputs[i] = i
		return i, nil
	})
	if err != errPondSample || len(out) != 0 || !slices.Equal(outputs, []int{0, 1, 0, 3, 0}) {
		t.Fatalf("Collect = %v, %v, outputs %v; want [], the sample error, [0 1 0 3 0]", out, err, outputs)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 group_test.go,
// TestResultTaskGroupWaitWithContextCanceledAndOngoingTasks. Adapted: the
// group's context -> Collect's ctx; the task that cancels keeps its value
// (pond discards both), the other never starts, and the error wraps
// context.Canceled.
func TestPeerPondResultTaskGroupWaitWithContextCanceledAndOngoingTasks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var secondRan atomic.Bool
	out, err := pool.Collect(ctx, newPool(t, 1), seqN(2), func(_ context.Context, i int) (string, error) {
		if i == 0 {
			cancel()
			return "output1", nil
		}
		secondRan.Store(true)
		return "output2", nil
	})
	if !errors.Is(err, context.Canceled) || !slices.Equal(out, []string{"output1"}) || secondRan.Load() {
		t.Fatalf("Collect = %q, %v, second ran %v; want [output1], context.Canceled, not run", out, err, secondRan.Load())
	}
}

// From github.com/alitto/pond/v2@v2.7.1 group_test.go,
// TestTaskGroupWaitWithContextCanceledAndOngoingTasks. Adapted: ration's
// Group, like errgroup, reports only what its tasks return and what it
// could not submit, so the second task honours its context (pond cancels
// it); the sleeps are not needed, as the one worker runs the tasks in
// order.
func TestPeerPondTaskGroupWaitWithContextCanceledAndOngoingTasks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, _ := newPool(t, 1).Group(ctx)
	var executed atomic.Int32
	g.Go(func(context.Context) error { cancel(); executed.Add(1); return nil })
	g.Go(func(ctx context.Context) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		executed.Add(1)
		return nil
	})
	if err := g.Wait(); err != context.Canceled || executed.Load() != 1 {
		t.Fatalf("Wait = %v, %d executed; want context.Canceled, 1", err, executed.Load())
	}
}

// From github.com/alitto/pond/v2@v2.7.1 group_test.go,
// TestTaskGroupWaitShouldNotDeadlockWhenPoolContextCanceledWithQueuedTasks.
// Adapted: see pondCancelWithQueued; the pool's context -> the group's.
func TestPeerPondTaskGroupWaitShouldNotDeadlockWhenPoolContextCanceledWithQueuedTasks(t *testing.T) {
	p := newPool(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, _ := p.Group(ctx)
	pondCancelWithQueued(t, p, cancel, g.Go, g.Wait)
}

// From github.com/alitto/pond/v2@v2.7.1 group_test.go,
// TestTaskGroupWithStoppedPool. Adapted: ErrPoolStopped -> ErrClosed.
func TestPeerPondTaskGroupWithStoppedPool(t *testing.T) {
	p := newPool(t, 100)
	closePool(t, p, "pool")
	g, _ := p.Group(context.Background())
	g.Go(nop)
	if err := g.Wait(); err != pool.ErrClosed {
		t.Fatalf("Wait = %v, want ErrClosed", err)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 group_test.go,
// TestTaskGroupWithContextCanceled: a running task that watches a context
// returns its error when it is canceled. Adapted: the context is the
// group's parent, so the task watches its own context, derived from it
// (instead of a 100ms timeout against a captured one).
func TestPeerPondTaskGroupWithContextCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, _ := newPool(t, 100).Group(ctx)
	taskStarted := make(chan struct{})
	g.Go(func(ctx context.Context) error { close(taskStarted); <-ctx.Done(); return ctx.Err() })
	<-taskStarted
	cancel()
	if err := g.Wait(); err != context.Canceled {
		t.Fatalf("Wait = %v, want context.Canceled", err)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 group_test.go,
// TestTaskGroupWithNoTasks. Adapted: an empty result group -> Collect of
// an empty input; an empty Group waits for nothing.
func TestPeerPondTaskGroupWithNoTasks(t *testing.T) {
	p := newPool(t, 10)
	out, err := pool.Collect(context.Background(), p, seqN(0), func(_ context.Context, i int) (int, error) { return i, nil })
	if err != nil || len(out) != 0 {
		t.Fatalf("Collect of nothing = %v, %v", out, err)
	}
	g, _ := p.Group(context.Background())
	if err := g.Wait(); err != nil {
		t.Fatalf("Wait of an empty group = %v", err)
	}
}

// pondThreeOnOneWorker is the scenario of pond's group-stop tests on a pool of
// one worker: the first task counts, the second runs middle (which stops
// the group), the third counts only while the group's context is live.
// The three are accepted before the first runs, so the third is always
// queued when the group stops: ration runs it with its context done (as
// errgroup would; pond skips it), and it returns the stop's cause.
func pondThreeOnOneWorker(t *testing.T, ctx context.Context, middle func(executed *atomic.Int32) error) (int32, error) {
	g, _ := newPool(t, 1).Group(ctx)
	var executed atomic.Int32
	submitted := make(chan struct{})
	g.Go(func(context.Context) error { <-submitted; executed.Add(1); return nil })
	g.Go(func(context.Context) error { return middle(&executed) })
	g.Go(func(ctx context.Context) error {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		executed.Add(1)
		return nil
	})
	close(submitted)
	err := g.Wait()
	return executed.Load(), err
}

// From github.com/alitto/pond/v2@v2.7.1 group_test.go,
// TestTaskGroupCanceledShouldSkipRemainingTasks. Adapted: see
// pondThreeOnOneWorker; the second task's sleep is not needed.
func TestPeerPondTaskGroupCanceledShouldSkipRemainingTasks(t *testing.T) {
	executed, err := pondThreeOnOneWorker(t, context.Background(), func(*atomic.Int32) error { return errPondSample })
	if err != errPondSample || executed != 1 {
		t.Fatalf("Wait = %v, %d executed; want the sample error, 1", err, executed)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 group_test.go,
// TestTaskGroupWithCustomContext. Adapted: see pondThreeOnOneWorker;
// group.Done() -> Wait having returned.
func TestPeerPondTaskGroupWithCustomContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	executed, err := pondThreeOnOneWorker(t, ctx, func(executed *atomic.Int32) error { executed.Add(1); cancel(); return nil })
	if err != context.Canceled || executed != 2 {
		t.Fatalf("Wait = %v, %d executed; want context.Canceled, 2", err, executed)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 group_test.go, TestTaskGroupStop.
// Adapted: ration's Group has no Stop; stopping a request is canceling
// the group's parent context, with a cause (ErrGroupStopped -> errStop),
// which the group's context carries; see pondThreeOnOneWorker.
func TestPeerPondTaskGroupStop(t *testing.T) {
	errStop := errors.New("group stopped")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	executed, err := pondThreeOnOneWorker(t, ctx, func(executed *atomic.Int32) error { executed.Add(1); cancel(errStop); return nil })
	if err != errStop || executed != 2 {
		t.Fatalf("Wait = %v, %d executed; want the stop's cause, 2", err, executed)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 group_test.go, TestTaskGroupDone.
// Adapted: <-group.Done() -> Wait; the tasks' sleep is not needed.
func TestPeerPondTaskGroupDone(t *testing.T) { pondGroupRunsAll(t, newPool(t, 10), 5) }

// From github.com/alitto/pond/v2@v2.7.1 group_test.go,
// TestTaskGroupMetrics: nine tasks succeed and the last fails. Adapted:
// SubmittedTasks/SuccessfulTasks -> Completed minus Failed; the sleeps
// (before the metrics, "to settle") are gone: Stats are final when Wait
// returns.
func TestPeerPondTaskGroupMetrics(t *testing.T) {
	p := newPool(t, 1)
	g, _ := p.Group(context.Background())
	for range 9 {
		g.Go(nop)
	}
	g.Go(func(context.Context) error { return errPondSample })
	if err := g.Wait(); err != errPondSample {
		t.Fatalf("Wait = %v, want the sample error", err)
	}
	if s := p.Stats(); s.Completed != 10 || s.Failed != 1 {
		t.Fatalf("stats = %+v, want 10 completed, 1 failed", s)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 group_test.go,
// TestTaskGroupMetricsWithCancelledContext: the fifth of ten tasks cancels
// the group's context; five succeed, the rest are canceled. Adapted: a
// task after the cancel either was never accepted (Go records the cause)
// or runs with its context done and returns its error, so Completed minus
// Failed is the five; the sleeps are not needed, one worker runs the tasks
// in order.
func TestPeerPondTaskGroupMetricsWithCancelledContext(t *testing.T) {
	p := newPool(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, _ := p.Group(ctx)
	for i := range 10 {
		g.Go(func(ctx context.Context) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if i == 4 {
				cancel()
			}
			return nil
		})
	}
	if err := g.Wait(); err != context.Canceled {
		t.Fatalf("Wait = %v, want context.Canceled", err)
	}
	if s := p.Stats(); s.Completed-s.Failed != 5 || s.Completed > 10 {
		t.Fatalf("stats = %+v, want 5 successful tasks", s)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 group_test.go,
// TestTaskGroupWaitingTasks: of 20 tasks on 10 workers, 10 run and 10
// wait. Adapted: the queue holds QueueSlack, so each task is submitted
// from its own goroutine and the blocked submitters count as waiting.
func TestPeerPondTaskGroupWaitingTasks(t *testing.T) {
	p := newPool(t, 10)
	g, _ := p.Group(context.Background())
	start, end := make(chan struct{}), make(chan struct{})
	waitSubmitted := pondGoEach(t, 20, func(int) error {
		g.Go(func(context.Context) error { <-start; <-end; return nil })
		return nil
	})
	for range 10 {
		start <- struct{}{}
	}
	pondWaitStats(t, p, "10 running, 10 waiting", func(s pool.Stats) bool {
		return s.Busy == 10 && s.Waiting == 10 && s.Queued == pool.QueueSlack
	})
	close(start)
	close(end)
	waitSubmitted()
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 group_test.go,
// TestTaskGroupContext: the first task's error cancels the group's
// context, which the second task sees, and Wait returns the first error,
// not the second's. Adapted: group.Context() -> the context Group returns
// (and its tasks get); pond's CanceledTasks: the third task, if the pool
// accepted it before the failure, runs with its context done and returns
// its error, so every completed task failed.
func TestPeerPondTaskGroupContext(t *testing.T) {
	p := newPool(t, 2)
	g, gctx := p.Group(context.Background())
	firstErr := errors.New("first task error")
	var tasksRunning sync.WaitGroup
	tasksRunning.Add(2)
	g.Go(func(context.Context) error {
		tasksRunning.Done()
		tasksRunning.Wait()
		return firstErr
	})
	g.Go(func(ctx context.Context) error {
		tasksRunning.Done()
		tasksRunning.Wait()
		<-ctx.Done()
		return errors.New("second task canceled")
	})
	g.Go(func(ctx context.Context) error { return ctx.Err() })
	if err := g.Wait(); err != firstErr {
		t.Fatalf("Wait = %v, want the first task's error", err)
	}
	if gctx.Err() == nil || context.Cause(gctx) != firstErr {
		t.Fatalf("group context: err %v, cause %v; want done, the first error", gctx.Err(), context.Cause(gctx))
	}
	closePool(t, p, "pool")
	if s := p.Stats(); s.Completed < 2 || s.Completed != s.Failed {
		t.Fatalf("stats = %+v, want 2 or 3 completed, all failed", s)
	}
}
