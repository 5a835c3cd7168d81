//go:build linux

package worker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/worker"
)

// TestResultStartIsFirstAttempt: Result.Start is when the first attempt
// started (the joblog's Starttime), and Duration runs from there to the
// end (its JobRuntime), also when the task was re-dispatched. Before, Start
// was taken when the first attempt ended, so every task's runtime was ~0.
func TestResultStartIsFirstAttempt(t *testing.T) {
	p, _ := newPool(t, worker.Config{Command: pyWorker(t), Size: 1, MaxBreaks: 3})
	const sleep = 300 * time.Millisecond
	for _, tc := range []struct {
		input    string
		outcome  event.Outcome
		attempts int
	}{
		{"sleep:300", event.Succeeded, 1},
		{"exit:3", event.Quarantined, 3},
	} {
		var mu sync.Mutex
		var first time.Time
		started := func(int, int) {
			mu.Lock()
			defer mu.Unlock()
			if first.IsZero() {
				first = time.Now()
			}
		}
		before := time.Now()
		r := p.Run(context.Background(), worker.Task{Seq: 1, Input: tc.input, Started: started})
		if r.Outcome != tc.outcome || r.Attempts != tc.attempts {
			t.Fatalf("%s: outcome %v after %d attempts (%v), want %v after %d", tc.input, r.Outcome, r.Attempts, r.Err, tc.outcome, tc.attempts)
		}
		mu.Lock()
		f := first
		mu.Unlock()
		if r.Start.Before(before) || r.Start.After(f) {
			t.Errorf("%s: Start %v is not between the call (%v) and the first worker taking the task (%v)",
				tc.input, r.Start.Format(time.StampMicro), before.Format(time.StampMicro), f.Format(time.StampMicro))
		}
		if tc.outcome == event.Succeeded && r.Duration < sleep {
			t.Errorf("%s: Duration %v, shorter than the task's own sleep of %v", tc.input, r.Duration, sleep)
		}
	}
}
