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
