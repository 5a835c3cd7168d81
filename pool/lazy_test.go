package pool_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/ration-run/ration/pool"
)

// TestLazyWorkers checks that a pool's cost does not grow with its size
// (`ration run -j 10000` took ~40 MiB before any job
// ran): worker goroutines start only when tasks need them.
func TestLazyWorkers(t *testing.T) {
	const size = 100000
	nop := func(context.Context) error { return nil }
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	base := runtime.NumGoroutine()
	p := newPool(t, size)
	for range 3 {
		if err := p.Go(context.Background(), nop); err != nil {
			t.Fatal(err)
		}
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	for r := range pool.Map(context.Background(), p, seqN(3), func(_ context.Context, i int) (int, error) { return i, nil }) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	runtime.ReadMemStats(&after)
	// One task at a time needs one worker; allow a few for the hand-overs
	// racing the previous task's bookkeeping.
	if n := runtime.NumGoroutine() - base; n > 4 {
		t.Fatalf("%d goroutines for a pool of %d that ran one task at a time", n, size)
	}
	grew := int64(after.StackInuse+after.HeapInuse) - int64(before.StackInuse+before.HeapInuse)
	if grew > 1<<20 {
		t.Fatalf("a pool of %d took %d KiB", size, grew>>10)
	}
	if s := p.Stats(); s.Size != size || s.Workers != size || s.Goroutines < 1 || s.Goroutines > 4 || !p.TryGo(nop) {
		t.Fatalf("stats of a lazy pool: %+v", s)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
}

// TestResizeStartsWorkersForBlocked checks that growing the pool hands the
// blocked submitters to new workers at once, although workers otherwise
// start on demand.
func TestResizeStartsWorkersForBlocked(t *testing.T) {
	p := newPool(t, 1)
	release := make(chan struct{})
	if err := p.Go(context.Background(), func(context.Context) error { <-release; return nil }); err != nil {
		t.Fatal(err)
	}
	ran := make(chan struct{}, 2)
	task := func(context.Context) error { ran <- struct{}{}; return nil }
	for range 2 {
		go func() { _ = p.Go(context.Background(), task) }()
	}
	for p.Stats().Waiting != 2 {
		time.Sleep(100 * time.Microsecond)
	}
	p.Resize(3)
	within(t, 10*time.Second, "blocked submitters after Resize", func() {
		<-ran
		<-ran
	})
	if s := p.Stats(); s.Workers != 3 || s.Goroutines != 3 {
		t.Errorf("after growing with 2 blocked: %+v", s)
	}
	close(release)
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
}
