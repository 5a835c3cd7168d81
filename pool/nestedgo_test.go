package pool_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/ration-run/ration/pool"
)

// TestNestedGroupSurvivesShrink: a Group created in a task, with the
// task's context, keeps going when the pool shrinks under it (the package
// documentation: nested work always makes progress, across a shrink too).
// A worker that had just finished a task looked idle, the group's Go (or
// TryGo) handed it a task through the queue, and the shrink retired that
// worker before it took the task: the only worker left was the one
// waiting in the group's Wait. Only the items of nested Maps were
// protected from this (see TestNestedMapSurvivesShrink); nested Go and
// Group submissions now are too. Before the fix, 4 of 12 runs of this
// test hung under the race detector (with Go and with TryGo).
func TestNestedGroupSurvivesShrink(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	for _, try := range []bool{false, true} {
		for round := range 3000 {
			p := pool.New(2)
			release := make(chan struct{})
			if err := p.Go(context.Background(), func(context.Context) error { <-release; return nil }); err != nil {
				t.Fatal(err)
			}
			waited := make(chan error, 1)
			if err := p.Go(context.Background(), func(ctx context.Context) error {
				close(release) // the other worker finishes and looks idle
				g, _ := p.Group(ctx)
				if try {
					g.TryGo(func(context.Context) error { return nil })
				} else {
					g.Go(func(context.Context) error { return nil })
				}
				p.Resize(1) // just after the task was handed over
				g.Go(func(context.Context) error { return nil })
				waited <- g.Wait()
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			within(t, 10*time.Second, fmt.Sprintf("TryGo %v, round %d: a nested Group across a shrink", try, round), func() {
				if err := <-waited; err != nil {
					t.Errorf("TryGo %v, round %d: Wait = %v", try, round, err)
				}
			})
			if err := p.Wait(); err != nil {
				t.Fatal(err)
			}
			closeEmpty(t, p, fmt.Sprintf("TryGo %v, round %d", try, round))
		}
	}
}
