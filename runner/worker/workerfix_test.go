//go:build linux

package worker_test

import (
	"context"
	"errors"
	"testing"

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
