package pool_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/pool"
)

// TestRescuedGoexitKeepsSubmitter: a submitter that puts a task in the
// queue just as the pool closes runs what is left in the queue (the
// workers may have left); a task there that calls runtime.Goexit must fail
// with ErrGoexit like one on a worker, and must not end the submitter's
// goroutine, whether it is a caller of Go or a Map's consumer. Before the
// fix, the rescued tasks ran on the submitter's goroutine and the Goexit
// ended it: Go never returned, and the tasks queued behind it could be
// stranded, so that Close hung (under -race, 9 of 10 runs of this test
// failed, one of them with Close past its deadline).
func TestRescuedGoexitKeepsSubmitter(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	goexit := func(context.Context) error { runtime.Goexit(); return nil }
	mapGoexit := func(context.Context, int) (int, error) { runtime.Goexit(); return 0, nil }
	for round := range 3000 {
		p := pool.New(1)
		release, started := make(chan struct{}), make(chan struct{})
		if err := p.Go(context.Background(), func(context.Context) error { close(started); <-release; return nil }); err != nil {
			t.Fatal(err)
		}
		<-started
		for range pool.QueueSlack {
			if err := p.Go(context.Background(), goexit); err != nil {
				t.Fatal(err)
			}
		}
		// Submitters blocked on the full queue, racing Close for it.
		var ended atomic.Int64 // submitters whose goroutine ended in Go or Map
		var wg sync.WaitGroup
		submit := func(fn func()) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				returned := false
				defer func() {
					if !returned {
						ended.Add(1)
					}
				}()
				fn()
				returned = true
			}()
		}
		for range 3 {
			submit(func() { p.Go(context.Background(), goexit) })
		}
		submit(func() {
			for r := range pool.Map(context.Background(), p, slices.Values([]int{1, 2}), mapGoexit) {
				if r.Err == nil {
					t.Errorf("round %d: a Map item that called Goexit has no error", round)
				}
			}
		})
		close(release)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := p.Close(ctx) // the deadline is a hang guard
		cancel()
		wg.Wait()
		if err != nil || ended.Load() != 0 {
			t.Fatalf("round %d: Close = %v, %d submitters ended by a rescued task's Goexit; stats %+v", round, err, ended.Load(), p.Stats())
		}
		if err := p.Wait(); !errors.Is(err, pool.ErrGoexit) {
			t.Fatalf("round %d: Wait = %v, want ErrGoexit", round, err)
		}
	}
}

// TestNestedInlineGoexit pins what the package documentation says of a
// nested task that runs inline and calls runtime.Goexit: it is on the
// submitting task's goroutine, so it ends that task too, which fails with
// ErrGoexit, and the nested Map it was an item of ends with it; the pool
// keeps its worker and runs the next task.
func TestNestedInlineGoexit(t *testing.T) {
	p := newPool(t, 1) // the parent holds the only worker: items run inline
	var delivered []int
	var after atomic.Bool
	if err := p.Go(context.Background(), func(ctx context.Context) error {
		for r := range pool.Map(ctx, p, slices.Values([]int{0, 1, 2, 3}), func(_ context.Context, i int) (int, error) {
			if i == 2 {
				runtime.Goexit()
			}
			return i, nil
		}) {
			delivered = append(delivered, r.Index)
		}
		after.Store(true)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	within(t, 10*time.Second, "Wait after an inline Goexit", func() {
		if err := p.Wait(); !errors.Is(err, pool.ErrGoexit) {
			t.Errorf("Wait = %v, want ErrGoexit", err)
		}
	})
	if after.Load() || !slices.Equal(delivered, []int{0, 1}) {
		t.Fatalf("the parent went on after the Goexit (%v), or got results %v, want [0 1]", after.Load(), delivered)
	}
	if err := p.Go(context.Background(), nop); err != nil || p.Wait() != nil {
		t.Fatalf("the pool after an inline Goexit: Go = %v", err)
	}
	if s := p.Stats(); s.Workers != 1 || s.Busy != 0 || s.Queued != 0 {
		t.Fatalf("stats after an inline Goexit: %+v", s)
	}
}
