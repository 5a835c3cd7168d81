package workerexec_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/internal/workerexec"
	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/input"
	"github.com/ration-run/ration/runner/joblog"
	"github.com/ration-run/ration/runner/worker"
)

// pyWorker is the command of the Python example worker (skipped
// without a usable python3).
func pyWorker(t *testing.T) []string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("..", "..", "runner", "worker", "examples", "worker.py"))
	if err != nil {
		t.Fatal(err)
	}
	return []string{testutil.Python(t), abs}
}

// TestWorkerExecutor runs jobs on real Python workers through the runner:
// one output line per task in input order (-k), task errors and
// quarantined tasks on stderr with their input and counted as failed, the
// joblog written as in process mode, and exactly one JobStarted and one
// JobFinished per job although the pool re-dispatches the task that kills
// its workers.
func TestWorkerExecutor(t *testing.T) {
	var rec, poolEvents testutil.Recorder
	x, err := workerexec.New(worker.Config{Command: pyWorker(t), Size: 2,
		Observer: &poolEvents, Stderr: &testutil.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr testutil.Buffer
	jl := filepath.Join(t.TempDir(), "joblog")
	inputs := []string{"a", "fail:boom", "kill:9", "sleep:100", "b"}
	r, err := runner.New(runner.Config{Command: []string{"worker", "{}"}, Input: input.Args(inputs), Jobs: 2, KeepOrder: true,
		Joblog: jl, Observer: &rec, Stdout: &stdout, Stderr: &stderr, Executor: x})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Succeeded != 3 || sum.Failed != 2 || sum.Quarantined != 1 {
		t.Errorf("summary %+v: want 3 succeeded, 2 failed of which 1 quarantined", sum)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"input":"a"`) || lines[1] != "sleep:100" || !strings.Contains(lines[2], `"input":"b"`) {
		t.Errorf("stdout %q: want the answers of a, sleep:100, b in input order, one line each", lines)
	}
	errs := stderr.String()
	if !strings.Contains(errs, `ration: input "fail:boom": worker: task failed: boom`) ||
		!strings.Contains(errs, `ration: input "kill:9": task quarantined after breaking 2 workers`) {
		t.Errorf("stderr %q: want one line per failed task with its input", errs)
	}
	started, finished := map[int64]int{}, map[int64]int{}
	for _, e := range rec.Events() {
		switch e.Kind {
		case event.JobStarted:
			started[e.Seq]++
			if e.PID <= 0 {
				t.Errorf("JobStarted %+v without the worker's pid", e)
			}
		case event.JobFinished:
			finished[e.Seq]++
			if e.Seq == 3 && (e.Outcome != event.Quarantined || e.Cause != event.CauseSignal || e.Signal != 9) {
				t.Errorf("kill:9 finished as %+v, want quarantined by signal 9", e)
			}
		case event.JobRetried:
			t.Errorf("JobRetried %+v: a re-dispatch inside the pool is not a runner retry", e)
		}
	}
	for seq := int64(1); seq <= int64(len(inputs)); seq++ {
		if started[seq] != 1 || finished[seq] != 1 {
			t.Errorf("job %d: %d JobStarted, %d JobFinished, want 1 each", seq, started[seq], finished[seq])
		}
	}
	// The run closed the pool when it ended: no worker is left.
	if ws := x.Pool().Workers(); len(ws) != 0 {
		t.Errorf("workers left after the run: %+v", ws)
	}
	// The pool reports worker events only; the job events are the runner's.
	for _, k := range []event.Kind{event.JobStarted, event.JobFinished, event.JobRetried} {
		if n := poolEvents.Count(k); n > 0 {
			t.Errorf("the pool reported %d %v events", n, k)
		}
	}
	// The run's observer sees the pool's worker events too, once each.
	if a, b := rec.Count(event.WorkerBroken), poolEvents.Count(event.WorkerBroken); a != b {
		t.Errorf("%d WorkerBroken events reached the run's observer, the pool reported %d", a, b)
	}
	broken := poolEvents.Kind(event.WorkerBroken)
	if len(broken) != 2 {
		t.Fatalf("%d WorkerBroken events, want 2", len(broken))
	}
	// The job's events name the worker's slot, as the pool's own do.
	for _, e := range rec.Kind(event.JobFinished) {
		if e.Seq == 3 && (e.Slot != broken[1].Slot || e.PID != broken[1].PID) {
			t.Errorf("kill:9 finished on slot %d pid %d, want the last broken worker's: slot %d pid %d",
				e.Slot, e.PID, broken[1].Slot, broken[1].PID)
		}
	}
	rec2, err := joblog.Load(jl)
	if err != nil {
		t.Fatal(err)
	}
	for seq := int64(1); seq <= int64(len(inputs)); seq++ {
		if ok := seq != 2 && seq != 3; rec2.Succeeded(seq) != ok || !rec2.Ended(seq) {
			t.Errorf("joblog job %d: succeeded %v, want %v", seq, rec2.Succeeded(seq), ok)
		}
	}
	b, _ := os.ReadFile(jl)
	// GNU parallel's columns (joblog.ExitColumns): killed by a signal that
	// did not come from the runner is Exitval 0, Signal 9.
	if !strings.Contains(string(b), "\t0\t9\tworker 'kill:9'\n") {
		t.Errorf("joblog has no line with exit 0, signal 9 for kill:9:\n%s", b)
	}
}

// TestWorkerExecutorDrain: a task still waiting for a free worker when the
// run drains never starts (NotStarted, no JobStarted); the running one
// finishes and is recorded.
func TestWorkerExecutorDrain(t *testing.T) {
	x, err := workerexec.New(worker.Config{Command: pyWorker(t), Size: 1, Stderr: &testutil.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	// Both jobs wait for the one worker; whichever gets it first runs and
	// the other must never start.
	var r *runner.Runner
	var rec testutil.Recorder
	var first atomic.Pointer[string]
	obs := event.Multi{&rec, event.Func(func(e event.Event) {
		if e.Kind == event.JobStarted && first.CompareAndSwap(nil, &e.Input) {
			go r.Drain() // not from the observer's own call: Drain does not block, but be plain
		}
	})}
	var stdout testutil.Buffer
	r, err = runner.New(runner.Config{Command: []string{"worker", "{}"}, Input: input.Args([]string{"sleep:500:a", "sleep:500:b"}),
		Jobs: 2, TermTimeout: time.Minute, Observer: obs, Stdout: &stdout, Executor: x})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ran := *first.Load()
	if sum.Succeeded != 1 || sum.NotStarted != 1 || sum.Failed != 0 || sum.Killed != 0 {
		t.Errorf("summary %+v: want %s succeeded, the other not started", sum, ran)
	}
	if strings.TrimSpace(stdout.String()) != ran {
		t.Errorf("stdout %q, want only %s's answer", stdout.String(), ran)
	}
	for _, e := range rec.Events() {
		if e.Kind >= event.WorkerStarted {
			continue // the pool's own events
		}
		if e.Input != ran && (e.Kind != event.JobFinished || e.Outcome != event.NotStarted) {
			t.Errorf("%s: event %v %v, want only JobFinished NotStarted", e.Input, e.Kind, e.Outcome)
		}
	}
}

// TestStatsCountJobAttempts: the worker summary's outcome counts are per
// attempt of a job (each --retries attempt is one pool task), and the
// summary says so. Before, "tasks: 1 succeeded, 3 failed" stood beside the
// runner's "1 done, 1 failed" for one job that failed its 3 attempts.
func TestStatsCountJobAttempts(t *testing.T) {
	x, err := workerexec.New(worker.Config{Command: pyWorker(t), Size: 1, Stderr: &testutil.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr testutil.Buffer
	r, err := runner.New(runner.Config{Command: []string{"worker", "{}"}, Input: input.Args([]string{"a", "fail:boom"}), Jobs: 1,
		Retries: 3, Stdout: &stdout, Stderr: &stderr, Executor: x})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Succeeded != 1 || sum.Failed != 1 {
		t.Fatalf("summary %+v: want 1 succeeded, 1 failed", sum)
	}
	if s := x.Stats().String(); !strings.Contains(s, "job attempts: 1 succeeded, 3 failed, 0 quarantined") {
		t.Errorf("worker summary %q: want it to count job attempts, and say so", s)
	}
}
