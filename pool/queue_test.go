package pool_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/pool"
)

// TestQueue: with every worker busy, Go returns at once for QueueSlack
// tasks, which Stats shows as queued; the next Go blocks; TryGo never
// queues. Every accepted task runs.
func TestQueue(t *testing.T) {
	p := newPool(t, 1)
	release := make(chan struct{})
	started := make(chan struct{})
	if err := p.Go(context.Background(), func(context.Context) error { close(started); <-release; return nil }); err != nil {
		t.Fatal(err)
	}
	<-started
	var ran atomic.Int64
	task := func(context.Context) error { ran.Add(1); return nil }
	within(t, 10*time.Second, "Go into a queue with room", func() {
		for i := range pool.QueueSlack {
			if err := p.Go(context.Background(), task); err != nil {
				t.Errorf("queued Go %d: %v", i, err)
			}
		}
	})
	if p.TryGo(task) {
		t.Fatal("TryGo with the only worker busy = true (TryGo must not queue)")
	}
	if s := p.Stats(); s.Busy != 1 || s.Queued != pool.QueueSlack || s.Waiting != pool.QueueSlack {
		t.Fatalf("stats with a full queue: %+v", s)
	}
	blocked := make(chan error, 1)
	go func() { blocked <- p.Go(context.Background(), task) }()
	for p.Stats().Waiting != pool.QueueSlack+1 {
		time.Sleep(100 * time.Microsecond)
	}
	select {
	case err := <-blocked:
		t.Fatalf("Go on a full queue returned %v without waiting", err)
	default:
	}
	close(release)
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if n := ran.Load(); n != pool.QueueSlack+1 {
		t.Fatalf("%d tasks ran, want %d", n, pool.QueueSlack+1)
	}
	if s := p.Stats(); s.Busy != 0 || s.Queued != 0 || s.Waiting != 0 {
		t.Fatalf("stats after Wait: %+v", s)
	}
}

// TestCloseRacesSubmitters closes pools while submitters keep calling Go,
// Group.Go and Map: every task whose submission was accepted must have run
// when Close returns (a task put in the queue as the workers leave is not
// stranded), and every Map item pulled yields one Result.
func TestCloseRacesSubmitters(t *testing.T) {
	for round := range 200 {
		p := pool.New(2)
		var accepted, ran atomic.Int64
		task := func(context.Context) error { ran.Add(1); return nil }
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				for {
					err := p.Go(context.Background(), task)
					if errors.Is(err, pool.ErrClosed) {
						return
					}
					accepted.Add(1)
				}
			})
		}
		var pulled, results atomic.Int64
		wg.Go(func() {
			in := func(yield func(int) bool) {
				for i := 0; ; i++ {
					pulled.Add(1)
					if !yield(i) {
						return
					}
				}
			}
			for range pool.Map(context.Background(), p, in, func(_ context.Context, i int) (int, error) { return i, nil }) {
				results.Add(1)
			}
		})
		time.Sleep(time.Duration(round%5) * 100 * time.Microsecond)
		if _, err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		r := ran.Load()
		// The submitters count an acceptance after Go returned: settle
		// them before comparing.
		wg.Wait()
		if a := accepted.Load(); r != a {
			t.Fatalf("round %d: %d Go tasks accepted, %d had run when Close returned", round, a, r)
		}
		if pl, rs := pulled.Load(), results.Load(); pl != rs {
			t.Fatalf("round %d: %d items pulled, %d results", round, pl, rs)
		}
	}
}

// TestQueueZeroHandOff: with Queue(0), as with errgroup's SetLimit, Go
// returns only once a worker has taken the task: while both workers of a
// pool of 2 are busy, no further Go returns, nothing is queued, and each
// freed worker lets exactly one blocked submitter in. A Group's Go and a
// Map's hand-over obey the same bound.
func TestQueueZeroHandOff(t *testing.T) {
	const size, tasks = 2, 8
	p := newPool(t, size, pool.Queue(0))
	gate := make(chan struct{})
	release := sync.OnceFunc(func() { close(gate) })
	t.Cleanup(release) // before Close, on a failure
	var running, finished, accepted, worst atomic.Int64
	task := func(context.Context) error {
		running.Add(1)
		<-gate
		running.Add(-1)
		finished.Add(1)
		return nil
	}
	g, _ := p.Group(context.Background())
	var wg sync.WaitGroup
	for i := range tasks {
		wg.Go(func() {
			if i%2 == 0 {
				if err := p.Go(context.Background(), task); err != nil {
					t.Errorf("Go: %v", err)
				}
			} else {
				g.Go(task)
			}
			// Accepted tasks that have not finished: never more than
			// the workers.
			n := accepted.Add(1) - finished.Load()
			for w := worst.Load(); n > w && !worst.CompareAndSwap(w, n); w = worst.Load() {
			}
		})
	}
	pondWaitStats(t, p, "two running, the rest blocked", func(s pool.Stats) bool {
		return s.Busy == size && s.Waiting == tasks-size
	})
	time.Sleep(10 * time.Millisecond) // a queued task would be accepted by now
	if n, s := accepted.Load(), p.Stats(); n != size || s.Queued != 0 {
		t.Fatalf("with both workers busy: %d Go calls returned, stats %+v; want %d returned, none queued", n, s, size)
	}
	release()
	wg.Wait()
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if w := worst.Load(); w > size {
		t.Fatalf("%d tasks accepted and not finished at once, want at most %d", w, size)
	}

	// Map pulls at most size+1 items ahead (PullSlack with no queue).
	var pr probe
	for range pool.MapOrdered(context.Background(), p, pr.seq(100), func(_ context.Context, i int) (int, error) {
		time.Sleep(100 * time.Microsecond)
		return i, nil
	}) {
		pr.got()
	}
	if m := pr.maxAhead.Load(); m > size+1 {
		t.Fatalf("Map pulled %d items ahead on a pool of %d with Queue(0), want at most %d", m, size, size+1)
	}
}
