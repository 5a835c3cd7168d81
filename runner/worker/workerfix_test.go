//go:build linux

package worker_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/worker"
)

// TestStoppedTaskIsNotFailed: a task whose context ends while a worker
// runs it (its owner stopped it: ration run's SIGTERM) ends Stopped, as a
// stopped job does, and Stats counts it as stopped, not failed. Before, it
// was a failed task, and the summary of an interrupted ration run --worker
// said "tasks: 0 succeeded, 2 failed" beside "2 killed".
func TestStoppedTaskIsNotFailed(t *testing.T) {
	p, _ := newPool(t, worker.Config{Command: pyWorker(t), Size: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{}, 1)
	go func() {
		<-started
		cancel()
	}()
	r := p.Run(ctx, worker.Task{Seq: 1, Input: "sleep:30000", Started: func(_, pid int) {
		if pid > 0 {
			started <- struct{}{}
		}
	}})
	if r.Outcome != event.Stopped || !errors.Is(r.Err, context.Canceled) || r.Attempts != 1 {
		t.Errorf("outcome %v, err %v after %d attempts; want stopped, context.Canceled, 1", r.Outcome, r.Err, r.Attempts)
	}
	s := p.Stats()
	if s.Stopped != 1 || s.Failed != 0 {
		t.Errorf("stats count %d stopped and %d failed, want 1 and 0", s.Stopped, s.Failed)
	}
	if _, err := p.Do(context.Background(), "after"); err != nil {
		t.Fatalf("pool unusable after a stop: %v", err)
	}
}

// lazyWorker answers its first task at once. Then it sits a minute
// before it reads the next one ("sit"), or exits with status 3 half a
// second after its answer without reading again ("exit").
const lazyWorker = `import json, os, sys, time
n = 0
while True:
    if n > 0:
        if sys.argv[1] == "exit":
            time.sleep(0.5)
            os._exit(3)
        time.sleep(60)
    line = sys.stdin.readline()
    if not line:
        break
    task = json.loads(line)
    sys.stdout.write(json.dumps({"id": task["id"], "ok": True, "output": "done"}) + "\n")
    sys.stdout.flush()
    n += 1
`

// TestDeathBeforeReadingIsNotCharged: a worker that dies before it read its
// task (killed while the request sits unread in its stdin or before it
// could be written, or exiting between tasks as the next one reaches it)
// did not break on the task: the task goes to a fresh worker without a
// break charged against its MaxBreaks, as if the worker had died while
// idle. A worker killed after it read the task still charges it. Before,
// every such death counted, and with MaxBreaks 1 the task was
// quarantined.
func TestDeathBeforeReadingIsNotCharged(t *testing.T) {
	py := testutil.Python(t)
	for _, tc := range []struct {
		name  string
		mode  string        // lazyWorker's
		kill  bool          // SIGKILL the worker when it is handed the second task
		after time.Duration // and this long after
		input string        // of the second task
	}{
		{"KilledAsHandedTheTask", "sit", true, 0, "second"},
		{"ExitedBetweenTasks", "exit", false, 0, "second"},
		// More than a pipe holds: the write fills the pipe and waits,
		// and the death cuts it short.
		{"KilledWithALargeTaskHalfWritten", "sit", true, 300 * time.Millisecond, strings.Repeat("x", 200<<10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPool(t, worker.Config{Command: []string{py, "-c", lazyWorker, tc.mode}, Size: 1, MaxBreaks: 1,
				StopGrace: 100 * time.Millisecond})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if r := p.Run(ctx, worker.Task{Seq: 1, Input: "first"}); r.Outcome != event.Succeeded {
				t.Fatalf("first task: %v %v", r.Outcome, r.Err)
			}
			var once sync.Once
			r := p.Run(ctx, worker.Task{Seq: 2, Input: tc.input, Started: func(_, pid int) {
				if pid > 0 && tc.kill {
					// The worker that answered the first task sits in
					// its sleep: it will not read this one.
					once.Do(func() {
						time.AfterFunc(tc.after, func() {
							if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
								t.Errorf("kill: %v", err)
							}
						})
					})
				}
			}})
			if r.Outcome != event.Succeeded {
				t.Errorf("outcome %v after %d attempts (%v); want succeeded on another worker, no break charged", r.Outcome, r.Attempts, r.Err)
			}
			if s := p.Stats(); len(s.Breaks) != 1 {
				t.Errorf("breaks %v, want the first worker's one", s.Breaks)
			}
		})
	}
	t.Run("ReadThenKilled", func(t *testing.T) {
		p, _ := newPool(t, worker.Config{Command: pyWorker(t), Size: 1, MaxBreaks: 1})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r := p.Run(ctx, worker.Task{Seq: 1, Input: "kill:9"})
		var q *worker.QuarantinedError
		if r.Outcome != event.Quarantined || !errors.As(r.Err, &q) || q.Cause != event.CauseSignal {
			t.Errorf("outcome %v (%v); want quarantined by its one break (MaxBreaks 1)", r.Outcome, r.Err)
		}
	})
}
