package logs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/runner/event"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuffer is the shared buffer safe for concurrent use.
type syncBuffer = testutil.Buffer

func allEvents(seq int64) []event.Event {
	return []event.Event{
		{Kind: event.WorkerStarted, Slot: 1, PID: 100},
		{Kind: event.JobStarted, Seq: seq, Slot: 1, PID: 101, Attempt: 1, Input: "in\x00put \xff\"<&>\nnext", QueueWait: time.Millisecond},
		{Kind: event.JobRetried, Seq: seq, Slot: 1, PID: 101, Attempt: 1, ExitCode: -1, Signal: 9, Cause: event.CauseOOM, Err: errors.New("killed")},
		{Kind: event.JobStarted, Seq: seq, Slot: 1, PID: 102, Attempt: 2},
		{Kind: event.JobFinished, Seq: seq, Slot: 1, PID: 102, Attempt: 2, Outcome: event.Failed, ExitCode: 3, Duration: 1500 * time.Millisecond},
		{Kind: event.JobStarted, Seq: seq + 1, Slot: 2, PID: 103, Attempt: 1},
		{Kind: event.JobFinished, Seq: seq + 1, Slot: 2, PID: 103, Attempt: 1, Outcome: event.Succeeded},
		{Kind: event.JobFinished, Seq: seq + 2, Outcome: event.Quarantined, Cause: event.CauseSignal},
		{Kind: event.JobFinished, Seq: seq + 3, Outcome: event.NotStarted},
		{Kind: event.JobSkipped, Seq: seq + 4, Input: "done"},
		{Kind: event.WorkerBroken, Slot: 1, PID: 100, Cause: event.CauseProtocol, Err: errors.New("garbage on stdout")},
		{Kind: event.WorkerRetired, Slot: 2, PID: 104, Reason: "shrink"},
		{Kind: event.PoolResized, Size: 3, Reason: "cpu quota 4 -> 1.5"},
		{Kind: event.PoolRecreated, Size: 3, Reason: "5 breaks in 10s"},
	}
}

func TestJSONParsesLineByLine(t *testing.T) {
	var out syncBuffer
	l, err := New(&out, Options{Format: FormatJSON, Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	obs := NewObserver(l, Options{})
	const goroutines = 4
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for _, e := range allEvents(int64(g*10 + 1)) {
				obs.Observe(e)
			}
		})
	}
	wg.Wait()

	kinds := map[string]int{}
	levels := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	n := 0
	for sc.Scan() {
		n++
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", n, err, sc.Text())
		}
		ev, _ := rec["event"].(string)
		kinds[ev]++
		levels[rec["msg"].(string)] = rec["level"].(string)
		if rec["event"] == "job_started" && rec["seq"] == 1.0 && rec["attempt"] == nil {
			if in := rec["input"].(string); !strings.HasPrefix(in, "in\x00put \ufffd\"<&>\nnext") {
				t.Errorf("input = %q", in)
			}
		}
	}
	if want := goroutines * len(allEvents(1)); n != want {
		t.Errorf("%d lines, want %d", n, want)
	}
	for _, k := range []string{"job_started", "job_finished", "job_retried", "job_skipped", "worker_started",
		"worker_broken", "worker_retired", "pool_resized", "pool_recreated"} {
		if kinds[k] == 0 {
			t.Errorf("no %s record", k)
		}
	}
	for msg, want := range map[string]string{
		"job started": "DEBUG", "job succeeded": "DEBUG", "job failed": "WARN", "job quarantined": "WARN",
		"job retried": "INFO", "worker broken": "WARN", "pool resized": "INFO", "pool recreated": "WARN",
	} {
		if levels[msg] != want {
			t.Errorf("%q logged at %q, want %s", msg, levels[msg], want)
		}
	}
}

func TestLevels(t *testing.T) {
	count := func(opts Options) (debug, info, warn int) {
		var out bytes.Buffer
		opts.Format = FormatJSON
		l, err := New(&out, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range allEvents(1) {
			NewObserver(l, Options{}).Observe(e)
		}
		for line := range strings.Lines(out.String()) {
			switch {
			case strings.Contains(line, `"level":"DEBUG"`):
				debug++
			case strings.Contains(line, `"level":"INFO"`):
				info++
			case strings.Contains(line, `"level":"WARN"`):
				warn++
			}
		}
		return
	}
	if d, i, w := count(Options{}); d != 0 || i == 0 || w == 0 {
		t.Errorf("default: debug/info/warn = %d/%d/%d, want 0/>0/>0", d, i, w)
	}
	if d, i, w := count(Options{Quiet: true}); d != 0 || i != 0 || w != 4 {
		t.Errorf("quiet: debug/info/warn = %d/%d/%d, want 0/0/4", d, i, w)
	}
	if d, _, _ := count(Options{Debug: true}); d != 7 {
		t.Errorf("debug: %d debug records, want 7", d)
	}
}

func TestUsageErrors(t *testing.T) {
	for o, want := range map[Options]string{
		{Quiet: true, Debug: true}: "Quiet and Debug exclude each other",
		{Format: "xml"}:            `unknown log format "xml"`,
	} {
		if _, err := New(os.Stderr, o); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "--") {
			t.Errorf("New(%+v) error = %v, want %q without flag names", o, err, want)
		}
	}
}

