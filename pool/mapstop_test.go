package pool_test

import (
	"context"
	"errors"
	"slices"
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
