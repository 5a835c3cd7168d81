package pool_test

// Ports of github.com/alitto/pond/v2@v2.7.1's pool_test.go (continued, with
// pond's other test files, in peers_pond_groups_test.go) to ration's API, so
// that what pond's suite checks stays checked. NewPool(n) -> New(n), whose
// queue is QueueSlack long unless set with Queue (the ports of pond's
// queue-size tests run with both, see eachQueue); Submit + StopAndWait ->
// Go + Wait / Close; TrySubmit -> TryGo; RunningWorkers, WaitingTasks... -> Stats; a pool's
// context -> Go's ctx.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/pool"
)

var errPondSample = errors.New("sample error")

// pondGo submits task with context.Background and fails the test if the
// pool refuses it.
func pondGo(t *testing.T, p *pool.Pool, task func(context.Context) error) {
	t.Helper()
	if err := p.Go(context.Background(), task); err != nil {
		t.Fatalf("Go: %v", err)
	}
}

// pondWaitStats polls p's statistics until cond holds, like pond's
// waitForMetrics: the state must come, so the limit is only a hang guard.
func pondWaitStats(t *testing.T, p *pool.Pool, what string, cond func(pool.Stats) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s := p.Stats(); !cond(s); s = p.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within 10s (hang guard); stats %+v", what, s)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// pondOccupy runs n tasks (n <= p's size) that hold their workers until
// release is called, and returns once all of them have started.
func pondOccupy(t *testing.T, p *pool.Pool, n int) (release func()) {
	t.Helper()
	gate := make(chan struct{})
	started := make(chan struct{}, n)
	for range n {
		pondGo(t, p, func(context.Context) error { started <- struct{}{}; <-gate; return nil })
	}
	within(t, 10*time.Second, "the occupying tasks start", func() {
		for range n {
			<-started
		}
	})
	release = sync.OnceFunc(func() { close(gate) })
	t.Cleanup(release)
	return release
}

// eachQueue runs a port twice: on pools with the default queue
// (QueueSlack), to which it was adapted, and with the queue length the
// peer's own test uses (pond's WithQueueSize; 0 for ants' pool, which has
// no queue), with which it runs as the peer wrote it. queue is the pool's
// queue length and opt the option that sets it (nil for the default).
func eachQueue(t *testing.T, peer int, port func(t *testing.T, queue int, opt pool.Option)) {
	t.Run("QueueSlack", func(t *testing.T) { port(t, pool.QueueSlack, nil) })
	t.Run(fmt.Sprintf("Queue(%d)", peer), func(t *testing.T) { port(t, peer, pool.Queue(peer)) })
}

// pondSaturate occupies every worker of p (of the given size) and fills its
// queue of the given length, so that the next Go blocks.
func pondSaturate(t *testing.T, p *pool.Pool, size, queue int) (release func()) {
	t.Helper()
	release = pondOccupy(t, p, size)
	for range queue {
		pondGo(t, p, nop)
	}
	if s := p.Stats(); s.Busy != size || s.Queued != queue || s.Waiting != queue {
		t.Fatalf("saturated pool: %+v, want %d busy and a full queue", s, size)
	}
	return release
}

func pondSubmitAndWait(t *testing.T, p *pool.Pool) {
	done := make(chan int, 1)
	pondGo(t, p, func(context.Context) error { done <- 10; return nil })
	if err := p.Wait(); err != nil || len(done) != 1 || <-done != 10 {
		t.Fatalf("Wait = %v before the task sent 10", err)
	}
}

func pondSubmitErr(t *testing.T, p *pool.Pool) {
	pondGo(t, p, func(context.Context) error { return errors.New("sample error") })
	if err := p.Wait(); err == nil || err.Error() != "sample error" {
		t.Fatalf("Wait = %v, want the task's error", err)
	}
}

// pondPanic: a panic comes back from Wait as a *PanicError that carries
// the value (and, for an error, unwraps to it) and the stack (pond wraps
// ErrPanic and the value instead).
func pondPanic(t *testing.T, p *pool.Pool, v any) {
	t.Helper()
	pondGo(t, p, func(context.Context) error { panic(v) })
	err := p.Wait()
	var pe *pool.PanicError
	if !errors.As(err, &pe) || pe.Value != v {
		t.Fatalf("Wait = %v, want a *PanicError with %v", err, v)
	}
	if e, ok := v.(error); ok && !errors.Is(err, e) {
		t.Fatalf("errors.Is(%v, %v) = false", err, e)
	}
	re := regexp.MustCompile(`^pool: task panicked: ` + regexp.QuoteMeta(fmt.Sprint(v)) +
		`\n\ngoroutine \d+ \[running\]:\n\s*runtime/debug\.Stack\(\)`)
	if !re.MatchString(err.Error()) {
		t.Fatalf("error text %q does not match %v", err.Error(), re)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go, TestPoolSubmit:
// every submitted task runs before the pool's stop returns. Adapted:
// Stop().Wait() -> Close; the tasks' 1ms sleep, only there to keep the
// workers busy, is a yield.
func TestPeerPondPoolSubmit(t *testing.T) {
	p := newPool(t, 100)
	var executed atomic.Int64
	for range 1000 {
		pondGo(t, p, func(context.Context) error { runtime.Gosched(); executed.Add(1); return nil })
	}
	closePool(t, p, "pool")
	if executed.Load() != 1000 {
		t.Fatalf("executed %d tasks, want 1000", executed.Load())
	}
}

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestPoolSubmitAndWait. Adapted: task.Wait -> Pool.Wait.
func TestPeerPondPoolSubmitAndWait(t *testing.T) { pondSubmitAndWait(t, newPool(t, 100)) }

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestPoolSubmitWithPanic. Adapted: pond's ErrPanic wrapping ->
// *PanicError, whose text also starts with the value and the stack.
func TestPeerPondPoolSubmitWithPanic(t *testing.T) { pondPanic(t, newPool(t, 100), errPondSample) }

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestPoolDefaultHasPanicRecoveryEnabled. Adapted: pond inspects an
// internal flag; ration always recovers, so this checks the behaviour: the
// only worker survives a panic (no replacement goroutine) and runs the
// next task.
func TestPeerPondPoolDefaultHasPanicRecoveryEnabled(t *testing.T) {
	p := newPool(t, 1)
	pondPanic(t, p, "boom")
	ran := false
	pondGo(t, p, func(context.Context) error { ran = true; return nil })
	err := p.Wait()
	if s := p.Stats(); err != nil || !ran || s.Panics != 1 || s.Goroutines != 1 || s.Failed != 1 || s.Completed != 2 {
		t.Fatalf("after a panic: Wait = %v, ran %v, stats %+v; want one panic, one surviving worker", err, ran, s)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go, TestPoolSubmitWithErr.
func TestPeerPondPoolSubmitWithErr(t *testing.T) { pondSubmitErr(t, newPool(t, 100)) }

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestPoolWithContextCanceled: canceling the context stops the submission
// of the rest of 10000 tasks. Adapted: the pool's context -> the ctx of
// Go; pond queues all 10000 at once, while ration's Go blocks once the 10
// workers and the queue are full (backpressure), which Stats shows; the
// tasks wait for their context instead of sleeping, so which ones ran does
// not depend on timing.
func TestPeerPondPoolWithContextCanceled(t *testing.T) {
	p := newPool(t, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const taskCount = 10000
	var accepted, executed atomic.Int64
	submitErr := make(chan error, 1)
	go func() {
		for range taskCount {
			err := p.Go(ctx, func(ctx context.Context) error { <-ctx.Done(); executed.Add(1); return ctx.Err() })
			if err != nil {
				submitErr <- err
				return
			}
			accepted.Add(1)
		}
		submitErr <- nil
	}()
	pondWaitStats(t, p, "10 running, a full queue and the submitter blocked", func(s pool.Stats) bool {
		return s.Busy == 10 && s.Queued == pool.QueueSlack && s.Waiting == pool.QueueSlack+1
	})
	cancel()
	if err := <-submitErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("blocked Go after cancel = %v, want context.Canceled", err)
	}
	closePool(t, p, "pool")
	if n := accepted.Load(); n != 10+pool.QueueSlack || executed.Load() != n {
		t.Fatalf("accepted %d, executed %d; want %d each", n, executed.Load(), 10+pool.QueueSlack)
	}
	if s, err := p.Stats(), p.Wait(); s.Workers != 0 || s.Busy != 0 || s.Waiting != 0 || err != context.Canceled {
		t.Fatalf("after Close: %+v, Wait = %v (want the tasks' context.Canceled)", s, err)
	}
}

// pondCancelWithQueued is pond's "context canceled while a task is queued"
// scenario on a pool of one worker: the first task holds the worker, the
// second is queued, the context is canceled, the first is released, and
// wait must return. ration runs the queued task, which it had accepted,
// with its context done (pond cancels it instead); both tasks honour their
// context, so both report context.Canceled.
func pondCancelWithQueued(t *testing.T, p *pool.Pool, cancel context.CancelFunc, submit func(func(context.Context) error), wait func() error) {
	t.Helper()
	firstStarted, releaseFirst := make(chan struct{}), make(chan struct{})
	var secondSawDone atomic.Bool
	submit(func(ctx context.Context) error { close(firstStarted); <-releaseFirst; return ctx.Err() })
	submit(func(ctx context.Context) error { secondSawDone.Store(ctx.Err() != nil); return ctx.Err() })
	<-firstStarted
	if s := p.Stats(); s.Busy != 1 || s.Queued != 1 {
		t.Fatalf("stats = %+v, want one task running and one queued", s)
	}
	cancel()
	close(releaseFirst)
	var err error
	within(t, 10*time.Second, "wait after the cancel with a queued task", func() { err = wait() })
	if s := p.Stats(); err != context.Canceled || !secondSawDone.Load() || s.Completed != 2 || s.Failed != 2 || s.Waiting != 0 || s.Busy != 0 {
		t.Fatalf("wait = %v, queued task saw its context done: %v, stats %+v; want context.Canceled, true, 2 completed and failed",
			err, secondSawDone.Load(), s)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestPoolStopAndWaitShouldNotDeadlockWhenContextCanceledWithQueuedTasks.
// Adapted: see pondCancelWithQueued; the pool's context -> Go's ctx;
// StopAndWait -> Wait, then Close.
func TestPeerPondPoolStopAndWaitShouldNotDeadlockWhenContextCanceledWithQueuedTasks(t *testing.T) {
	p := newPool(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pondCancelWithQueued(t, p, cancel, func(task func(context.Context) error) {
		if err := p.Go(ctx, task); err != nil {
			t.Fatalf("Go: %v", err)
		}
	}, p.Wait)
	closePool(t, p, "pool")
	if s := p.Stats(); s.Workers != 0 {
		t.Fatalf("after Close: %+v", s)
	}
}

// pondHalfFailing is the task of pond's metrics tests: odd ones fail.
func pondHalfFailing(executed *atomic.Int64, i int) error {
	if executed.Add(1); i%2 == 0 {
		return nil
	}
	return errPondSample
}

// pondHalfFailMetrics runs pond's metrics scenario (10000 tasks, half of
// them failing) through run and checks the counters before and after.
func pondHalfFailMetrics(t *testing.T, run func(p *pool.Pool, n int, executed *atomic.Int64)) {
	const taskCount = 10000
	p := newPool(t, 100)
	if s := p.Stats(); s.Busy != 0 || s.Goroutines != 0 || s.Completed != 0 || s.Failed != 0 || s.Waiting != 0 {
		t.Fatalf("new pool: %+v", s)
	}
	var executed atomic.Int64
	run(p, taskCount, &executed)
	closePool(t, p, "pool")
	s := p.Stats()
	if executed.Load() != taskCount || s.Completed != taskCount || s.Failed != taskCount/2 || s.Busy != 0 || s.Workers != 0 {
		t.Fatalf("executed %d; stats %+v; want %d completed, %d failed", executed.Load(), s, taskCount, taskCount/2)
	}
}

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go, TestPoolMetrics.
// Adapted: SubmittedTasks/SuccessfulTasks -> Completed minus Failed;
// RunningWorkers -> Busy and Workers; DroppedTasks has no counterpart.
func TestPeerPondPoolMetrics(t *testing.T) {
	pondHalfFailMetrics(t, func(p *pool.Pool, n int, executed *atomic.Int64) {
		for i := range n {
			pondGo(t, p, func(context.Context) error { return pondHalfFailing(executed, i) })
		}
		if err := p.Wait(); err != errPondSample {
			t.Errorf("Wait = %v, want the sample error", err)
		}
	})
}

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestPoolSubmitOnStoppedPool. Adapted: ErrPoolStopped -> ErrClosed;
// TryGo fails too; pond's Stopped() has no counterpart.
func TestPeerPondPoolSubmitOnStoppedPool(t *testing.T) {
	p := newPool(t, 100)
	pondGo(t, p, nop)
	closePool(t, p, "pool")
	if err := p.Go(context.Background(), nop); err != pool.ErrClosed {
		t.Fatalf("Go after Close = %v, want ErrClosed", err)
	}
	if p.TryGo(nop) {
		t.Fatal("TryGo after Close = true")
	}
}

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestNewPoolWithInvalidMaxConcurrency. Adapted: pond panics on -1; ration
// documents that a size <= 0 means the default job count (limits).
func TestPeerPondNewPoolWithInvalidMaxConcurrency(t *testing.T) {
	neg, def := newPool(t, -1), newPool(t, 0)
	if neg.Size() < 1 || neg.Size() != def.Size() {
		t.Fatalf("New(-1).Size() = %d, New(0).Size() = %d; want the same default", neg.Size(), def.Size())
	}
}

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestPoolStoppedAfterCancel. Adapted: pond's pool stops when its context
// is canceled; ration's context is Go's, so a canceled ctx refuses the
// submission (context.Canceled, the task does not run) while the pool
// stays open, and only Close makes it refuse with ErrClosed. The task's
// context derives from Go's, so the cancel reaches the running task.
func TestPeerPondPoolStoppedAfterCancel(t *testing.T) {
	p := newPool(t, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := p.Go(ctx, func(ctx context.Context) error { cancel(); return ctx.Err() }); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != context.Canceled {
		t.Fatalf("Wait = %v, want the task's context.Canceled", err)
	}
	var ran atomic.Bool
	mark := func(context.Context) error { ran.Store(true); return nil }
	if err := p.Go(ctx, mark); err != context.Canceled {
		t.Fatalf("Go with a canceled ctx = %v, want context.Canceled", err)
	}
	closePool(t, p, "pool")
	if err := p.Go(ctx, mark); err != pool.ErrClosed && err != context.Canceled {
		t.Fatalf("Go with a canceled ctx on a closed pool = %v", err)
	}
	if err := p.Go(context.Background(), mark); err != pool.ErrClosed || ran.Load() {
		t.Fatalf("Go on a closed pool = %v, refused tasks ran: %v; want ErrClosed, false", err, ran.Load())
	}
}

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestPoolWithQueueSize: 50 tasks through one worker and a bounded queue
// all complete. Adapted: WithQueueSize(10) -> Queue(10), and the default
// QueueSlack (Go blocks, not fails, when it is full); added: they never
// overlap.
func TestPeerPondPoolWithQueueSize(t *testing.T) {
	eachQueue(t, 10, func(t *testing.T, queue int, opt pool.Option) {
		p := newPool(t, 1, opt)
		var running, overlaps atomic.Int64
		for range 50 {
			pondGo(t, p, func(context.Context) error {
				if running.Add(1) > 1 {
					overlaps.Add(1)
				}
				running.Add(-1)
				return nil
			})
		}
		closePool(t, p, "pool")
		if s := p.Stats(); s.Completed != 50 || overlaps.Load() != 0 {
			t.Fatalf("stats %+v, %d overlapping tasks on one worker", s, overlaps.Load())
		}
	})
}

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestPoolWithQueueSizeAndNonBlocking: with every worker busy and the
// queue full, a submission that must not wait is dropped. Adapted:
// WithNonBlocking -> TryGo (which never queues) and Go with a context that
// is canceled while it waits; ErrQueueFull -> false / ctx.Err(); pond's
// DroppedTasks has no counterpart; WithQueueSize(10) -> Queue(10), and the
// default queue.
func TestPeerPondPoolWithQueueSizeAndNonBlocking(t *testing.T) {
	eachQueue(t, 10, func(t *testing.T, queue int, opt pool.Option) {
		p := newPool(t, 10, opt)
		release := pondSaturate(t, p, 10, queue)
		var ran atomic.Bool
		mark := func(context.Context) error { ran.Store(true); return nil }
		if p.TryGo(mark) {
			t.Fatal("TryGo with every worker busy = true")
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		errc := make(chan error, 1)
		go func() { errc <- p.Go(ctx, mark) }()
		pondWaitStats(t, p, "the extra submitter blocks", func(s pool.Stats) bool { return s.Waiting == queue+1 })
		cancel()
		if err := <-errc; err != context.Canceled {
			t.Fatalf("blocked Go after cancel = %v, want context.Canceled", err)
		}
		release()
		err := p.Wait()
		if s := p.Stats(); err != nil || ran.Load() || s.Completed != int64(10+queue) {
			t.Fatalf("Wait = %v, dropped task ran %v, stats %+v", err, ran.Load(), s)
		}
	})
}

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestPoolWithQueueSizeZero: a submission blocks while the worker is busy
// and the queue has no room, TryGo fails meanwhile, and the blocked task
// runs once the worker is free. Adapted: WithQueueSize(0) -> Queue(0); on
// the default queue, QueueSlack long, the queue is filled first; the 10ms sleep is a wait for Stats to show the
// blocked submitter.
func TestPeerPondPoolWithQueueSizeZero(t *testing.T) {
	eachQueue(t, 0, func(t *testing.T, queue int, opt pool.Option) {
		p := newPool(t, 1, opt)
		release := pondSaturate(t, p, 1, queue)
		var secondRan atomic.Bool
		secondGo := make(chan error, 1)
		go func() {
			secondGo <- p.Go(context.Background(), func(context.Context) error { secondRan.Store(true); return nil })
		}()
		pondWaitStats(t, p, "the second submitter blocks", func(s pool.Stats) bool { return s.Waiting == queue+1 })
		select {
		case err := <-secondGo:
			t.Fatalf("Go returned %v with the worker busy and the queue full; want it to block", err)
		default:
		}
		if p.TryGo(nop) {
			t.Fatal("TryGo with the worker busy = true")
		}
		release()
		if err := <-secondGo; err != nil {
			t.Fatalf("blocked Go = %v", err)
		}
		err := p.Wait()
		if s := p.Stats(); err != nil || !secondRan.Load() || s.Completed != int64(2+queue) || s.Failed != 0 || s.Waiting != 0 {
			t.Fatalf("Wait = %v, second ran %v, stats %+v", err, secondRan.Load(), s)
		}
	})
}

// pondGoEach submits each task from a goroutine of its own, as many blocked
// submitters; the returned function waits for all the Go calls.
func pondGoEach(t *testing.T, n int, submit func(i int) error) (waitSubmitted func()) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := submit(i); err != nil {
				t.Errorf("submit %d: %v", i, err)
			}
		})
	}
	return wg.Wait
}

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go, TestPoolResize:
// growing and shrinking change how many of 10 tasks run at once.
// Adapted: 10 tasks submitted at once exceed the queue, so each comes from
// its own goroutine and the blocked ones count as waiting, as pond's
// queued ones do; running tasks are also counted inside the tasks.
func TestPeerPondPoolResize(t *testing.T) {
	p := newPool(t, 1)
	taskStarted, taskWait := make(chan struct{}, 10), make(chan struct{}, 10)
	var inside atomic.Int64
	waitSubmitted := pondGoEach(t, 10, func(int) error {
		return p.Go(context.Background(), func(context.Context) error {
			inside.Add(1)
			defer inside.Add(-1)
			<-taskStarted
			<-taskWait
			return nil
		})
	})
	expect := func(waiting, running int) {
		t.Helper()
		pondWaitStats(t, p, fmt.Sprintf("%d running, %d waiting", running, waiting), func(s pool.Stats) bool {
			return s.Waiting == waiting && s.Busy == running && inside.Load() == int64(running)
		})
	}
	resize := func(n int) {
		if p.Resize(n); p.Size() != n {
			t.Fatalf("Size = %d after Resize(%d)", p.Size(), n)
		}
	}
	for range 3 {
		taskStarted <- struct{}{}
	}
	expect(9, 1)
	resize(3)
	for range 3 {
		taskStarted <- struct{}{}
	}
	expect(7, 3)
	resize(2)
	for range 3 {
		taskWait <- struct{}{}
	}
	for range 4 {
		taskStarted <- struct{}{}
	}
	expect(5, 2)
	close(taskWait)
	waitSubmitted()
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
}

func pondResizeClamp(t *testing.T, n int) {
	p := newPool(t, 10)
	p.Resize(n)
	if p.Size() != 1 {
		t.Fatalf("Size after Resize(%d) = %d, want 1", n, p.Size())
	}
	pondSubmitAndWait(t, p)
}

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestPoolResizeWithZeroMaxConcurrency. Adapted: pond's 0 means unlimited;
// ration documents that sizes below 1 mean 1.
func TestPeerPondPoolResizeWithZeroMaxConcurrency(t *testing.T) { pondResizeClamp(t, 0) }

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestPoolResizeWithNegativeMaxConcurrency. Adapted: pond panics; ration
// documents that sizes below 1 mean 1.
func TestPeerPondPoolResizeWithNegativeMaxConcurrency(t *testing.T) { pondResizeClamp(t, -1) }

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestPoolWithQueueSizeOne: with one worker, queued tasks run in
// submission order, and two submitters blocked on the full queue both get
// in once it drains. Adapted: WithQueueSize(1) -> Queue(1), and the
// default queue of QueueSlack tasks; the
// sleeps are waits for Stats to show both submitters blocked, and for
// their Go calls to return.
func TestPeerPondPoolWithQueueSizeOne(t *testing.T) {
	eachQueue(t, 1, func(t *testing.T, queue int, opt pool.Option) {
		p := newPool(t, 1, opt)
		task1, task2 := make(chan struct{}), make(chan struct{})
		completed := make(chan int, 10)
		pondGo(t, p, func(context.Context) error { <-task1; completed <- 1; return nil })
		pondGo(t, p, func(context.Context) error { <-task2; completed <- 2; return nil })
		for id := 3; id <= 1+queue; id++ {
			pondGo(t, p, func(context.Context) error { completed <- id; return nil })
		}
		a, b := 2+queue, 3+queue
		waitSubmitted := pondGoEach(t, 2, func(i int) error {
			return p.Go(context.Background(), func(context.Context) error { completed <- a + i; return nil })
		})
		pondWaitStats(t, p, "both extra submitters block", func(s pool.Stats) bool { return s.Waiting == queue+2 })
		task1 <- struct{}{}
		task2 <- struct{}{}
		waitSubmitted()
		closePool(t, p, "pool")
		close(completed)
		var results []int
		for id := range completed {
			results = append(results, id)
		}
		var want []int
		for id := 1; id <= b; id++ {
			want = append(want, id)
		}
		if len(results) == b {
			slices.Sort(results[a-1:]) // the two blocked submitters get in in either order
		}
		if !slices.Equal(results, want) {
			t.Fatalf("completed %v, want 1..%d in submission order, then %d and %d", results, a-1, a, b)
		}
	})
}

// From github.com/alitto/pond/v2@v2.7.1 pool_test.go,
// TestPoolSubmitWhileStopping: a task that submits while the pool is
// being stopped gets ErrPoolStopped, and so does everyone after the stop.
// Adapted: ErrPoolStopped -> ErrClosed; pond's polling of Stopped() ->
// submitting until Go reports the close (every Go before it is accepted
// and runs); SubmitErr -> a Group's Go, and a nested Go with the task's
// own context.
func TestPeerPondPoolSubmitWhileStopping(t *testing.T) {
	p := newPool(t, 10)
	var loopErr, nestedErr, groupErr error
	var tryGoAfter bool
	pondGo(t, p, func(ctx context.Context) error {
		for loopErr == nil {
			loopErr = p.Go(context.Background(), nop)
		}
		nestedErr = p.Go(ctx, nop)
		tryGoAfter = p.TryGo(nop)
		g, _ := p.Group(ctx)
		g.Go(func(context.Context) error { return errPondSample })
		groupErr = g.Wait()
		return nil
	})
	closePool(t, p, "pool")
	if loopErr != pool.ErrClosed || nestedErr != pool.ErrClosed || groupErr != pool.ErrClosed || tryGoAfter {
		t.Fatalf("while stopping: Go = %v, nested Go = %v, group = %v, TryGo = %v; want ErrClosed and false",
			loopErr, nestedErr, groupErr, tryGoAfter)
	}
	if err, goErr := p.Wait(), p.Go(context.Background(), nop); err != nil || goErr != pool.ErrClosed {
		t.Fatalf("after Close: Wait = %v, Go = %v; want nil, ErrClosed", err, goErr)
	}
}
