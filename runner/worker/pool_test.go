//go:build linux

package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/workershell"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/worker"
)

type echo struct {
	Input string `json:"input"`
	PID   int    `json:"pid"`
	Tasks int    `json:"tasks"`
}

// TestExamples runs both documented example workers through the pool:
// answers, task errors, warm state, stderr passthrough with the slot prefix.
func TestExamples(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmd  func(t *testing.T) []string
	}{
		{"python", func(t *testing.T) []string { return pyWorker(t) }},
		{"go", func(*testing.T) []string { return []string{goWorker} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stderr := &lockedBuffer{}
			p, rec := newPool(t, worker.Config{Command: tc.cmd(t), Size: 1, Stderr: stderr})
			ctx := context.Background()
			for i := 1; i <= 3; i++ {
				out, err := p.Do(ctx, fmt.Sprintf("x%d", i))
				if err != nil {
					t.Fatal(err)
				}
				var e echo
				if err := json.Unmarshal(out, &e); err != nil {
					t.Fatalf("output %s: %v", out, err)
				}
				if e.Input != fmt.Sprintf("x%d", i) || e.Tasks != i {
					t.Errorf("task %d: got %+v, want input x%d after %d tasks on one warm worker", i, e, i, i)
				}
			}
			_, err := p.Do(ctx, "fail:no such file")
			var te *worker.TaskError
			if !errors.As(err, &te) || te.Message != "no such file" {
				t.Errorf("fail: got %v, want *TaskError with the worker's message", err)
			}
			out, err := p.Do(ctx, "stderr:hello from the worker")
			if err != nil || worker.OutputText(out) != "stderr:hello from the worker" {
				t.Errorf("stderr task: %s, %v", out, err)
			}
			waitFor(t, 5*time.Second, "stderr line", func() bool {
				return strings.Contains(stderr.String(), "[1] hello from the worker\n")
			})
			if s := p.Stats(); s.Starts != 1 || s.Succeeded != 4 || s.Failed != 1 || len(s.Breaks) != 0 {
				t.Errorf("stats %+v: want 1 start, 4 succeeded, 1 failed, no breaks", s)
			}
			// Job events are the runner's (package workerexec tests them):
			// the pool reports none.
			for _, k := range []event.Kind{event.JobStarted, event.JobRetried, event.JobFinished} {
				if n := rec.count(k); n != 0 {
					t.Errorf("the pool reported %d %v events, want none", n, k)
				}
			}
		})
	}
}

