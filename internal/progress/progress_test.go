package progress

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/runner/event"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// screen replays what a terminal does with text, carriage returns, erase
// to end of line ("\x1b[K") and newlines, and returns every line as it was
// when the cursor left it (the last one as it is now). A line holding
// both job output and the bar is a line where they mixed.
func screen(out string) []string {
	var lines []string
	var cur []rune
	col := 0
	for i := 0; i < len(out); {
		switch {
		case strings.HasPrefix(out[i:], "\x1b[K"):
			cur = cur[:min(col, len(cur))]
			i += 3
		case out[i] == '\r':
			col = 0
			i++
		case out[i] == '\n':
			lines = append(lines, string(cur))
			cur, col = nil, 0
			i++
		default:
			r, size := utf8.DecodeRuneInString(out[i:])
			if col < len(cur) {
				cur[col] = r
			} else {
				cur = append(cur, r)
			}
			col++
			i += size
		}
	}
	return append(lines, string(cur))
}

// checkScreen fails when a line mixes the bar with output, or an output
// line is not whole; it returns the output lines in order.
func checkScreen(t *testing.T, out string) (outputs []string) {
	t.Helper()
	for _, l := range screen(out) {
		switch {
		case l == "":
		case strings.HasPrefix(l, "ration: "):
			if strings.Contains(l, "out") {
				t.Errorf("bar and output on one line: %q", l)
			}
		case strings.HasPrefix(l, "out ") && !strings.Contains(l, "ration"):
			outputs = append(outputs, l)
		default:
			t.Errorf("mixed or broken line: %q", l)
		}
	}
	return outputs
}

func TestScreen(t *testing.T) {
	got := screen("abc\r\x1b[Kxy\nline2\rZ\n\r\x1b[Kbar")
	want := []string{"xy", "Zine2", "bar"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("screen = %q, want %q", got, want)
	}
}

// TestWrapNeverMixes writes output lines from eight goroutines while the
// bar redraws every millisecond: the screen has every line whole, none on
// the bar's line.
func TestWrapNeverMixes(t *testing.T) {
	var term testutil.Buffer
	b := New(&term, Options{Terminal: true, Total: 800, Interval: time.Millisecond})
	out, errw := b.Wrap(&term), b.Wrap(&term)
	b.Start()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			w := out
			if g%2 == 1 {
				w = errw
			}
			for i := range 100 {
				b.Observe(event.Event{Kind: event.JobStarted, Attempt: 1})
				fmt.Fprintf(w, "out %d-%d\n", g, i)
				if i%10 == 0 {
					time.Sleep(time.Millisecond)
				}
				b.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Succeeded})
			}
		})
	}
	wg.Wait()
	b.Finish()
	lines := checkScreen(t, term.String())
	if len(lines) != 800 {
		t.Errorf("%d output lines on screen, want 800", len(lines))
	}
	s := screen(term.String())
	if last := s[len(s)-2]; !strings.Contains(last, "800/800 100%") {
		t.Errorf("final bar %q", last)
	}
}

// TestPartialLine: output without a newline holds the bar back until the
// line ends, so the bar never lands inside it.
func TestPartialLine(t *testing.T) {
	var term testutil.Buffer
	b := New(&term, Options{Terminal: true, Total: 1, Interval: time.Millisecond})
	w := b.Wrap(&term)
	b.Start()
	fmt.Fprint(w, "out partial")
	time.Sleep(20 * time.Millisecond) // many ticks
	fmt.Fprint(w, " and the rest\n")
	time.Sleep(20 * time.Millisecond)
	fmt.Fprint(w, "out unfinished")
	b.Finish()
	lines := checkScreen(t, term.String())
	if fmt.Sprint(lines) != "[out partial and the rest out unfinished]" {
		t.Errorf("output lines %q\n%q", lines, term.String())
	}
}

