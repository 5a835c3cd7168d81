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
