//go:build linux

package worker_test

import (
	"context"
	"fmt"
	"strings"
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

// TestGiveUpStats: when the pool gives up, every task ends counted once in
// Stats (tasks that no worker took fail with the *BrokenError, and the
// summary's "tasks:" must add up to the jobs), and Recreations counts the
// recreations that happened, MaxRecreations, not the giving up as one more.
// Before, the tasks failed before a worker took them were in no count and
// the summary said "6 recreations" where docs/workers.md says ration gives
// up after 5.
func TestGiveUpStats(t *testing.T) {
	p, _ := newPool(t, worker.Config{Command: []string{"sh", "-c", "read line; exit 3"}, Size: 2,
		Backoff: 10 * time.Millisecond, MaxRecreations: 2, MaxBreaks: 1000})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { p.Run(ctx, worker.Task{Seq: int64(i + 1), Input: "x"}) })
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatal("tasks did not end")
	}
	s := p.Stats()
	if got := s.Succeeded + s.Failed + s.Quarantined; got != n {
		t.Errorf("stats count %d tasks (%d succeeded, %d failed, %d quarantined), want %d", got, s.Succeeded, s.Failed, s.Quarantined, n)
	}
	if s.Recreations != 2 {
		t.Errorf("%d recreations counted, want MaxRecreations (2): giving up is not a recreation", s.Recreations)
	}
}

// TestAnswerOfMaxLine: an answer line of exactly Config.MaxLine bytes (its
// newline aside) is within the limit ("a longer line is a protocol
// break"; docs/workers.md: "An answer line may be up to 16 MiB"). Before,
// the newline counted, so such an answer broke the worker.
func TestAnswerOfMaxLine(t *testing.T) {
	const maxLine = 64
	answer := `{"id":1,"ok":true,"output":"` + strings.Repeat("x", maxLine-30) + `"}`
	if len(answer) != maxLine {
		t.Fatalf("test answer is %d bytes", len(answer))
	}
	script := fmt.Sprintf("while read l; do printf '%%s\\n' '%s'; done", answer)
	p, _ := newPool(t, worker.Config{Command: []string{"sh", "-c", script}, Size: 1, MaxLine: maxLine, MaxBreaks: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r := p.Run(ctx, worker.Task{Seq: 1, Input: "a"})
	if r.Outcome != event.Succeeded {
		t.Fatalf("answer of %d bytes with MaxLine %d: %v %v", len(answer), maxLine, r.Outcome, r.Err)
	}
	// One byte more is a break.
	script = fmt.Sprintf("while read l; do printf '%%s\\n' '%s '; done", answer)
	p2, _ := newPool(t, worker.Config{Command: []string{"sh", "-c", script}, Size: 1, MaxLine: maxLine, MaxBreaks: 1})
	if r := p2.Run(ctx, worker.Task{Seq: 1, Input: "a"}); r.Outcome != event.Quarantined || r.Cause != event.CauseProtocol {
		t.Fatalf("answer of %d bytes with MaxLine %d: %v %v, want a protocol break", len(answer)+1, maxLine, r.Outcome, r.Err)
	}
}

// TestStartedWhileWaitingForRedispatch: once the worker running a task
// broke, Started tells the owner (pid 0) before the task goes to another
// worker, so the running-jobs tables never name the dead worker while the
// task waits (a recreation's backoff can last many seconds). Before, the
// dead worker's pid stayed until another worker took the task.
func TestStartedWhileWaitingForRedispatch(t *testing.T) {
	p, _ := newPool(t, worker.Config{Command: pyWorker(t), Size: 1, MaxBreaks: 2})
	var mu sync.Mutex
	var pids []int
	started := func(_, pid int) {
		mu.Lock()
		defer mu.Unlock()
		pids = append(pids, pid)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := p.Run(ctx, worker.Task{Seq: 1, Input: "exit:3", Started: started})
	if r.Outcome != event.Quarantined {
		t.Fatalf("outcome %v (%v), want quarantined", r.Outcome, r.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(pids) != 3 || pids[0] <= 0 || pids[1] != 0 || pids[2] <= 0 || pids[2] == pids[0] {
		t.Errorf("Started pids %v, want [worker1 0 worker2]: pid 0 while the task waits for another worker", pids)
	}
}
