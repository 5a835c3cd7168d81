//go:build linux

package worker_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/worker"
)

// TestRealOOMRedispatchWaits: in a 128 MiB memory cgroup, task A holds 40
// MiB for 3 s on one worker; task B, which needs 95 MiB, is then given to
// the other and is OOM-killed beside A (the kernel takes the larger). B
// fits alone, so it must not be quarantined: its re-dispatch waits until
// no other task is in flight (half of the one that ran beside it), i.e.
// until A has ended, and then succeeds. Before the rule, B went to the
// replacement worker at once, beside A, was killed again and quarantined.
func TestRealOOMRedispatchWaits(t *testing.T) {
	cg := childCgroup(t, "memory")
	writeFile(t, filepath.Join(cg, "memory.limit_in_bytes"), strconv.Itoa(128<<20))
	if _, err := os.Stat(filepath.Join(cg, "memory.memsw.limit_in_bytes")); err == nil {
		writeFile(t, filepath.Join(cg, "memory.memsw.limit_in_bytes"), strconv.Itoa(128<<20)) // no escape into swap
	}
	p, rec := newPool(t, worker.Config{Command: []string{goWorker}, Size: 2, OnStart: moveTo(cg)})

	var (
		mu       sync.Mutex
		aStarted = make(chan struct{})
		bStarts  []worker.Stats // the pool's counters at each start of B
	)
	var wg sync.WaitGroup
	var ra, rb worker.Result
	wg.Add(1)
	go func() {
		defer wg.Done()
		ra = p.Run(context.Background(), worker.Task{Seq: 1, Input: "alloc:40:3000",
			Started: func(int, int) { close(aStarted) }})
	}()
	<-aStarted
	time.Sleep(300 * time.Millisecond) // A's 40 MiB are resident
	rb = p.Run(context.Background(), worker.Task{Seq: 2, Input: "alloc:95", Started: func(int, int) {
		s := p.Stats()
		mu.Lock()
		bStarts = append(bStarts, s)
		mu.Unlock()
	}})
	wg.Wait()

	if ra.Err != nil {
		t.Errorf("A: %v %v, want success", ra.Outcome, ra.Err)
	}
	var q *worker.QuarantinedError
	if errors.As(rb.Err, &q) {
		t.Fatalf("B was quarantined although it fits alone: %v", rb.Err)
	}
	if rb.Err != nil || rb.Outcome != event.Succeeded {
		t.Fatalf("B: %v %v, want success", rb.Outcome, rb.Err)
	}
	s := p.Stats()
	if s.Breaks[event.CauseOOM] < 1 || rb.Attempts < 2 || rb.Cause != event.CauseOOM {
		t.Fatalf("B: %d attempts, cause %v; pool breaks %v: the scenario did not OOM-kill B beside A", rb.Attempts, rb.Cause, s.Breaks)
	}
	mu.Lock()
	defer mu.Unlock()
	// Each re-dispatch of B started with B as the only busy worker: the
	// number of tasks in flight had dropped, not just the target.
	for i, st := range bStarts[1:] {
		if st.Busy != 1 {
			t.Errorf("B's start %d: %d busy workers (B included), want 1: it was re-dispatched beside A", i+2, st.Busy)
		}
	}
	if n := rec.count(event.WorkerBroken); n < 1 {
		t.Errorf("%d WorkerBroken events, want at least 1", n)
	}
	t.Logf("B: %d attempts; pool: %s", rb.Attempts, s)
}
