package pool_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/pool"
)

// A pool sized from the container's limits: package limits reads the
// cgroup files (the pool imports the standard library only), and its
// error is an invalid RATION_JOBS.
func Example() {
	ctx := context.Background()
	n, why, err := limits.Jobs(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := pool.New(n)
	defer p.Close(ctx)
	slog.Info("pool sized", "size", n, "reason", why) // e.g. "jobs=4: 2 host CPUs (affinity 2); 2 x 2.00 = 4.00"
	fmt.Println(p.Size() == n)
	// Output: true
}

func ExampleNew() {
	p := pool.New(4)
	defer p.Close(context.Background())
	fmt.Println(p.Size())

	// Size 0 takes DefaultSize: RATION_JOBS when set, else 2 x
	// GOMAXPROCS, capped at 8. DefaultSize says why, and reports an
	// invalid RATION_JOBS, which New(0) only logs.
	def := pool.New(0)
	defer def.Close(context.Background())
	n, why, err := pool.DefaultSize()
	if err != nil {
		fmt.Println(err)
	}
	fmt.Println(def.Size() == n, why != "")
	// Output:
	// 4
	// true true
}

func ExamplePool_Go() {
	p := pool.New(2)
	defer p.Close(context.Background())

	var total atomic.Int64
	for i := 1; i <= 10; i++ {
		// Go returns at once while a worker is idle or the pool's
		// queue (QueueSlack tasks) has room, and blocks while both
		// workers are busy and the queue is full.
		err := p.Go(context.Background(), func(ctx context.Context) error {
			total.Add(int64(i))
			return nil
		})
		if err != nil {
			fmt.Println("submit:", err)
		}
	}
	if err := p.Wait(); err != nil {
		fmt.Println("task:", err)
	}
	fmt.Println(total.Load())
	// Output: 55
}

// With Queue(0), Go hands a task to a worker or waits for one, as
// errgroup's Go with SetLimit: the pool never accepts more tasks than it
// has workers, and none waits in a queue.
func ExampleQueue() {
	p := pool.New(2, pool.Queue(0))
	defer p.Close(context.Background())

	release := make(chan struct{})
	for range 2 {
		p.Go(context.Background(), func(context.Context) error { <-release; return nil })
	}
	submitted := make(chan error)
	go func() {
		// Blocks until a worker is free: no queue takes it.
		submitted <- p.Go(context.Background(), func(context.Context) error { return nil })
	}()
	for p.Stats().Waiting != 1 {
		time.Sleep(time.Millisecond)
	}
	s := p.Stats()
	fmt.Println("busy", s.Busy, "queued", s.Queued, "waiting", s.Waiting)
	close(release)
	fmt.Println(<-submitted, p.Wait())
	// Output:
	// busy 2 queued 0 waiting 1
	// <nil> <nil>
}

func ExamplePool_TryGo() {
	p := pool.New(1)
	defer p.Close(context.Background())

	release := make(chan struct{})
	started := make(chan struct{})
	p.Go(context.Background(), func(context.Context) error {
		close(started)
		<-release
		return nil
	})
	<-started
	// The only worker is busy: TryGo does not wait.
	fmt.Println(p.TryGo(func(context.Context) error { return nil }))
	close(release)
	p.Wait()
	// Output: false
}

func ExamplePool_Wait() {
	p := pool.New(3)
	defer p.Close(context.Background())

	for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
		p.Go(context.Background(), func(ctx context.Context) error {
			if name == "b.txt" {
				return fmt.Errorf("%s: %w", name, errors.ErrUnsupported)
			}
			return nil
		})
	}
	// Wait returns the first error since the previous Wait.
	fmt.Println(p.Wait())
	fmt.Println(p.Wait())
	// Output:
	// b.txt: unsupported operation
	// <nil>
}

func ExamplePool_Resize() {
	p := pool.New(2)
	defer p.Close(context.Background())

	p.Resize(8) // up to 8 tasks may run now; workers start on demand
	fmt.Println(p.Stats().Workers)
	// Shrinking retires idle workers now and busy ones after their task.
	p.Resize(1)
	for p.Stats().Workers != 1 {
		time.Sleep(time.Millisecond)
	}
	fmt.Println(p.Size(), p.Stats().Workers)
	// Output:
	// 8
	// 1 1
}

