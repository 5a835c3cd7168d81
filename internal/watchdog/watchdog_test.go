package watchdog

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/ration-run/ration/internal/jobtable"
	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/runner/event"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuffer is the shared buffer safe for concurrent use.
type syncBuffer = testutil.Buffer

// table is a running-jobs table the test changes while the watchdog reads it.
type table struct {
	mu   sync.Mutex
	rows []Row
}

func (t *table) set(rows ...Row) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rows = rows
}

func (t *table) get() []Row {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Row(nil), t.rows...)
}

// start runs w until the test ends.
func start(t *testing.T, w *Watchdog) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// waitFor polls cond for up to 10s: generous, because the machine is shared.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sleeper starts a real process that stays until the test ends.
func sleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

func TestStallReportOncePerStall(t *testing.T) {
	// The watchdog's clock is the bubble's: its sleeps take no time.
	pid := sleeper(t).Process.Pid
	synctest.Test(t, func(t *testing.T) { stallReportOncePerStall(t, pid) })
}

func stallReportOncePerStall(t *testing.T, pid int) {
	var tab table
	tab.set(Row{Slot: 2, PID: pid, Seq: 41, Input: "stuck-input.csv", Started: time.Now(), LastLine: "chunk 9 of 12"})
	var out, logs syncBuffer
	w, err := New(Options{
		Running:      tab.get,
		StallTimeout: 150 * time.Millisecond,
		Interval:     10 * time.Millisecond,
		Out:          &out,
		Logger:       slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	start(t, w)

	reports := func() int { return strings.Count(out.String(), "ration: stall:") }
	waitFor(t, "the first stall report", func() bool { return reports() == 1 })
	time.Sleep(500 * time.Millisecond) // many more ticks: still one report
	got := out.String()
	if n := reports(); n != 1 {
		t.Fatalf("%d stall reports for one stall, want 1:\n%s", n, got)
	}
	if strings.Count(got, "stuck-input.csv") != 1 {
		t.Errorf("the job's input is not in the report exactly once:\n%s", got)
	}
	if !strings.Contains(got, " "+strconv.Itoa(pid)+" ") || !strings.Contains(got, "chunk 9 of 12") {
		t.Errorf("report lacks pid %d or the last line:\n%s", pid, got)
	}
	if !strings.Contains(got, "goroutine ") || !strings.Contains(got, "watchdog.(*Watchdog).Run") {
		t.Errorf("report lacks ration's goroutine stacks:\n%.2000s", got)
	}
	if strings.Count(logs.String(), "stall: no job finished") != 1 {
		t.Errorf("log has not exactly one stall warning:\n%s", logs.String())
	}

	// A job finishes, the sleeper is still stuck: a new stall, a new report.
	w.Observe(event.Event{Kind: event.JobFinished, Seq: 40, Outcome: event.Succeeded, Time: time.Now()})
	waitFor(t, "the second stall report", func() bool { return reports() == 2 })
	time.Sleep(300 * time.Millisecond)
	if n := reports(); n != 2 {
		t.Errorf("%d stall reports after two stalls, want 2", n)
	}
}

func TestNoStallWhileJobsFinishOrNoneRun(t *testing.T) {
	synctest.Test(t, noStallWhileJobsFinishOrNoneRun)
}

func noStallWhileJobsFinishOrNoneRun(t *testing.T) {
	var tab table // empty: nothing runs, so waiting is not a stall
	var out syncBuffer
	w, err := New(Options{Running: tab.get, StallTimeout: 100 * time.Millisecond, Interval: 10 * time.Millisecond, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	start(t, w)
	time.Sleep(300 * time.Millisecond)
	// Now a job starts; jobs keep finishing faster than the timeout.
	tab.set(Row{Slot: 1, PID: os.Getpid(), Seq: 1, Started: time.Now()})
	for range 20 {
		time.Sleep(20 * time.Millisecond)
		w.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Failed})
	}
	if s := out.String(); s != "" {
		t.Errorf("stall reported without a stall:\n%s", s)
	}
}

func TestStallJSON(t *testing.T) {
	cmd := sleeper(t)
	synctest.Test(t, func(t *testing.T) { stallJSON(t, cmd) })
}

func stallJSON(t *testing.T, cmd *exec.Cmd) {
	var tab table
	tab.set(Row{Slot: 1, PID: cmd.Process.Pid, Seq: 3, Input: "a\tb\xff", Started: time.Now().Add(-time.Hour)})
	var logs syncBuffer
	w, err := New(Options{Running: tab.get, StallTimeout: 50 * time.Millisecond, Interval: 10 * time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	start(t, w)
	waitFor(t, "the stall record", func() bool { return strings.Contains(logs.String(), "stall") })
	var rec struct {
		Msg        string
		Jobs       []jobtable.JSONRow
		Goroutines string
	}
	line, _, _ := strings.Cut(logs.String(), "\n")
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatalf("stall record is not one JSON line: %v\n%s", err, logs.String())
	}
	if len(rec.Jobs) != 1 || rec.Jobs[0].PID != cmd.Process.Pid || rec.Jobs[0].Seq != 3 ||
		!strings.HasPrefix(rec.Jobs[0].Input, "a\tb") || !strings.Contains(rec.Goroutines, "goroutine ") {
		t.Errorf("stall record = %+v", rec)
	}
}

func TestSlowJobWarnedOnce(t *testing.T) {
	synctest.Test(t, slowJobWarnedOnce)
}

func slowJobWarnedOnce(t *testing.T) {
	var tab table
	now := time.Now()
	tab.set(
		Row{Slot: 1, PID: 11, Seq: 100, Input: "slow-one", Started: now.Add(-10 * time.Second)},
		Row{Slot: 2, PID: 12, Seq: 101, Input: "fresh-one", Started: now.Add(time.Hour)}, // never slow
	)
	var logs syncBuffer
	w, err := New(Options{Running: tab.get, SlowFactor: 5, MinFinished: 3, Interval: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	start(t, w)
	// Not enough jobs for a median yet: no warning.
	for range 2 {
		w.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Succeeded, Duration: 20 * time.Millisecond})
	}
	// Failed jobs do not count.
	for range 5 {
		w.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Failed, Duration: time.Millisecond})
	}
	time.Sleep(100 * time.Millisecond)
	if strings.Contains(logs.String(), "slow job") {
		t.Fatalf("slow warning before MinFinished succeeded jobs:\n%s", logs.String())
	}
	w.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Succeeded, Duration: 30 * time.Millisecond})
	waitFor(t, "the slow-job warning", func() bool { return strings.Contains(logs.String(), "slow job") })
	time.Sleep(200 * time.Millisecond)
	got := logs.String()
	if n := strings.Count(got, "slow job"); n != 1 {
		t.Errorf("%d slow-job warnings, want 1:\n%s", n, got)
	}
	if !strings.Contains(got, "input=slow-one") || !strings.Contains(got, "median=20ms") || strings.Contains(got, "fresh-one") {
		t.Errorf("wrong slow-job warning:\n%s", got)
	}
}

