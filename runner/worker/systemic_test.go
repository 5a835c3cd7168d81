//go:build linux

package worker_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/worker"
)

// gateWorker is a sh worker: input "poison" makes it exit 3 (a crash
// attributed to that task), input "gate" blocks until the file gate
// exists, and any other input is answered ok.
func gateWorker(gate string) []string {
	script := `while IFS= read -r line; do
  id=${line#*\"id\":}; id=${id%%,*}
  case $line in
    *'"input":"poison"'*) exit 3;;
    *'"input":"gate"'*) while [ ! -e "$0" ]; do sleep 0.01; done;;
  esac
  printf '{"id":%s,"ok":true,"output":"ok"}\n' "$id"
done`
	return []string{"sh", "-c", script, gate}
}

// TestPoisonTasksAmongHealthyOnesDoNotRecreate: poison tasks (each
// crashes every worker it runs on, and is quarantined for it) spread among
// tasks that succeed are not systemic breakage: "a poison task is
// quarantined, not a reason to recreate", and "no other task is affected".
// Before, breaks of two distinct poison tasks within BreakWindow recreated
// the pool, so 40 tasks with every 4th one poison (-j4) ran through 9
// recreations and their backoffs (9 s for 0.5 s of work, 51 workers
// started for 24 needed).
func TestPoisonTasksAmongHealthyOnesDoNotRecreate(t *testing.T) {
	const n, size = 40, 4
	p, _ := newPool(t, worker.Config{Command: []string{goWorker}, Size: size, MaxBreaks: 2,
		Backoff: 10 * time.Millisecond, MaxRecreations: 1 << 20})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Fed in order by size goroutines, as the runner does: every run of
	// size tasks in a row has tasks that succeed.
	results := make([]worker.Result, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range size {
		wg.Go(func() {
			for i := range next {
				in := fmt.Sprintf("sleep:20:%d", i)
				if i%4 == 3 {
					in = "exit:3"
				}
				results[i] = p.Run(ctx, worker.Task{Seq: int64(i + 1), Input: in})
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatal("tasks did not end")
	}
	for i, r := range results {
		want := event.Succeeded
		if i%4 == 3 {
			want = event.Quarantined
		}
		if r.Outcome != want {
			t.Errorf("task %d: %v (%v), want %v", i+1, r.Outcome, r.Err, want)
		}
	}
	s := p.Stats()
	const poison = n / 4
	if s.Recreations != 0 || s.Breaks[event.CauseExit] != 2*poison || s.Starts != size+2*poison {
		t.Errorf("%d recreations, %d exit breaks, %d workers started: want no recreation, %d breaks and %d starts (%s)",
			s.Recreations, s.Breaks[event.CauseExit], s.Starts, 2*poison, size+2*poison, s)
	}
}

// TestBrokenEnvironmentStillRecreates: when every task crashes its worker
// (nothing succeeds), breaks of distinct tasks are systemic: the pool
// recreates itself and gives up after MaxRecreations, as before, even with
// the default MaxBreaks quarantining each task after two breaks.
func TestBrokenEnvironmentStillRecreates(t *testing.T) {
	const n = 40
	p, _ := newPool(t, worker.Config{Command: []string{"sh", "-c", "read line; echo model missing >&2; exit 3"}, Size: 4,
		Backoff: 10 * time.Millisecond, MaxRecreations: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	broken := 0
	for i := range n {
		wg.Go(func() {
			r := p.Run(ctx, worker.Task{Seq: int64(i + 1), Input: "x"})
			var be *worker.BrokenError
			if errors.As(r.Err, &be) {
				mu.Lock()
				broken++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatal("tasks did not end")
	}
	s := p.Stats()
	if s.Recreations != 2 || broken == 0 || s.Succeeded != 0 {
		t.Errorf("%d recreations, %d tasks failed with *BrokenError (%s): want 2 recreations, then the pool gives up", s.Recreations, broken, s)
	}
}

// TestRecreationSparesInnocentTasks: with MaxBreaks 1, an innocent task
// running on a healthy worker while poison tasks crash theirs, and the
// innocent tasks that come meanwhile, did nothing wrong: each succeeds on
// its first attempt, and none is charged a break or quarantined. In
// "healthy-worker" the worker busy with the innocent task shows that the
// pool works, so the two poison tasks recreate nothing (before, they did).
// In "recreation" the innocent task runs in a slot that already broke
// since the last success and the next poison task breaks the other slot:
// the pool is recreated with the innocent task running and others
// waiting for the backoff.
func TestRecreationSparesInnocentTasks(t *testing.T) {
	for _, tc := range []struct {
		name        string
		recreations int64
	}{{"healthy-worker", 0}, {"recreation", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			gate := filepath.Join(t.TempDir(), "gate")
			size := 3
			if tc.recreations > 0 {
				size = 1
			}
			p, rec := newPool(t, worker.Config{Command: gateWorker(gate), Size: size, MaxBreaks: 1,
				Backoff: 50 * time.Millisecond, MaxRecreations: 1 << 20})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			type res struct {
				in string
				r  worker.Result
			}
			results := make(chan res, 64)
			var wg sync.WaitGroup
			run := func(seq int, in string) {
				wg.Go(func() { results <- res{in, p.Run(ctx, worker.Task{Seq: int64(seq), Input: in})} })
			}
			poison := func(seq int) {
				if r := p.Run(ctx, worker.Task{Seq: int64(seq), Input: "poison"}); r.Outcome != event.Quarantined {
					t.Fatalf("poison task: %v (%v), want quarantined", r.Outcome, r.Err)
				}
			}
			if tc.recreations > 0 {
				poison(2) // breaks slot 1, whose next worker takes the gate
			}
			run(1, "gate") // holds a worker, and keeps any task from succeeding
			waitFor(t, 30*time.Second, "the gate task to run", func() bool { return p.Stats().Busy == 1 })
			if tc.recreations > 0 {
				p.Resize(2, "test")
				poison(3) // breaks slot 2: both slots broke, on 2 tasks, nothing succeeded
				rec.WaitFor(t, 30*time.Second, "a PoolRecreated event", func(evs []event.Event) bool {
					return countKind(evs, event.PoolRecreated) >= 1
				})
			} else {
				poison(2)
				poison(3)
			}
			for i := range 20 {
				run(10+i, fmt.Sprintf("innocent-%d", i))
			}
			if err := os.WriteFile(gate, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			close(results)
			for r := range results {
				if r.r.Outcome != event.Succeeded || r.r.Attempts != 1 {
					t.Errorf("innocent task %s: %v after %d attempts (%v), want succeeded on its first", r.in, r.r.Outcome, r.r.Attempts, r.r.Err)
				}
			}
			if s := p.Stats(); s.Recreations != tc.recreations || s.Quarantined != 2 || s.Succeeded != 21 {
				t.Errorf("stats %s: want %d recreations, 2 quarantined, 21 succeeded", s, tc.recreations)
			}
			for _, e := range rec.snapshot() {
				if e.Kind == event.WorkerBroken && (strings.HasPrefix(e.Input, "innocent") || e.Input == "gate") {
					t.Errorf("an innocent task broke a worker: %+v", e)
				}
			}
		})
	}
}