func ExamplePool_Close() {
	p := pool.New(1)
	release := make(chan struct{})
	started := make(chan struct{})
	p.Go(context.Background(), func(context.Context) error {
		close(started)
		<-release
		return nil
	})
	<-started

	// With the only worker busy, the pool's queue takes QueueSlack tasks
	// and Go returns at once; they run before Close returns.
	var queuedRan atomic.Int64
	for range pool.QueueSlack {
		p.Go(context.Background(), func(context.Context) error { queuedRan.Add(1); return nil })
	}
	// The next submitter waits for room when Close comes.
	var wg sync.WaitGroup
	wg.Go(func() {
		err := p.Go(context.Background(), func(context.Context) error { return nil })
		fmt.Println("waiting submitter:", err)
	})
	for p.Stats().Waiting < pool.QueueSlack+1 {
		time.Sleep(time.Millisecond)
	}
	time.AfterFunc(10*time.Millisecond, func() { close(release) })

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	notStarted, err := p.Close(ctx) // finishes the running and queued tasks
	wg.Wait()
	fmt.Println("not started:", notStarted, "err:", err)
	fmt.Println("queued tasks run:", queuedRan.Load())
	// Output:
	// waiting submitter: pool: closed
	// not started: 1 err: <nil>
	// queued tasks run: 4
}

func ExamplePool_Stats() {
	p := pool.New(2)
	defer p.Close(context.Background())
	for i := range 5 {
		p.Go(context.Background(), func(context.Context) error {
			if i == 0 {
				return errors.New("bad")
			}
			return nil
		})
	}
	p.Wait()
	s := p.Stats()
	fmt.Println(s.Size, s.Completed, s.Failed, s.Busy)
	// Output: 2 5 1 0
}

func ExampleMap() {
	p := pool.New(4)
	defer p.Close(context.Background())

	words := slices.Values([]string{"lazy", "bounded", "pool"})
	upper := func(ctx context.Context, s string) (string, error) {
		return strings.ToUpper(s), nil
	}
	var got []string
	// Results arrive in completion order; Index says where each came from.
	for r := range pool.Map(context.Background(), p, words, upper) {
		if r.Err != nil {
			fmt.Println(r.Index, r.Err)
			continue
		}
		got = append(got, fmt.Sprintf("%d:%s", r.Index, r.Value))
	}
	slices.Sort(got)
	fmt.Println(got)
	// Output: [0:LAZY 1:BOUNDED 2:POOL]
}

func ExampleMapOrdered() {
	p := pool.New(4)
	defer p.Close(context.Background())

	square := func(ctx context.Context, n int) (int, error) {
		if n == 1 {
			time.Sleep(10 * time.Millisecond) // a slow head does not reorder
		}
		return n * n, nil
	}
	for r := range pool.MapOrdered(context.Background(), p, slices.Values([]int{1, 2, 3, 4, 5}), square) {
		fmt.Print(r.Value, " ")
	}
	fmt.Println()
	// Output: 1 4 9 16 25
}

func ExampleFailFast() {
	p := pool.New(2)
	defer p.Close(context.Background())

	check := func(ctx context.Context, n int) (int, error) {
		if n == 3 {
			return 0, errors.New("3 is bad")
		}
		return n, nil
	}
	pulled := 0
	input := func(yield func(int) bool) {
		for i := range 1_000_000 {
			pulled++
			if !yield(i) {
				return
			}
		}
	}
	var first error
	for r := range pool.MapOrdered(context.Background(), p, input, check, pool.FailFast()) {
		// Items that were pulled but never started come after it, with
		// errors wrapping pool.ErrNotStarted.
		if r.Err != nil && first == nil {
			first = r.Err
			fmt.Println(r.Index, r.Err)
		}
	}
	fmt.Println("pulled at most a window past the failure:", pulled <= 3+1+2+pool.PullSlack)
	// Output:
	// 3 3 is bad
	// pulled at most a window past the failure: true
}

func ExamplePanicError() {
	p := pool.New(1)
	defer p.Close(context.Background())

	p.Go(context.Background(), func(context.Context) error {
		var m map[string]int
		//lint:ignore SA5000 the panic is what this example shows
		m["x"] = 1 // panics
		return nil
	})
	var pe *pool.PanicError
	if err := p.Wait(); errors.As(err, &pe) {
		fmt.Println("recovered:", pe.Value)
		fmt.Println("has stack:", len(pe.Stack) > 0)
	}
	// The worker survived.
	fmt.Println(p.Go(context.Background(), func(context.Context) error { return nil }), p.Wait())
	// Output:
	// recovered: assignment to entry in nil map
	// has stack: true
	// <nil> <nil>
}