func TestAutoFormat(t *testing.T) {
	var out bytes.Buffer
	l, err := New(&out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Info("hello", "k", "v w")
	if !strings.HasPrefix(out.String(), "time=") || !strings.Contains(out.String(), `k="v w"`) {
		t.Errorf("auto on a buffer wrote %q, want logfmt", out.String())
	}
}

func TestIsTerminal(t *testing.T) {
	_, slave := openPTY(t)
	if !IsTerminal(slave) {
		t.Error("pty slave is not a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) || IsTerminal(&bytes.Buffer{}) {
		t.Error("a file or buffer counts as a terminal")
	}
	l, err := New(slave, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l.Handler().(*HumanHandler); !ok {
		t.Errorf("auto on a terminal chose %T, want *HumanHandler", l.Handler())
	}
}

// fdWriter writes through to a file it does not expose, as a progress
// bar's writer does; Fd tells which file it writes to.
type fdWriter struct{ f *os.File }

func (w fdWriter) Write(p []byte) (int, error) { return w.f.Write(p) }
func (w fdWriter) Fd() uintptr                 { return w.f.Fd() }

// TestIsTerminalThroughWriter: a writer that writes to a terminal and
// has its Fd (the progress bar's) is a terminal, so that the logs keep
// their human format while the bar is shown.
func TestIsTerminalThroughWriter(t *testing.T) {
	_, slave := openPTY(t)
	if !IsTerminal(fdWriter{slave}) {
		t.Error("a writer to a pty slave with its Fd is not a terminal")
	}
	l, err := New(fdWriter{slave}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l.Handler().(*HumanHandler); !ok {
		t.Errorf("auto through a writer to a terminal chose %T, want *HumanHandler", l.Handler())
	}
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(fdWriter{f}) {
		t.Error("a writer to a file counts as a terminal")
	}
}

func TestHumanHandler(t *testing.T) {
	var out bytes.Buffer
	l := slog.New(NewHumanHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	l = l.With("run", "r1").WithGroup("job")
	l.Warn("job failed\nsecond line", "seq", 17, "input", "a b\x01\xfe", "d", 1234567*time.Microsecond, slog.Group("g", "x", 1))
	line := out.String()
	if strings.Count(line, "\n") != 1 {
		t.Fatalf("record is not one line: %q", line)
	}
	for _, want := range []string{"WARN  job failed\\nsecond line", " run=r1", " job.seq=17", ` job.input="a b\x01\xfe"`, " job.d=1.235s", " job.g.x=1"} {
		if !strings.Contains(line, want) {
			t.Errorf("%q lacks %q", line, want)
		}
	}
	out.Reset()
	slog.New(NewHumanHandler(&out, nil)).Debug("hidden")
	if out.Len() != 0 {
		t.Errorf("debug record at the default level: %q", out.String())
	}
}

func TestTruncate(t *testing.T) {
	long := strings.Repeat("é", 150) // 300 bytes
	got := truncate(long, MaxInputLen)
	if len(got) > MaxInputLen || !strings.HasSuffix(got, "...") || !strings.HasPrefix(got, "éé") {
		t.Errorf("truncate: %d bytes %q", len(got), got)
	}
	if got := truncate("short", MaxInputLen); got != "short" {
		t.Errorf("truncate(short) = %q", got)
	}
}

// ExampleNewObserver logs a retried and a failed job as JSON. The time is
// dropped to keep the output stable.
func ExampleNewObserver() {
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	l := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime}))
	obs := NewObserver(l, Options{})
	obs.Observe(event.Event{Kind: event.JobRetried, Seq: 7, Attempt: 1, ExitCode: 1, Duration: 2 * time.Second, Input: "x.csv"})
	obs.Observe(event.Event{Kind: event.JobFinished, Seq: 7, Attempt: 2, Outcome: event.Failed, ExitCode: 1, Duration: time.Second, Input: "x.csv"})
	// Output:
	// {"level":"INFO","msg":"job retried","event":"job_retried","seq":7,"attempt":1,"duration":2000000000,"exit":1,"input":"x.csv"}
	// {"level":"WARN","msg":"job failed","event":"job_finished","seq":7,"attempt":2,"outcome":"failed","duration":1000000000,"exit":1,"input":"x.csv"}
}

// TestPoolClosedRetirementIsDebug: every worker is retired when its pool
// closes at the end of a run; that is logged at debug level, other
// retirements (shrink, recycling) at info.
func TestPoolClosedRetirementIsDebug(t *testing.T) {
	var out bytes.Buffer
	l, err := New(&out, Options{Format: FormatJSON, Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	obs := NewObserver(l, Options{})
	obs.Observe(event.Event{Kind: event.WorkerRetired, Slot: 1, PID: 10, Reason: event.ReasonPoolClosed})
	obs.Observe(event.Event{Kind: event.WorkerRetired, Slot: 2, PID: 11, Reason: "recycled after 3 tasks"})
	var levels []string
	for line := range strings.Lines(out.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		levels = append(levels, fmt.Sprint(rec["level"], " ", rec["reason"]))
	}
	if want := []string{"DEBUG pool closed", "INFO recycled after 3 tasks"}; !slices.Equal(levels, want) {
		t.Errorf("levels %q, want %q", levels, want)
	}
}