func TestLine(t *testing.T) {
	var term bytes.Buffer
	b := New(&term, Options{Terminal: true, Total: 4})
	b.Observe(event.Event{Kind: event.JobSkipped})
	for _, o := range []event.Outcome{event.Succeeded, event.Failed} {
		b.Observe(event.Event{Kind: event.JobStarted, Attempt: 1})
		b.Observe(event.Event{Kind: event.JobFinished, Outcome: o})
	}
	b.Observe(event.Event{Kind: event.JobStarted, Attempt: 1})
	b.Finish()
	last := screen(term.String())[0]
	for _, want := range []string{"2/3", "67%", "1 failed", "1 running", "1 skipped", "ETA "} {
		if !strings.Contains(last, want) {
			t.Errorf("final line %q lacks %q", last, want)
		}
	}
	// Unknown total: counts and rate, no ETA.
	term.Reset()
	b = New(&term, Options{Terminal: true, Total: -1})
	b.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Succeeded})
	b.Finish()
	if s := term.String(); strings.Contains(s, "ETA") || !strings.Contains(s, "1 done") || !strings.Contains(s, "/s") {
		t.Errorf("unknown total: %q", s)
	}
	// ETA from the rate: 1 of 3 done after about 100 ms.
	b = New(&term, Options{Terminal: true, Total: 3})
	b.start = time.Now().Add(-time.Second)
	b.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Succeeded})
	if l := b.line(b.start.Add(time.Second), 0, false); !strings.Contains(l, "ETA 2s") || !strings.Contains(l, "1.0/s") {
		t.Errorf("ETA: %q", l)
	}
}

// TestLogLines: off a terminal the Bar writes whole log lines on its
// period, and Wrap leaves writers alone.
func TestLogLines(t *testing.T) {
	var log testutil.Buffer
	b := New(&log, Options{Total: 10, LogEvery: 10 * time.Millisecond})
	var other bytes.Buffer
	if w := b.Wrap(&other); w != &other {
		t.Error("Wrap wrapped a writer off a terminal")
	}
	b.Start()
	b.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Succeeded})
	testutil.Eventually(t, 5*time.Second, "three log lines", func() bool { return strings.Count(log.String(), "\n") >= 3 })
	b.Finish()
	for _, l := range strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n") {
		if !strings.HasPrefix(l, "ration: [") || strings.ContainsAny(l, "\r\x1b") || !strings.Contains(l, "1/10") {
			t.Errorf("log line %q", l)
		}
	}
}

// TestLogTo: off a terminal, with LogTo, the lines are slog records with
// the counts as attributes, and nothing is written to the Bar's writer.
func TestLogTo(t *testing.T) {
	var log testutil.Buffer
	var w bytes.Buffer
	b := New(&w, Options{Total: 10, LogEvery: 10 * time.Millisecond})
	b.LogTo(slog.New(slog.NewJSONHandler(&log, nil)))
	b.Start()
	b.Observe(event.Event{Kind: event.JobSkipped})
	b.Observe(event.Event{Kind: event.JobStarted, Attempt: 1})
	b.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Failed})
	testutil.Eventually(t, 5*time.Second, "two records", func() bool { return strings.Count(log.String(), "\n") >= 2 })
	b.Finish()
	if w.Len() != 0 {
		t.Errorf("wrote %q to the writer", w.String())
	}
	for _, l := range strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		if r["event"] != "progress" || r["done"] != 1.0 || r["failed"] != 1.0 || r["total"] != 9.0 || r["skipped"] != 1.0 ||
			!strings.HasPrefix(r["msg"].(string), "[") {
			t.Errorf("record %v", r)
		}
	}
}

// TestNil: a nil Bar does nothing.
func TestNil(t *testing.T) {
	var b *Bar
	var w bytes.Buffer
	if b.Wrap(&w) != &w {
		t.Error("nil Wrap")
	}
	b.Observe(event.Event{Kind: event.JobStarted})
	b.SetTotal(3)
	b.Start()
	b.Finish()
	// Finish without Start, twice.
	b = New(&w, Options{Terminal: true})
	b.Finish()
	b.Finish()
	if strings.Count(w.String(), "\n") != 1 {
		t.Errorf("Finish twice wrote %q", w.String())
	}
}