// TestBreakCauses checks the classification of every kind of break, the
// re-dispatch of the task and its quarantine after MaxBreaks, with the
// worker's last stderr lines.
func TestBreakCauses(t *testing.T) {
	for _, tc := range []struct {
		input  string
		cause  event.Cause
		detail string
	}{
		{"exit:3", event.CauseExit, "exited with status 3"},
		{"kill:15", event.CauseSignal, "killed by signal 15"},
		{"garbage", event.CauseProtocol, "broke the protocol"},
		{"sleep:60000", event.CauseTimeout, "exceeded the task timeout"},
	} {
		for _, w := range []struct {
			name string
			cmd  func(t *testing.T) []string
		}{
			{"python", func(t *testing.T) []string { return pyWorker(t) }},
			{"go", func(*testing.T) []string { return []string{goWorker} }},
		} {
			t.Run(w.name+"/"+tc.input, func(t *testing.T) {
				// Only the timeout case has a timeout: on a loaded machine
				// a worker's startup may take seconds.
				var timeout time.Duration
				if tc.cause == event.CauseTimeout {
					timeout = 4 * time.Second
				}
				p, rec := newPool(t, worker.Config{Command: w.cmd(t), Size: 2, Timeout: timeout,
					OOMKills: func() (int64, error) { return 0, nil }})
				ctx := context.Background()
				// A healthy task in parallel must not be affected.
				var wg sync.WaitGroup
				wg.Add(1)
				var okErr error
				go func() {
					defer wg.Done()
					for i := 0; i < 5 && okErr == nil; i++ {
						_, okErr = p.Do(ctx, "fine")
					}
				}()
				r := p.Run(ctx, worker.Task{Seq: 7, Input: tc.input})
				wg.Wait()
				if okErr != nil {
					t.Errorf("healthy task failed: %v", okErr)
				}
				var q *worker.QuarantinedError
				if !errors.As(r.Err, &q) || r.Outcome != event.Quarantined {
					t.Fatalf("got %v (%v), want quarantined", r.Err, r.Outcome)
				}
				var b *worker.BreakError
				if q.Cause != tc.cause || q.Breaks != 2 || r.Attempts != 2 || !errors.As(r.Err, &b) || b.Cause != tc.cause {
					t.Errorf("quarantine %+v (attempts %d), want cause %s after 2 breaks", q, r.Attempts, tc.cause)
				}
				if !strings.Contains(r.Err.Error(), tc.detail) {
					t.Errorf("error %q does not say %q", r.Err, tc.detail)
				}
				s := p.Stats()
				if s.Breaks[tc.cause] != 2 || s.Quarantined != 1 || s.Replacements != 2 || s.Recreations != 0 {
					t.Errorf("stats %+v: want 2 %s breaks, 1 quarantined, 2 replacements, no recreation", s, tc.cause)
				}
				if r.Cause != tc.cause || r.Outcome != event.Quarantined {
					t.Fatalf("result cause %s outcome %v, want quarantined by %s", r.Cause, r.Outcome, tc.cause)
				}
				if n := rec.count(event.JobFinished); n != 0 {
					t.Errorf("the pool reported %d JobFinished events, want none (they are the runner's)", n)
				}
				// A timed-out worker is killed by the pool: its SIGKILL is
				// the signal of the task's end (the joblog's Signal, from
				// the last break).
				if tc.cause == event.CauseTimeout && (b.Signal != syscall.SIGKILL || q.Last.Signal != syscall.SIGKILL) {
					t.Errorf("timeout break signal %v, last break signal %v: want SIGKILL", b.Signal, q.Last.Signal)
				}
			})
		}
	}
}

// TestQuarantineStderr checks that a quarantined task carries the last
// stderr lines of the worker it broke.
func TestQuarantineStderr(t *testing.T) {
	p, _ := newPool(t, worker.Config{Command: []string{"sh", "-c", `read line; echo "about to die: $line" >&2; exit 4`}, Size: 1})
	_, err := p.Do(context.Background(), "x")
	var q *worker.QuarantinedError
	if !errors.As(err, &q) {
		t.Fatalf("got %v, want quarantine", err)
	}
	if len(q.LastStderr) == 0 || !strings.HasPrefix(q.LastStderr[len(q.LastStderr)-1], "about to die: {") {
		t.Errorf("LastStderr %q, want the worker's last words", q.LastStderr)
	}
	if !strings.Contains(err.Error(), "exited with status 4") || !strings.Contains(err.Error(), "about to die") {
		t.Errorf("error %q should name the exit status and the last stderr line", err)
	}
}

