package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/gnu"
	"github.com/ration-run/ration/internal/runhook"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/input"
)

// TestObserverPanicLosesNoJob checks that an Observer that panics (user
// code) neither orphans the job whose event it was given nor drops it from
// the Summary: Run still returns only once every started job ended, counts
// every pulled job, stops starting new ones and says why in its error.
func TestObserverPanicLosesNoJob(t *testing.T) {
	dir := t.TempDir()
	// Job 1 outlives the others, so that a Run that does not wait for it
	// returns before its file exists.
	script := `[ "$1" = 1 ] && sleep 1; touch "$0/$1"`
	var mu sync.Mutex
	finished := map[int64]event.Outcome{}
	r, err := New(Config{
		Command: []string{"sh", "-c", script, dir}, Jobs: 2, Input: input.Args(nums(4)),
		Observer: event.Func(func(e event.Event) {
			if e.Kind == event.JobStarted && e.Seq == 1 {
				panic("observer bug")
			}
			if e.Kind == event.JobFinished {
				mu.Lock()
				finished[e.Seq] = e.Outcome
				mu.Unlock()
			}
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background())
	if !errors.Is(err, ErrObserverPanic) {
		t.Errorf("Run's error %v, want one wrapping ErrObserverPanic", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "1")); statErr != nil {
		t.Errorf("job 1 had not ended when Run returned: %v", statErr)
	}
	mu.Lock()
	defer mu.Unlock()
	if o, ok := finished[1]; !ok || o != event.Succeeded {
		t.Errorf("job 1's JobFinished: %v (seen %v), want succeeded", o, ok)
	}
	if n := sum.Succeeded + sum.Failed + sum.Killed + sum.NotStarted; n != int64(len(finished)) {
		t.Errorf("summary %+v counts %d jobs, %d JobFinished events", sum, n, len(finished))
	}
}

// panicky is an Executor with a bug: it panics on the job given, after
// starting it when started is set; it runs the others through a
// ProcessExecutor.
type panicky struct {
	seq     int64
	started bool
	pe      ProcessExecutor
}

func (p *panicky) Exec(ctx context.Context, a *Attempt) AttemptResult {
	if a.Seq == p.seq {
		if p.started {
			a.Started(a.Slot, 0)
		}
		panic("executor bug")
	}
	return p.pe.Exec(ctx, a)
}

// TestExecutorPanicFailsTheJob checks that a Config.Executor that panics
// fails the job it ran instead of losing it: one JobStarted and one
// JobFinished (failed) for it, a count in the Summary, and Run's error
// wrapping ErrExecutorPanic.
func TestExecutorPanicFailsTheJob(t *testing.T) {
	for _, started := range []bool{false, true} {
		rec := &recorder{}
		r, err := New(Config{Command: []string{"true"}, Jobs: 1, Input: input.Args(nums(3)),
			Executor: &panicky{seq: 1, started: started}, Observer: rec})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := r.Run(context.Background())
		if !errors.Is(err, ErrExecutorPanic) {
			t.Errorf("started %v: Run's error %v, want one wrapping ErrExecutorPanic", started, err)
		}
		fin := rec.Kind(event.JobFinished)
		if n := sum.Succeeded + sum.Failed + sum.Killed + sum.NotStarted; n != int64(len(fin)) || sum.Failed != 1 {
			t.Errorf("started %v: summary %+v, %d JobFinished events; want job 1 failed", started, sum, len(fin))
		}
		if s, f := len(rec.Kind(event.JobStarted)), sum.Succeeded+sum.Failed+sum.Killed; int64(s) != f {
			t.Errorf("started %v: %d JobStarted events for %d ended jobs", started, s, f)
		}
		for _, e := range fin {
			if e.Seq == 1 && (e.Outcome != event.Failed || !errors.Is(e.Err, ErrExecutorPanic)) {
				t.Errorf("started %v: job 1's JobFinished %v, %v", started, e.Outcome, e.Err)
			}
		}
	}
}

// TestCancelStopsDelay checks that canceling Run's context stops the run
// at once also while it waits before the next start (the dialect's
// BeforeStart: --delay), as Drain does: Run returns without waiting for
// the delay.
func TestCancelStopsDelay(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := New(Config{Command: []string{"true"}, Jobs: 2, Input: input.Args(nums(3)), Dialect: hookDialect{runhook.Hooks{BeforeStart: (&gnu.Delayer{D: time.Hour}).Wait}},
		Observer: event.Func(func(e event.Event) {
			if e.Kind == event.JobFinished {
				cancel()
			}
		})})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var sum Summary
	go func() {
		defer close(done)
		sum, err = r.Run(ctx)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // hang guard
		r.Drain()
		<-done
		t.Fatal("Run waited out the delay after its context was canceled")
	}
	if err != nil || sum.Succeeded != 1 || !sum.Interrupted || sum.InputDone {
		t.Errorf("summary %+v, error %v; want job 1 done, interrupted, input not read to its end", sum, err)
	}
}
