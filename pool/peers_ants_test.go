package pool_test

// Ports of github.com/panjf2000/ants/v2@v2.12.1's own tests (ants_test.go,
// example_test.go) to ration's API, where they map: most of ants' suite is
// about worker expiry, preallocation, multi-pools and nonblocking modes,
// which ration does not have. The translation: ants.NewPool(n) ->
// pool.New(n); Submit -> Go (+ Wait); nonblocking Submit -> TryGo;
// PoolWithFunc.Invoke -> Map; Tune -> Resize; Release / ReleaseTimeout /
// ReleaseContext -> Close; ErrPoolClosed -> ErrClosed; Running -> Stats.Busy
// (tasks) or Stats.Goroutines (live workers); Free -> Size minus those; a
// PanicHandler -> an OnFinish hook seeing the *PanicError. The tasks'
// sleeps (demoFunc's 10ms, demoPoolFunc's 100ms) are yields or channels.

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/pool"
)

// antsConcurrency records the most tasks that ran at once.
type antsConcurrency struct{ now, peak atomic.Int64 }

func (c *antsConcurrency) enter() {
	n := c.now.Add(1)
	for m := c.peak.Load(); n > m && !c.peak.CompareAndSwap(m, n); m = c.peak.Load() {
	}
}

func (c *antsConcurrency) leave() { c.now.Add(-1) }