// TestCancel checks a task cancelled while it runs: ctx error, worker
// killed and replaced (not a break), and a task cancelled before any
// worker took it.
func TestCancel(t *testing.T) {
	p, _ := newPool(t, worker.Config{Command: pyWorker(t), Size: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	r := p.Run(ctx, worker.Task{Input: "sleep:10000"})
	if !errors.Is(r.Err, context.DeadlineExceeded) || r.Outcome != event.Stopped {
		t.Fatalf("got %v %v, want DeadlineExceeded, stopped", r.Err, r.Outcome)
	}
	if _, err := p.Do(context.Background(), "after"); err != nil {
		t.Fatalf("pool unusable after a cancel: %v", err)
	}
	s := p.Stats()
	if s.Starts != 2 || len(s.Breaks) != 0 {
		t.Errorf("stats %+v: want a replacement start and no break", s)
	}
	done, stop := context.WithCancel(context.Background())
	stop()
	if r := p.Run(done, worker.Task{Input: "x"}); r.Outcome != event.NotStarted || !errors.Is(r.Err, context.Canceled) {
		t.Errorf("cancelled before start: %v %v", r.Outcome, r.Err)
	}
}

// TestClose checks Close: waiting tasks fail with ErrClosed, a running task
// finishes, later tasks fail with ErrClosed, and a Close whose ctx ends
// kills the workers.
func TestClose(t *testing.T) {
	p, err := worker.New(context.Background(), worker.Config{Command: pyWorker(t), Size: 1, Stderr: &lockedBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	running := make(chan worker.Result)
	taken := make(chan struct{})
	go func() {
		running <- p.Run(context.Background(), worker.Task{Input: "sleep:500", Started: func(int, int) { close(taken) }})
	}()
	<-taken // a worker took the task
	waiting := make(chan error)
	go func() { _, err := p.Do(context.Background(), "queued"); waiting <- err }()
	time.Sleep(50 * time.Millisecond) // most likely waiting for the busy worker by now; ErrClosed either way
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := <-running; r.Err != nil {
		t.Errorf("running task: %v, want it finished", r.Err)
	}
	if err := <-waiting; !errors.Is(err, worker.ErrClosed) {
		t.Errorf("waiting task: %v, want ErrClosed", err)
	}
	if _, err := p.Do(context.Background(), "late"); !errors.Is(err, worker.ErrClosed) {
		t.Errorf("task after Close: %v, want ErrClosed", err)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}

	// A worker that ignores stdin EOF and a task that never ends: Close's
	// ctx decides.
	p2, err := worker.New(context.Background(), worker.Config{Command: pyWorker(t), Size: 1, Stderr: &lockedBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { running <- p2.Run(context.Background(), worker.Task{Input: "sleep:60000"}) }()
	waitFor(t, 5*time.Second, "the task to start", func() bool { return p2.Stats().Busy == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := p2.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close: %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Close took %v after its ctx ended", d)
	}
	if r := <-running; !errors.Is(r.Err, worker.ErrClosed) {
		t.Errorf("killed task: %v, want ErrClosed", r.Err)
	}
	if kids := children(nil); len(kids) > 0 {
		t.Errorf("leftover processes: %v", kids)
	}
}

// TestGiveUp checks that a worker command that dies at once makes the
// pool give up with a *BrokenError instead of recreating forever.
func TestGiveUp(t *testing.T) {
	p, rec := newPool(t, worker.Config{Command: []string{"sh", "-c", "echo cannot load model >&2; exit 3"}, Size: 2,
		Backoff: 10 * time.Millisecond, MaxRecreations: 2, MaxBreaks: 1000})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := p.Do(ctx, "x")
	var be *worker.BrokenError
	if !errors.As(err, &be) {
		t.Fatalf("got %v, want *BrokenError", err)
	}
	if !strings.Contains(err.Error(), "exited with status 3") || !strings.Contains(err.Error(), "cannot load model") {
		t.Errorf("error %q should name the exit status and the last stderr line", err)
	}
	if _, err := p.Do(ctx, "y"); !errors.As(err, &be) {
		t.Errorf("later task: %v, want *BrokenError", err)
	}
	// The final PoolRecreated (the pool giving up) is reported by the
	// supervisor, which may still be at it when Do returns: wait for it,
	// then check that no fourth came.
	rec.WaitFor(t, 10*time.Second, "3 PoolRecreated events", func(evs []event.Event) bool {
		return countKind(evs, event.PoolRecreated) >= 3
	})
	if n := rec.count(event.PoolRecreated); n != 3 {
		t.Errorf("%d PoolRecreated events, want 2 recreations and the final one", n)
	}
}

func countKind(evs []event.Event, k event.Kind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// TestNewErrors checks New's validation.
func TestNewErrors(t *testing.T) {
	if _, err := worker.New(context.Background(), worker.Config{}); err == nil {
		t.Error("empty command accepted")
	}
	if _, err := worker.New(context.Background(), worker.Config{Command: []string{"/no/such/worker"}}); err == nil {
		t.Error("missing command accepted")
	}
}

// TestRecycle checks MaxTasks and MaxRSS: a worker is retired after its
// task and a fresh one takes over; no task is lost.
func TestRecycle(t *testing.T) {
	t.Run("max-tasks", func(t *testing.T) {
		p, rec := newPool(t, worker.Config{Command: []string{goWorker}, Size: 2, MaxTasks: 3})
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := p.Do(context.Background(), fmt.Sprint(i))
				var e echo
				if err == nil {
					err = json.Unmarshal(out, &e)
				}
				if err == nil && (e.Tasks > 3 || e.Input != fmt.Sprint(i)) {
					err = fmt.Errorf("worker ran %d tasks (max 3) or wrong answer %+v", e.Tasks, e)
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		// A worker is counted recycled just after its last answer, which
		// may come after Do returned: wait for the counts.
		waitFor(t, 10*time.Second, ">= 6 recycled, >= 7 starts", func() bool {
			s := p.Stats()
			return s.Recycled >= 6 && s.Starts >= 7
		})
		if s := p.Stats(); len(s.Breaks) != 0 {
			t.Errorf("stats %+v: want no breaks", s)
		}
		// Retired workers stop after their last answer: wait for them.
		waitFor(t, 10*time.Second, ">= 6 WorkerRetired events", func() bool { return rec.count(event.WorkerRetired) >= 6 })
	})
	t.Run("max-rss", func(t *testing.T) {
		p, _ := newPool(t, worker.Config{Command: []string{goWorker}, Size: 1, MaxRSS: 40 << 20})
		// The Go worker keeps the freed 64 MiB resident for a while:
		// its tree RSS after the task exceeds 40 MiB.
		r := p.Run(context.Background(), worker.Task{Input: "alloc:64"})
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		if r.PeakRSS < 40<<20 {
			t.Skipf("the Go runtime released the memory at once (RSS %d): nothing to recycle", r.PeakRSS)
		}
		waitFor(t, 5*time.Second, "the recycle", func() bool { s := p.Stats(); return s.Recycled == 1 && s.Starts == 2 })
		if _, err := p.Do(context.Background(), "x"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestIdleBreak checks a worker that dies while idle: replaced, and the next
// task runs.
func TestIdleBreak(t *testing.T) {
	p, rec := newPool(t, worker.Config{Command: pyWorker(t), Size: 1})
	if _, err := p.Do(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	pids := rec.livePIDs()
	if len(pids) != 1 {
		t.Fatalf("live workers %v", pids)
	}
	syscall.Kill(pids[0], syscall.SIGKILL)
	waitFor(t, 5*time.Second, "the replacement", func() bool { return p.Stats().Replacements == 1 })
	if _, err := p.Do(context.Background(), "y"); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Breaks[event.CauseSignal] != 1 {
		t.Errorf("stats %+v: want one signal break", s)
	}
}

// TestProtocolBreaks runs small shell workers that break the protocol in
// each way the pool must notice.
func TestProtocolBreaks(t *testing.T) {
	answer := `while read l; do id=${l#*:}; id=${id%%,*}; echo "%s"; done`
	for _, tc := range []struct {
		name, script, detail string
		maxLine              int
	}{
		{"banner", `echo ready; ` + fmt.Sprintf(answer, `{\"id\":$id,\"ok\":true,\"output\":1}`), `"ready"`, 0}, // read as idle output or as the answer: a break either way
		{"wrong-id", fmt.Sprintf(answer, `{\"id\":999,\"ok\":true,\"output\":1}`), `"id" 999`, 0},
		{"no-output", fmt.Sprintf(answer, `{\"id\":$id,\"ok\":true}`), `no "output"`, 0},
		{"long-line", fmt.Sprintf(answer, `{\"id\":$id,\"ok\":true,\"output\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}`), "longer than the limit", 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPool(t, worker.Config{Command: []string{"sh", "-c", tc.script}, Size: 1, MaxLine: tc.maxLine,
				BreakWindow: time.Nanosecond})
			_, err := p.Do(context.Background(), "x")
			var b *worker.BreakError
			if !errors.As(err, &b) || b.Cause != event.CauseProtocol || !strings.Contains(err.Error(), tc.detail) {
				t.Errorf("got %v, want a protocol break saying %q", err, tc.detail)
			}
		})
	}
}

// TestShellCommand checks that a --worker command line runs through the
// shell and that the worker process is the interpreter itself (exec).
func TestShellCommand(t *testing.T) {
	py := pyWorker(t)
	p, rec := newPool(t, worker.Config{Command: workershell.Command(fmt.Sprintf("%q %q --unused-arg 'two words'", py[0], py[1])), Size: 1})
	out, err := p.Do(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	var e echo
	if err := json.Unmarshal(out, &e); err != nil {
		t.Fatal(err)
	}
	if pids := rec.livePIDs(); len(pids) != 1 || pids[0] != e.PID {
		t.Errorf("worker pid %d, pool watches %v: the shell was not replaced", e.PID, pids)
	}
}

// TestShellCommandLines: --worker lines that do not start with a program
// (an assignment, a builtin such as cd, exec itself) run as the shell reads
// them. "exec " was put before every line, so "FOO=1 w" ran "exec FOO=1"
// and "cd d && w" ran "exec cd": not found, every worker broke and the run
// gave up after 31 s.
func TestShellCommandLines(t *testing.T) {
	dir := t.TempDir()
	for _, line := range []string{
		fmt.Sprintf("%q", goWorker),
		fmt.Sprintf("RATION_TEST_VAR=1 %q", goWorker),
		fmt.Sprintf("cd %q && %q", dir, goWorker),
		fmt.Sprintf("exec %q", goWorker),
		fmt.Sprintf("command %q", goWorker),
		fmt.Sprintf("if true; then exec %q; fi", goWorker),
		fmt.Sprintf(": start; %q", goWorker),
		fmt.Sprintf("true && %q", goWorker), // "exec true && w" never ran w
		fmt.Sprintf("sleep 0; %q", goWorker),
	} {
		t.Run(line, func(t *testing.T) {
			p, _ := newPool(t, worker.Config{Command: workershell.Command(line), Size: 1, BreakWindow: time.Nanosecond, MaxBreaks: 1, MaxRecreations: 1})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := p.Do(ctx, "x"); err != nil {
				t.Errorf("%s", err)
			}
		})
	}
}

// TestResultDuration: a task's Result starts when a worker took it, and
// its Duration covers the task's run. Start was taken when the answer
// came, so a 300 ms task lasted about 0 s (and so did every --worker job
// in the joblog).
func TestResultDuration(t *testing.T) {
	p, _ := newPool(t, worker.Config{Command: []string{goWorker}, Size: 1})
	before := time.Now()
	r := p.Run(context.Background(), worker.Task{Input: "sleep:300"})
	after := time.Now()
	if r.Outcome != event.Succeeded {
		t.Fatalf("outcome %v: %v", r.Outcome, r.Err)
	}
	if r.Duration < 300*time.Millisecond || r.Start.Before(before) || r.Start.Add(r.Duration).After(after) {
		t.Errorf("Start %v (+%v after the call), Duration %v: want the task's 300 ms sleep within the call's %v",
			r.Start, r.Start.Sub(before), r.Duration, after.Sub(before))
	}
}