func TestWriteTable(t *testing.T) {
	now := time.Now()
	var b bytes.Buffer
	err := WriteTable(&b, []Row{
		{Slot: 3, PID: 300, Seq: 9, Input: strings.Repeat("x", 100), Started: now.Add(-90 * time.Second)},
		{Slot: 1, PID: 100, Seq: 2, Input: "line1\nline2\t\xff", Started: now.Add(-1500 * time.Millisecond), LastLine: "50%"},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("table has %d lines, want 3:\n%s", len(lines), b.String())
	}
	if f := strings.Fields(lines[0]); strings.Join(f, " ") != "SLOT PID SEQ RUNNING INPUT LAST OUTPUT" {
		t.Errorf("header %q", lines[0])
	}
	if f := strings.Fields(lines[1]); len(f) != 6 || f[0] != "1" || f[1] != "100" || f[3] != "1.5s" ||
		f[4] != `line1\nline2\t\xff` || f[5] != "50%" {
		t.Errorf("row 1 = %q", f)
	}
	if f := strings.Fields(lines[2]); len(f) != 6 || f[0] != "3" || f[3] != "1m30s" || len(f[4]) != 80 || f[5] != "-" {
		t.Errorf("row 2 = %q", f)
	}
	b.Reset()
	if err := WriteTable(&b, nil, now); err != nil || b.String() != "(no jobs running)\n" {
		t.Errorf("empty table = %q, %v", b.String(), err)
	}
}

func TestNewErrors(t *testing.T) {
	for _, o := range []Options{{}, {Running: func() []Row { return nil }, StallTimeout: -1}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	// Both checks off: Run returns at once.
	w, err := New(Options{Running: func() []Row { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// ExampleWriteTable prints the table SIGUSR1 and the stall report show.
func ExampleWriteTable() {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	WriteTable(os.Stdout, []Row{
		{Slot: 2, PID: 4242, Seq: 17, Input: "data/17.csv", Started: now.Add(-12*time.Minute - 3*time.Second), LastLine: "chunk 9 of 12"},
		{Slot: 1, PID: 4250, Seq: 21, Input: "data/21.csv", Started: now.Add(-2500 * time.Millisecond)},
	}, now)
	// Output:
	// SLOT  PID   SEQ  RUNNING  INPUT        LAST OUTPUT
	// 1     4250  21   2.5s     data/21.csv  -
	// 2     4242  17   12m3s    data/17.csv  chunk 9 of 12
}

// TestObserveWhileRunning hammers Observe from several goroutines while the
// checks run every millisecond, for the race detector.
func TestObserveWhileRunning(t *testing.T) {
	var tab table
	tab.set(Row{Slot: 1, PID: os.Getpid(), Seq: 1, Started: time.Now()})
	w, err := New(Options{Running: tab.get, StallTimeout: time.Hour, SlowFactor: 2, MinFinished: 1,
		Interval: time.Millisecond, Out: &syncBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	start(t, w)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 3000 {
				w.Observe(event.Event{Kind: event.JobFinished, Seq: int64(g*10000 + i), Outcome: event.Succeeded,
					Duration: time.Duration(i) * time.Microsecond})
			}
		})
	}
	wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.durations) != medianWindow || w.succeeded != 12000 {
		t.Errorf("window %d, succeeded %d", len(w.durations), w.succeeded)
	}
}

// TestSlowFloor: with jobs of a millisecond, a job running 50 ms is five
// times the median but not slow: it is below MinSlow.
func TestSlowFloor(t *testing.T) {
	synctest.Test(t, slowFloor)
}

func slowFloor(t *testing.T) {
	var tab table
	tab.set(Row{Slot: 1, PID: 11, Seq: 100, Input: "jitter", Started: time.Now().Add(-50 * time.Millisecond)})
	var logs syncBuffer
	w, err := New(Options{Running: tab.get, SlowFactor: 5, MinFinished: 1, Interval: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	w.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Succeeded, Duration: time.Millisecond})
	start(t, w)
	time.Sleep(150 * time.Millisecond)
	if strings.Contains(logs.String(), "slow job") {
		t.Fatalf("a 50ms job was reported slow:\n%s", logs.String())
	}
	// With the floor lowered, the same job is slow.
	var logs2 syncBuffer
	w2, err := New(Options{Running: tab.get, SlowFactor: 5, MinFinished: 1, MinSlow: time.Millisecond,
		Interval: 10 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs2, nil))})
	if err != nil {
		t.Fatal(err)
	}
	w2.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Succeeded, Duration: time.Millisecond})
	start(t, w2)
	waitFor(t, "the slow-job warning", func() bool { return strings.Contains(logs2.String(), "slow job") })
}