// antsCheckWaitToGetWorker: submitters wait for a worker (ants' blocking
// mode), every task runs, and never more than size at once.
func antsCheckWaitToGetWorker(t *testing.T, size int, ran int64, probe *antsConcurrency) {
	t.Helper()
	if ran != 10000 || probe.peak.Load() > int64(size) || probe.peak.Load() < 1 {
		t.Fatalf("ran %d of 10000 tasks, at most %d at once on %d workers", ran, probe.peak.Load(), size)
	}
}

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go,
// TestAntsPoolWaitToGetWorker: 100000 submissions to a pool of 1000 wait
// for workers and all run. Adapted: 10000 tasks on 100 workers, each a
// yield instead of a 100ms sleep; the memory log is gone; added: no more
// than size tasks ran at once.
func TestPeerAntsAntsPoolWaitToGetWorker(t *testing.T) {
	p := newPool(t, 100)
	var probe antsConcurrency
	var ran atomic.Int64
	for range 10000 {
		pondGo(t, p, func(context.Context) error {
			probe.enter()
			defer probe.leave()
			runtime.Gosched()
			ran.Add(1)
			return nil
		})
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	antsCheckWaitToGetWorker(t, 100, ran.Load(), &probe)
}

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go,
// TestAntsPoolWithFuncWaitToGetWorker. Adapted: as above, with the pool's
// fixed function invoked per argument -> Map over the arguments.
func TestPeerAntsAntsPoolWithFuncWaitToGetWorker(t *testing.T) {
	p := newPool(t, 100)
	var probe antsConcurrency
	fn := func(_ context.Context, i int) (int, error) {
		probe.enter()
		defer probe.leave()
		runtime.Gosched()
		return i, nil
	}
	ran := int64(0)
	for r := range pool.Map(context.Background(), p, seqN(10000), fn) {
		if r.Err != nil || r.Value != r.Index {
			t.Fatalf("result %+v", r)
		}
		ran++
	}
	antsCheckWaitToGetWorker(t, 100, ran, &probe)
}

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go,
// TestAntsPoolGetWorkerFromCache: after the pool's workers went idle (and,
// in ants, expired), a new submission gets a worker. Adapted: ration's
// workers never expire (they stay until Close or a shrink), so the two
// cleaning intervals' sleep is gone and the submission reuses an idle
// worker: the number of worker goroutines does not grow.
func TestPeerAntsAntsPoolGetWorkerFromCache(t *testing.T) {
	p := newPool(t, 10000)
	for range 1000 {
		pondGo(t, p, func(context.Context) error { runtime.Gosched(); return nil })
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	before := p.Stats().Goroutines
	pondGo(t, p, nop)
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Goroutines != before || s.Completed != 1001 {
		t.Fatalf("stats %+v, %d worker goroutines before; want the same, 1001 completed", s, before)
	}
}

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go, TestAntsPool: the
// default pool runs everything submitted. Adapted: ants' global pool ->
// New(0) (the default size); 100000 10ms tasks -> 10000 yields; the logs of
// Cap/Running/Free -> checks of Size, Busy and Goroutines after Wait.
func TestPeerAntsAntsPool(t *testing.T) {
	p := newPool(t, 0)
	var ran atomic.Int64
	for range 10000 {
		pondGo(t, p, func(context.Context) error { runtime.Gosched(); ran.Add(1); return nil })
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); ran.Load() != 10000 || s.Busy != 0 || s.Goroutines > s.Size || s.Size < 1 {
		t.Fatalf("ran %d, stats %+v", ran.Load(), s)
	}
}

// antsPanicTwice panics once in a Go task and once in a Map item (ants'
// Pool and PoolWithFunc) and checks both come back as a *PanicError with
// the pool idle again.
func antsPanicTwice(t *testing.T, p *pool.Pool) {
	t.Helper()
	pondGo(t, p, func(context.Context) error { panic("Oops!") })
	var pe *pool.PanicError
	if err := p.Wait(); !errors.As(err, &pe) || pe.Value != "Oops!" {
		t.Fatalf("Wait = %v, want a *PanicError", err)
	}
	for r := range pool.Map(context.Background(), p, seqN(1), func(context.Context, int) (int, error) { panic("Oops!") }) {
		if !errors.As(r.Err, &pe) || pe.Value != "Oops!" {
			t.Fatalf("Map result %+v, want a *PanicError", r)
		}
	}
	if s := p.Stats(); s.Busy != 0 || s.Panics != 2 || s.Goroutines < 1 {
		t.Fatalf("stats %+v, want no busy task after the panics, 2 panics, the workers alive", s)
	}
}

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go, TestPanicHandler:
// a panic in a task reaches the pool's panic handler, and no worker stays
// running. Adapted: PanicHandler -> an OnFinish hook, which sees the
// *PanicError in TaskInfo.Err before Wait or Map returns it; ants'
// PoolWithFunc -> Map (its generic variant is the same Map).
func TestPeerAntsPanicHandler(t *testing.T) {
	var panicCounter atomic.Int64
	p := newPool(t, 10, pool.OnFinish(func(_ context.Context, ti pool.TaskInfo) {
		var pe *pool.PanicError
		if errors.As(ti.Err, &pe) {
			panicCounter.Add(1)
		}
	}))
	antsPanicTwice(t, p)
	if c := panicCounter.Load(); c != 2 {
		t.Fatalf("the hook saw %d panics, want 2", c)
	}
}

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go,
// TestPoolPanicWithoutHandler: without a handler a panicking task does not
// crash the process. Adapted: ration always recovers; the panics come back
// as errors.
func TestPeerAntsPoolPanicWithoutHandler(t *testing.T) { antsPanicTwice(t, newPool(t, 10)) }

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go,
// TestNonblockingSubmit: in nonblocking mode a submission to a full pool
// fails with ErrPoolOverload and succeeds once a worker is free. Adapted:
// nonblocking Submit -> TryGo; the task f runs in a Group, whose Wait is
// the sign that its worker is idle again (ants waits for a channel f
// closes before returning, which leaves its worker busy a moment longer).
func TestPeerAntsNonblockingSubmit(t *testing.T) {
	const poolSize = 10
	p := newPool(t, poolSize)
	stopLong := make(chan struct{})
	defer close(stopLong)
	for range poolSize - 1 {
		if !p.TryGo(func(context.Context) error { <-stopLong; return nil }) {
			t.Fatal("TryGo when the pool is not full = false")
		}
	}
	ch := make(chan struct{})
	g, _ := p.Group(context.Background())
	if !g.TryGo(func(context.Context) error { <-ch; return nil }) {
		t.Fatal("TryGo when the pool is not full = false")
	}
	if p.TryGo(nop) {
		t.Fatal("TryGo when the pool is full = true")
	}
	close(ch)
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if !p.TryGo(nop) {
		t.Fatal("TryGo once a worker is free = false")
	}
}

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go,
// TestMaxBlockingSubmit: with the pool full, a blocked submission succeeds
// once a task ends, without an error. Adapted: ration has no limit on
// blocked submitters (WithMaxBlockingTasks), so the rejected extra
// submission -> TryGo; on the default queue, filled first, and on Queue(0),
// ants' blocking pool with no queue, as written; the 1s sleep ->
// a wait for Stats to show the submitter blocked.
func TestPeerAntsMaxBlockingSubmit(t *testing.T) {
	eachQueue(t, 0, func(t *testing.T, queue int, opt pool.Option) {
		const poolSize = 10
		p := newPool(t, poolSize, opt)
		release := pondOccupy(t, p, poolSize-1)
		ch := make(chan struct{})
		pondGo(t, p, func(context.Context) error { <-ch; return nil })
		for range queue {
			pondGo(t, p, nop)
		}
		errCh := make(chan error, 1)
		go func() { errCh <- p.Go(context.Background(), nop) }()
		pondWaitStats(t, p, "the extra submitter blocks", func(s pool.Stats) bool { return s.Waiting == queue+1 })
		time.Sleep(10 * time.Millisecond) // a submission with room would return by now
		select {
		case err := <-errCh:
			t.Fatalf("Go returned %v with every worker busy and the queue full; want it to block", err)
		default:
		}
		if p.TryGo(nop) {
			t.Fatal("TryGo with the pool full and a submitter blocked = true")
		}
		close(ch)
		if err := <-errCh; err != nil {
			t.Fatalf("blocked Go = %v, want nil once f ended", err)
		}
		release()
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
	})
}

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go,
// TestRebootNewPool: after ReleaseTimeout, Submit and Invoke fail with
// ErrPoolClosed; Reboot makes the pool usable again. Adapted: Release ->
// Close, ErrPoolClosed -> ErrClosed (from Go, and in Map's Result and
// StopErr for ants' Invoke); ration has no Reboot: a closed pool stays
// closed, and a new one is made instead.
func TestPeerAntsRebootNewPool(t *testing.T) {
	p := newPool(t, 10)
	pondSubmitAndWait(t, p)
	closePool(t, p, "pool")
	if err := p.Go(context.Background(), nop); err != pool.ErrClosed {
		t.Fatalf("Go after Close = %v, want ErrClosed", err)
	}
	var stop error
	for r := range pool.Map(context.Background(), p, seqN(1), func(_ context.Context, i int) (int, error) { return i, nil }, pool.StopErr(&stop)) {
		if !errors.Is(r.Err, pool.ErrClosed) {
			t.Fatalf("Map result after Close: %+v, want ErrClosed", r)
		}
	}
	if stop != pool.ErrClosed {
		t.Fatalf("StopErr after Close = %v", stop)
	}
	pondSubmitAndWait(t, newPool(t, 10))
}

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go, TestInfinitePool:
// a task's nested submission runs alongside it (two running), and Tune
// does not apply to an unlimited pool. Adapted: ration has no unlimited
// pool: New(-1) is the default size (documented), and Resize applies; a
// nested submission with the task's context runs on a free worker or
// inline, so two tasks run either way (Busy counts inline ones); ants'
// Free() of -1 has no counterpart.
func TestPeerAntsInfinitePool(t *testing.T) {
	p := newPool(t, -1)
	if p.Size() != newPool(t, 0).Size() {
		t.Fatalf("New(-1).Size() = %d, want the default", p.Size())
	}
	c := make(chan struct{})
	pondGo(t, p, func(ctx context.Context) error {
		err := p.Go(ctx, func(context.Context) error { <-c; return nil })
		<-c
		return err
	})
	pondWaitStats(t, p, "the outer and the nested task run", func(s pool.Stats) bool { return s.Busy == 2 })
	c <- struct{}{}
	c <- struct{}{}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	p.Resize(10)
	if p.Size() != 10 {
		t.Fatalf("Size after Resize(10) = %d", p.Size())
	}
}

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go,
// TestWithDisablePurgePool (via testPoolWithDisablePurge): with purging
// disabled, workers stay after their tasks end, until Release. Adapted:
// ration's workers never expire, so no option is needed; Running ->
// Goroutines (live workers), Free -> Size minus those; the sleep that gave
// the purge a chance is gone, as there is nothing to wait for.
func TestPeerAntsWithDisablePurgePool(t *testing.T) {
	const numWorker = 10
	p := newPool(t, numWorker)
	release := pondOccupy(t, p, numWorker)
	if s := p.Stats(); s.Busy != numWorker || s.Goroutines != numWorker || s.Size-s.Goroutines != 0 {
		t.Fatalf("stats %+v, want %d running, 0 free", s, numWorker)
	}
	release()
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Busy != 0 || s.Goroutines != numWorker {
		t.Fatalf("stats %+v after the tasks ended, want the %d workers still there", s, numWorker)
	}
	closePool(t, p, "pool")
	if s := p.Stats(); s.Goroutines != 0 || s.Workers != 0 || s.Size-s.Goroutines != numWorker {
		t.Fatalf("stats %+v after Close, want no worker left", s)
	}
}

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go,
// TestReleaseWhenRunningPool: releasing a pool of one worker while two
// goroutines keep submitting ends them all. Adapted: Release -> Close,
// which waits for the accepted tasks and refuses the rest with ErrClosed;
// the tasks' 1s sleeps and the 3s sleep before the release -> tasks held
// by a channel and a wait for Stats to show both submitters blocked; added:
// the two blocked submissions are counted as not started.
func TestPeerAntsReleaseWhenRunningPool(t *testing.T) {
	eachQueue(t, 0, func(t *testing.T, queue int, opt pool.Option) {
		p := newPool(t, 1, opt)
		release := make(chan struct{})
		var accepted, ran atomic.Int64
		var refused sync.WaitGroup
		submit := func(first int) {
			defer refused.Done()
			for j := first; j < first+30; j++ {
				err := p.Go(context.Background(), func(context.Context) error { <-release; ran.Add(1); return nil })
				if err != nil {
					if err != pool.ErrClosed {
						t.Errorf("task %d: Go = %v", j, err)
					}
					continue
				}
				accepted.Add(1)
			}
		}
		refused.Add(2)
		go submit(0)
		go submit(100)
		pondWaitStats(t, p, "both submitters block", func(s pool.Stats) bool { return s.Waiting == queue+2 })
		closed := antsCloseAsync(p)
		refused.Wait() // every submission after the close is refused at once
		close(release)
		if c := <-closed; c.err != nil || c.notStarted != 2 {
			t.Fatalf("Close = %d, %v; want the 2 blocked submissions not started", c.notStarted, c.err)
		}
		if accepted.Load() != int64(1+queue) || ran.Load() != accepted.Load() {
			t.Fatalf("accepted %d, ran %d; want %d", accepted.Load(), ran.Load(), 1+queue)
		}
	})
}

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go,
// TestPoolTuneScaleUp: growing a full pool by one lets one more task run at
// once, and growing it by five lets five blocked submitters in. Adapted:
// Tune -> Resize; Running -> Busy (exact once Go returned), plus a count
// of the tasks that really started; on the default queue the five extra
// submissions first fill the queue, the last blocks (on Queue(0), ants'
// pool with no queue, all five block); ants' PoolWithFunc parts -> skipped (see the
// report: Map follows Resize in TestResizeGovernsMap).
func TestPeerAntsPoolTuneScaleUp(t *testing.T) {
	eachQueue(t, 0, func(t *testing.T, queue int, opt pool.Option) {
		p := newPool(t, 2, opt)
		c := make(chan struct{})
		var started atomic.Int64
		blocking := func(context.Context) error { started.Add(1); <-c; return nil }
		for range 2 {
			pondGo(t, p, blocking)
		}
		if s := p.Stats(); s.Busy != 2 {
			t.Fatalf("stats %+v, want 2 running", s)
		}
		p.Resize(3)
		pondGo(t, p, blocking)
		if s := p.Stats(); s.Busy != 3 || s.Queued != 0 {
			t.Fatalf("stats %+v after Resize(3), want 3 running, none queued", s)
		}
		waitSubmitted := pondGoEach(t, 5, func(int) error { return p.Go(context.Background(), blocking) })
		p.Resize(8)
		waitSubmitted()
		if s := p.Stats(); s.Busy != 8 || s.Queued != 0 {
			t.Fatalf("stats %+v after Resize(8), want 8 running, none queued", s)
		}
		within(t, 10*time.Second, "the 8 tasks start", func() {
			for started.Load() != 8 {
				runtime.Gosched()
			}
		})
		close(c)
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
	})
}

type antsCloseResult struct {
	notStarted int
	err        error
}

// antsCloseAsync closes p on another goroutine, with a hang guard's deadline.
func antsCloseAsync(p *pool.Pool) <-chan antsCloseResult {
	closed := make(chan antsCloseResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n, err := p.Close(ctx)
		closed <- antsCloseResult{n, err}
	}()
	return closed
}

// antsCloseBusy is ants' release-with-timeout scenario: tasks are running when
// Close is called, and Close with a generous deadline waits for them and
// returns nil (ants' tasks sleep 1s under a 2s timeout; here they are held
// until Close is seen to have started).
func antsCloseBusy(t *testing.T, p *pool.Pool) {
	t.Helper()
	release := pondOccupy(t, p, min(5, p.Size()))
	if s := p.Stats(); s.Busy == 0 {
		t.Fatalf("stats %+v, want tasks running", s)
	}
	closed := antsCloseAsync(p)
	for p.Go(context.Background(), nop) != pool.ErrClosed {
		runtime.Gosched()
	}
	select {
	case <-closed:
		t.Fatal("Close returned while tasks were running")
	default:
	}
	release()
	if c := <-closed; c.err != nil {
		t.Fatalf("Close = %v", c.err)
	}
	if s := p.Stats(); s.Busy != 0 || s.Workers != 0 {
		t.Fatalf("stats %+v after Close", s)
	}
}

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go,
// TestReleaseTimeout. Adapted: see antsCloseBusy; PoolWithFunc and its
// generic variant -> the same Go tasks.
func TestPeerAntsReleaseTimeout(t *testing.T) { antsCloseBusy(t, newPool(t, 10)) }

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go,
// TestDefaultPoolReleaseTimeout. Adapted: see antsCloseBusy; the default pool
// -> New(0), with min(5, size) tasks.
func TestPeerAntsDefaultPoolReleaseTimeout(t *testing.T) { antsCloseBusy(t, newPool(t, 0)) }

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go,
// TestDefaultPoolReleaseContext. Adapted: as the above (Close always takes
// a context).
func TestPeerAntsDefaultPoolReleaseContext(t *testing.T) { antsCloseBusy(t, newPool(t, 0)) }

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go,
// TestReleaseContextWithNil: releasing with a nil context returns at once,
// without waiting for the workers, and the pool is closed. Adapted:
// ration's Close takes no nil context; the "do not wait" Close is one with
// a done context, which returns its error at once and leaves the running
// tasks to finish; a second Close waits for them.
func TestPeerAntsReleaseContextWithNil(t *testing.T) {
	p := newPool(t, 10)
	release := pondOccupy(t, p, 5)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Close(ctx); err != context.Canceled {
		t.Fatalf("Close with a done context = %v, want context.Canceled", err)
	}
	if err := p.Go(context.Background(), nop); err != pool.ErrClosed {
		t.Fatalf("Go after Close = %v, want ErrClosed", err)
	}
	if s := p.Stats(); s.Busy != 5 {
		t.Fatalf("stats %+v, want the 5 tasks still running", s)
	}
	release()
	closePool(t, p, "pool")
}

// antsSum is ants' example: the tasks add 0..999 to a shared sum.
func antsSum(t *testing.T, p *pool.Pool) int32 {
	t.Helper()
	var sum atomic.Int32
	for i := range int32(1000) {
		pondGo(t, p, func(context.Context) error { sum.Add(i); return nil })
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	return sum.Load()
}

// From github.com/panjf2000/ants/v2@v2.12.1 ants_test.go,
// TestRebootNewPoolCalc: a pool computes the sum, is released, rebooted
// and computes it again. Adapted: ration has no Reboot; after Close the
// pool refuses work (ErrClosed) and a new pool computes the sum.
func TestPeerAntsRebootNewPoolCalc(t *testing.T) {
	p := newPool(t, 10)
	if sum := antsSum(t, p); sum != 499500 {
		t.Fatalf("sum = %d, want 499500", sum)
	}
	closePool(t, p, "pool")
	if err := p.Go(context.Background(), nop); err != pool.ErrClosed {
		t.Fatalf("Go after Close = %v", err)
	}
	if sum := antsSum(t, newPool(t, 10)); sum != 499500 {
		t.Fatalf("sum on the new pool = %d, want 499500", sum)
	}
}

// From github.com/panjf2000/ants/v2@v2.12.1 example_test.go, ExamplePool:
// the sum on the default pool and on a pool of 10. Adapted: the default
// pool -> New(0); the printed output -> assertions.
func TestPeerAntsExamplePool(t *testing.T) {
	for _, size := range []int{0, 10} {
		if sum := antsSum(t, newPool(t, size)); sum != 499500 {
			t.Fatalf("size %d: sum = %d, want 499500", size, sum)
		}
	}
}

// From github.com/panjf2000/ants/v2@v2.12.1 example_test.go,
// ExamplePoolWithFunc (and ExamplePoolWithFuncGeneric, the same with a
// typed argument). Adapted: PoolWithFunc.Invoke -> Map; the printed
// output -> an assertion.
func TestPeerAntsExamplePoolWithFunc(t *testing.T) {
	var sum int
	for r := range pool.Map(context.Background(), newPool(t, 10), seqN(1000), func(_ context.Context, i int) (int, error) { return i, nil }) {
		sum += r.Value
	}
	if sum != 499500 {
		t.Fatalf("sum = %d, want 499500", sum)
	}
}
