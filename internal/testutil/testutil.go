// Package testutil holds the helpers that ration's tests share: a buffer
// safe for concurrent writes, an event recorder, polling with a deadline,
// and (on Linux) child cgroups of the test process's own cgroup. It is
// imported by tests only.
package testutil

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ration-run/ration/runner/event"
)

// Buffer is a bytes.Buffer safe for concurrent use: jobs' output, logs and
// progress lines are written from several goroutines.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Len returns the number of bytes written so far.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Len()
}

// Recorder is an event.Observer that keeps every event, safe for
// concurrent use. Its zero value is ready.
type Recorder struct {
	mu     sync.Mutex
	events []event.Event
	notify chan struct{} // closed and replaced on every event
}

// Observe records e.
func (r *Recorder) Observe(e event.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	if r.notify != nil {
		close(r.notify)
		r.notify = nil
	}
	r.mu.Unlock()
}

// Events returns a copy of the events recorded so far, in order.
func (r *Recorder) Events() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Event(nil), r.events...)
}

// Kind returns the recorded events of kind k, in order.
func (r *Recorder) Kind(k event.Kind) []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event.Event
	for _, e := range r.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// Count returns how many events of kind k were recorded.
func (r *Recorder) Count(k event.Kind) int { return len(r.Kind(k)) }

// WaitFor blocks until cond holds over the recorded events, or fails the
// test after d. It wakes on every event, so it needs no polling interval.
func (r *Recorder) WaitFor(t testing.TB, d time.Duration, what string, cond func([]event.Event) bool) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		if cond(r.events) {
			r.mu.Unlock()
			return
		}
		if r.notify == nil {
			r.notify = make(chan struct{})
		}
		ch := r.notify
		r.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
	}
}

// Eventually polls cond every 10 ms until it holds, or fails the test after
// d. Use it only for state that has no event to wait on (a process table,
// a file written by a child process).
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// GoTool returns the go command that runs the tests: the one on PATH, else
// the one under $GOROOT (go test sets it for the test binary), else "go".
func GoTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := os.Getenv("GOROOT"); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	return "go"
}

// Timescale is $RATION_TEST_TIMESCALE (default 1): how many times slower
// than a real machine the test's CPUs are (the v2 lane's emulated ones:
// 10). Deadlines scale up by it, and what must race a real machine's
// timers (a job's memory growth against the memory guard's readings)
// scales down by it.
func Timescale() int {
	n, err := strconv.Atoi(os.Getenv("RATION_TEST_TIMESCALE"))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// GuardRaceGrowth is how fast, in MiB a second, a test job that must be
// stopped by ration's memory guard before the kernel's OOM killer fires
// grows: 0, as fast as it can (a memset, 1 to 2 GiB/s), on a real
// machine, and 2048/Timescale where the CPUs are emulated. In the v2
// lane's 2-vCPU guest a memset still runs at 1.6 GiB/s, but the emulator
// stalls one vCPU for 10 to 40 ms while the other runs, so a job growing
// at full speed there races the kernel as no pod's would. The lane's
// TestPodOOMStress measures the full-speed race in a one-vCPU boot, where
// such a stall stops the job too.
func GuardRaceGrowth() int {
	if ts := Timescale(); ts > 1 {
		return 2048 / ts
	}
	return 0
}
