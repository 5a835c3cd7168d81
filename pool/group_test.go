package pool_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/pool"
)

// TestGroupFirstError: the group's first error is the failing task's,
// never a sibling's context.Canceled caused by it (for Go/Wait: the error is recorded before the group's context is canceled).
func TestGroupFirstError(t *testing.T) {
	p := newPool(t, 4)
	boom := errors.New("boom")
	for run := range 200 {
		g, ctx := p.Group(context.Background())
		for i := range 8 {
			g.Go(func(ctx context.Context) error {
				if i == 2 {
					return boom
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(time.Millisecond):
					return nil
				}
			})
		}
		if err := g.Wait(); err != boom {
			t.Fatalf("run %d: Wait = %v, want boom", run, err)
		}
		if !errors.Is(context.Cause(ctx), boom) {
			t.Fatalf("run %d: group context cause %v, want boom", run, context.Cause(ctx))
		}
	}
}

// TestGroupScope: two requests share one pool; each Wait waits only for
// its own tasks and returns only its own error.
func TestGroupScope(t *testing.T) {
	p := newPool(t, 4)
	errA := errors.New("A failed")
	releaseA := make(chan struct{})
	gA, _ := p.Group(context.Background())
	gA.Go(func(context.Context) error { <-releaseA; return errA })

	gB, _ := p.Group(context.Background())
	var ran atomic.Int64
	for range 10 {
		gB.Go(func(context.Context) error { ran.Add(1); return nil })
	}
	within(t, 5*time.Second, "request B's Wait while A's task runs", func() {
		if err := gB.Wait(); err != nil {
			t.Errorf("B's Wait = %v, want nil", err)
		}
	})
	if ran.Load() != 10 {
		t.Fatalf("B ran %d tasks, want 10", ran.Load())
	}
	close(releaseA)
	if err := gA.Wait(); err != errA {
		t.Fatalf("A's Wait = %v", err)
	}
	if err := p.Wait(); err != nil {
		t.Fatalf("the pool-wide Wait saw a group's error: %v", err)
	}
}

// TestGroupEdges: nil tasks, submissions after the group's context is
// done, TryGo, a canceled parent and a closed pool.
func TestGroupEdges(t *testing.T) {
	p := newPool(t, 1)
	g, _ := p.Group(context.Background())
	g.Go(nil)
	if g.TryGo(nil) {
		t.Fatal("TryGo(nil) = true")
	}
	if err := g.Wait(); !errors.Is(err, pool.ErrNilTask) {
		t.Fatalf("Wait after Go(nil) = %v", err)
	}
	ran := false
	g.Go(func(context.Context) error { ran = true; return nil })
	if g.TryGo(func(context.Context) error { ran = true; return nil }) || ran {
		t.Fatal("a task ran after Wait canceled the group's context")
	}

	parent, cancel := context.WithCancelCause(context.Background())
	g, _ = p.Group(parent)
	stop := errors.New("request gone")
	cancel(stop)
	g.Go(func(context.Context) error { ran = true; return nil })
	if err := g.Wait(); err != stop || ran {
		t.Fatalf("Go with a canceled parent: Wait = %v, ran %v; want the parent's cause, not run", err, ran)
	}

	g, _ = p.Group(context.Background())
	release := make(chan struct{})
	g.Go(func(context.Context) error { <-release; return nil })
	if g.TryGo(func(context.Context) error { return nil }) {
		t.Fatal("TryGo with the only worker busy = true")
	}
	close(release)
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}

	q := pool.New(1)
	q.Close(context.Background())
	g, _ = q.Group(context.Background())
	g.Go(func(context.Context) error { return nil })
	if err := g.Wait(); !errors.Is(err, pool.ErrClosed) {
		t.Fatalf("Go on a closed pool: Wait = %v", err)
	}
}