func ExampleSlot() {
	p := pool.New(3)
	defer p.Close(context.Background())

	var mu sync.Mutex
	seen := map[int]bool{}
	for range 30 {
		p.Go(context.Background(), func(ctx context.Context) error {
			// Like GNU parallel's {%}: e.g. pick a GPU or a scratch dir.
			mu.Lock()
			seen[pool.Slot(ctx)] = true
			mu.Unlock()
			return nil
		})
	}
	p.Wait()
	for s := range seen {
		if s < 1 || s > 3 {
			fmt.Println("unexpected slot", s)
		}
	}
	fmt.Println(pool.Slot(context.Background()))
	// Output: 0
}

func ExampleOnFinish() {
	var p *pool.Pool
	var resubmitted atomic.Bool
	p = pool.New(1, pool.OnFinish(func(ctx context.Context, t pool.TaskInfo) {
		// Hooks run outside the pool's locks and may call back into it.
		// Passing ctx on lets the submission run inline when the pool is
		// full (here: the only worker is running this hook).
		if t.Err != nil && resubmitted.CompareAndSwap(false, true) {
			p.Go(ctx, func(context.Context) error {
				fmt.Println("retrying after:", t.Err)
				return nil
			})
		}
	}))
	defer p.Close(context.Background())

	p.Go(context.Background(), func(context.Context) error { return errors.New("flaky") })
	p.Wait()
	// Output: retrying after: flaky
}

func ExampleOnStats() {
	var calls atomic.Int64
	p := pool.New(2, pool.OnStats(time.Hour, func(ctx context.Context, s pool.Stats) {
		calls.Add(1) // at most once per hour; the first finished task calls it
	}))
	defer p.Close(context.Background())
	for range 10 {
		p.Go(context.Background(), func(context.Context) error { return nil })
	}
	p.Wait()
	fmt.Println(calls.Load())
	// Output: 1
}

func ExamplePool_Group() {
	// One pool for the whole process (a service sizes it with
	// limits.Jobs, see the package example; 4 here).
	p := pool.New(4)
	defer p.Close(context.Background())

	// Each request gets its own group: it waits for its own tasks only and
	// sees only their errors.
	handle := func(ctx context.Context, files []string) error {
		g, ctx := p.Group(ctx)
		for _, f := range files {
			g.Go(func(ctx context.Context) error {
				if strings.HasSuffix(f, ".bad") {
					return fmt.Errorf("%s: %w", f, errors.ErrUnsupported)
				}
				<-time.After(time.Millisecond) // work, or stop when a sibling fails
				return ctx.Err()
			})
		}
		return g.Wait() // the first failure, never a sibling's context.Canceled
	}
	fmt.Println(handle(context.Background(), []string{"a", "b", "c"}))
	fmt.Println(handle(context.Background(), []string{"a", "x.bad", "c"}))
	// Output:
	// <nil>
	// x.bad: unsupported operation
}

func ExampleGroup_Go() {
	p := pool.New(2)
	defer p.Close(context.Background())

	// A recursive fan-out: each node's task makes a Group from its own
	// context for its children, so a task that finds no idle worker runs
	// them inline. (Calling the parent group's Go from its tasks instead
	// would block once the workers and the queue are full, every worker
	// waiting for the others.)
	var nodes atomic.Int64
	var walk func(depth int) func(context.Context) error
	walk = func(depth int) func(context.Context) error {
		return func(ctx context.Context) error {
			nodes.Add(1)
			if depth == 6 {
				return nil
			}
			g, _ := p.Group(ctx)
			g.Go(walk(depth + 1))
			g.Go(walk(depth + 1))
			return g.Wait()
		}
	}
	g, _ := p.Group(context.Background())
	g.Go(walk(0))
	fmt.Println(g.Wait(), nodes.Load())
	// Output: <nil> 127
}

func ExampleCollect() {
	p := pool.New(4)
	defer p.Close(context.Background())

	lengths, err := pool.Collect(context.Background(), p, slices.Values([]string{"lazy", "bounded", "pool"}),
		func(ctx context.Context, s string) (int, error) { return len(s), nil })
	fmt.Println(lengths, err)
	// Output: [4 7 4] <nil>
}

func ExampleStopErr() {
	p := pool.New(2)
	defer p.Close(context.Background())

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // e.g. the request was abandoned before the Map started
	var why error
	n := 0
	for range pool.Map(ctx, p, slices.Values([]int{1, 2, 3}), func(ctx context.Context, i int) (int, error) { return i, nil }, pool.StopErr(&why)) {
		n++
	}
	// No results, and why says it was not because the input was empty.
	fmt.Println(n, why)
	// Output: 0 context canceled
}
