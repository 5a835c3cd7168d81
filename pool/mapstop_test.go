package pool_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/pool"
)

// TestStopErr: the Map reports why it ended.
func TestStopErr(t *testing.T) {
	p := newPool(t, 2)
	id := func(_ context.Context, i int) (int, error) { return i, nil }
	count := func(ctx context.Context, opts ...pool.MapOption) (int, error) {
		var why error
		n := 0
		for range pool.Map(ctx, p, seqN(100), id, append(opts, pool.StopErr(&why))...) {
			n++
		}
		return n, why
	}
	if n, why := count(context.Background()); n != 100 || why != nil {
		t.Fatalf("exhausted input: %d results, why %v", n, why)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if n, why := count(ctx); n != 0 || !errors.Is(why, context.Canceled) {
		t.Fatalf("canceled before start: %d results, why %v", n, why)
	}
	boom := errors.New("boom")
	var why error
	for range pool.Map(context.Background(), p, seqN(100), func(_ context.Context, i int) (int, error) {
		if i == 5 {
			return 0, boom
		}
		return i, nil
	}, pool.FailFast(), pool.StopErr(&why)) {
	}
	if !errors.Is(why, pool.ErrFailFast) || !errors.Is(why, boom) {
		t.Fatalf("fail-fast: why %v", why)
	}
	// Breaking out is the consumer's own doing: nil.
	why = errors.New("stale")
	for range pool.Map(context.Background(), p, seqN(100), id, pool.StopErr(&why)) {
		break
	}
	if why != nil {
		t.Fatalf("break: why %v", why)
	}
	// A context canceled by the loop body on the last result is a
	// canceled Map, as documented: the Map cannot tell that it had nothing
	// left to do.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	for r := range pool.Map(ctx, p, seqN(1), id, pool.StopErr(&why)) {
		if r.Err == nil {
			cancel()
		}
	}
	if !errors.Is(why, context.Canceled) {
		t.Fatalf("canceled on the last result: why %v", why)
	}
	q := pool.New(1)
	q.Close(context.Background())
	for range pool.Map(context.Background(), q, seqN(3), id, pool.StopErr(&why)) {
	}
	if !errors.Is(why, pool.ErrClosed) {
		t.Fatalf("closed pool: why %v", why)
	}
	for range pool.Map[int, int](context.Background(), nil, seqN(3), id, pool.StopErr(&why)) {
	}
	if !errors.Is(why, pool.ErrNilTask) {
		t.Fatalf("nil pool: why %v", why)
	}
}

// TestCollect: values in input order in one call; the first failure in
// input order; a canceled context reported.
func TestCollect(t *testing.T) {
	p := newPool(t, 4)
	sq := func(_ context.Context, i int) (int, error) {
		if i%3 == 0 {
			time.Sleep(time.Millisecond)
		}
		return i * i, nil
	}
	got, err := pool.Collect(context.Background(), p, seqN(50), sq)
	want := make([]int, 50)
	for i := range want {
		want[i] = i * i
	}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Collect = %v, %v", got, err)
	}
	boom := errors.New("boom")
	got, err = pool.Collect(context.Background(), p, seqN(50), func(ctx context.Context, i int) (int, error) {
		if i == 7 {
			return 0, boom
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Millisecond):
			return i, nil
		}
	})
	if err != boom || !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6}) {
		t.Fatalf("Collect with item 7 failing = %v, %v", got, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got, err := pool.Collect(ctx, p, seqN(50), sq); len(got) != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("Collect with a canceled context = %v, %v", got, err)
	}
	if _, err := pool.Collect[int, int](context.Background(), p, nil, sq); !errors.Is(err, pool.ErrNilTask) {
		t.Fatalf("Collect(nil input) = %v", err)
	}
}

// TestNotStartedAfterCloseDeadline: a Map whose parent context can never be
// canceled (context.Background) is stopped by a Close deadline; the items
// queued behind the busy worker then yield ErrNotStarted (wrapping
// ErrClosed) and never start: the Close deadline cancels the Map's own
// context, which every item checks before it starts.
func TestNotStartedAfterCloseDeadline(t *testing.T) {
	p := pool.New(1)
	release := make(chan struct{})
	var started atomic.Int64
	fn := func(_ context.Context, i int) (int, error) {
		started.Add(1)
		if i == 0 {
			<-release
		}
		return i, nil
	}
	const n = 1 + pool.QueueSlack // one running, the rest queued
	results := make(chan pool.Result[int, int], n)
	go func() {
		defer close(results)
		for r := range pool.Map(context.Background(), p, seqN(n), fn) {
			results <- r
		}
	}()
	within(t, 10*time.Second, "filling the queue", func() {
		for p.Stats().Queued < pool.QueueSlack {
			time.Sleep(time.Millisecond)
		}
	})
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.Close(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close with a short deadline = %v, want DeadlineExceeded", err)
	}
	close(release)
	got := 0
	for r := range results {
		got++
		switch {
		case r.Index == 0:
			if r.Err != nil {
				t.Errorf("item 0: %v", r.Err)
			}
		case !errors.Is(r.Err, pool.ErrNotStarted) || !errors.Is(r.Err, pool.ErrClosed):
			t.Errorf("item %d after the Close deadline: %+v, want ErrNotStarted and ErrClosed", r.Index, r)
		}
	}
	if got != n {
		t.Errorf("%d results, want %d", got, n)
	}
	if s := started.Load(); s != 1 {
		t.Errorf("%d items started, want only item 0", s)
	}
	if _, err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestBlockedInputAndCancel pins what Map's doc says of an input that
// blocks in a pull when ctx is canceled: the running item's context is
// canceled at once, but its result waits for the pull, and the item the
// input yields after the cancellation never starts.
func TestBlockedInputAndCancel(t *testing.T) {
	p := newPool(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pulling, unblock := make(chan struct{}), make(chan struct{})
	started, ended := make(chan struct{}), make(chan struct{})
	var delivered atomic.Int64
	in := func(yield func(int) bool) {
		if yield(0) {
			close(pulling)
			<-unblock // a pull that blocks
			yield(1)
		}
	}
	got := make([]error, 2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for r := range pool.Map(ctx, p, in, func(ctx context.Context, i int) (int, error) {
			close(started)
			<-ctx.Done()
			defer close(ended)
			return i, ctx.Err()
		}) {
			delivered.Add(1)
			got[r.Index] = r.Err
		}
	}()
	within(t, 10*time.Second, "item 0 runs and the input pulls again", func() { <-started; <-pulling })
	cancel()
	within(t, 10*time.Second, "the running item sees the cancellation", func() { <-ended })
	if n := delivered.Load(); n != 0 {
		t.Fatalf("%d results delivered while the input blocked, want 0", n)
	}
	close(unblock)
	within(t, 10*time.Second, "Map after the pull returned", func() { <-done })
	if delivered.Load() != 2 || !errors.Is(got[0], context.Canceled) || errors.Is(got[0], pool.ErrNotStarted) || !errors.Is(got[1], pool.ErrNotStarted) {
		t.Fatalf("%d results, errors %v; want item 0's context.Canceled and item 1's ErrNotStarted", delivered.Load(), got)
	}
}
