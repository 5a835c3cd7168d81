package progress

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/runner/event"
)

// setWidth makes the pseudo-terminal tty columns wide, as a resized
// window does (the kernel sends SIGWINCH to its foreground group).
func setWidth(t *testing.T, tty *os.File, columns int) {
	t.Helper()
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: uint16(columns)}); err != nil {
		t.Fatalf("TIOCSWINSZ: %v", err)
	}
}

// drawnLines returns each stretch of text the terminal printed between
// two moves to the start of a line (a carriage return or a newline), the
// erase-line sequences left out: what one redraw, or one output line,
// put on one screen line.
func drawnLines(out string) []string {
	out = strings.ReplaceAll(out, "\x1b[K", "")
	return strings.FieldsFunc(out, func(r rune) bool { return r == '\r' || r == '\n' })
}

// checkFits fails for every drawn line that reaches the terminal's last
// column: a line as wide as the terminal wraps on some terminals and
// leaves the cursor in the last column on the others.
func checkFits(t *testing.T, out string, columns int) {
	t.Helper()
	for _, l := range drawnLines(out) {
		if len(l) >= columns {
			t.Errorf("a %d-character line on a %d-column terminal:\n%q", len(l), columns, l)
		}
	}
}

// TestPTYWidth: at 40, 80 and 120 columns no redraw of the bar, and not
// its last line, reaches the terminal's last column, whatever the counts
// hold; the widest terminal shows the bar.
func TestPTYWidth(t *testing.T) {
	for _, columns := range []int{40, 80, 120} {
		t.Run(strconv.Itoa(columns), func(t *testing.T) {
			tty, wait := openPTY(t)
			setWidth(t, tty, columns)
			b := New(tty, Options{Terminal: true, Total: 123456, Interval: time.Millisecond})
			b.Observe(event.Event{Kind: event.JobSkipped})
			b.Start()
			for i := range 3000 {
				b.Observe(event.Event{Kind: event.JobStarted, Attempt: 1})
				o := event.Succeeded
				if i%7 == 0 {
					o = event.Failed
				}
				b.Observe(event.Event{Kind: event.JobFinished, Outcome: o})
				if i%100 == 0 {
					time.Sleep(2 * time.Millisecond)
				}
			}
			b.Observe(event.Event{Kind: event.JobStarted, Attempt: 1})
			b.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Stopped})
			b.Observe(event.Event{Kind: event.JobFinished, Outcome: event.NotStarted})
			b.Finish()
			out := wait()
			checkFits(t, out, columns)
			s := screen(out)
			if len(s) < 2 {
				t.Fatalf("no line ended on the terminal:\n%q", out)
			}
			last := s[len(s)-2]
			// Where the line cannot hold them all, the counts of an
			// interrupted run go last: the run's summary follows.
			for i, want := range []string{"3000/123455", "429 failed", "1 stopped", "1 not started"} {
				if (i < 2 || columns >= 80) && !strings.Contains(last, want) {
					t.Errorf("the last line %q lacks %q", last, want)
				}
			}
			if columns == 120 && !strings.Contains(last, "[") {
				t.Errorf("no bar at 120 columns: %q", last)
			}
			t.Logf("%d columns: %q", columns, last)
		})
	}
}

// TestPTYResize: the bar reads the width before each redraw, so a
// window made narrower while the bar runs gets lines that fit it.
func TestPTYResize(t *testing.T) {
	tty, wait := openPTY(t)
	setWidth(t, tty, 120)
	b := New(tty, Options{Terminal: true, Total: 10, Interval: time.Millisecond})
	b.Start()
	time.Sleep(20 * time.Millisecond)
	setWidth(t, tty, 40)
	b.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Failed}) // the lines change after the resize
	time.Sleep(20 * time.Millisecond)
	b.Finish()
	out := wait()
	// The last redraws and the last line: a redraw that read the width
	// just before the resize may still be drawn after it.
	lines := drawnLines(out)
	if len(lines) < 3 || !strings.Contains(lines[len(lines)-1], "1/10") {
		t.Fatalf("no lines after the resize:\n%q", out)
	}
	checkFits(t, strings.Join(lines[len(lines)-3:], "\n"), 40)
	if len(lines[0]) < 40 {
		t.Errorf("the first line %q does not use the 120 columns", lines[0])
	}
}

// TestPTYRationWidth runs the ration binary under a pseudo-terminal 40,
// 80 and 120 columns wide (many short jobs, as in an 80x24 tmux pane): no
// bar it draws, and not its summary, reaches the last column.
func TestPTYRationWidth(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ration binary")
	}
	bin, err := testutil.BuildRation(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--bar", "-j", "4", "-N0", "sleep", "0.01", ":::"}
	for i := range 200 {
		args = append(args, strconv.Itoa(i))
	}
	for _, columns := range []int{40, 80, 120} {
		t.Run(strconv.Itoa(columns), func(t *testing.T) {
			tty, wait := openPTY(t)
			setWidth(t, tty, columns)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Stdout, cmd.Stderr = tty, tty
			if err := cmd.Run(); err != nil {
				t.Fatalf("ration: %v\n%q", err, wait())
			}
			out := wait()
			bars, summaries := 0, 0
			for _, l := range drawnLines(out) {
				switch {
				case strings.Contains(l, "/200 "):
					bars++
				case strings.HasPrefix(l, "ration: 200 done, 0 failed in "):
					summaries++
				default:
					continue
				}
				if len(l) >= columns {
					t.Errorf("a %d-character line on a %d-column terminal:\n%q", len(l), columns, l)
				}
			}
			if bars == 0 || summaries != 1 {
				t.Errorf("%d bars and %d summaries drawn, want some and one:\n%q", bars, summaries, out)
			}
		})
	}
}

// TestPTYRationLogFormat: while the bar is shown on a terminal, ration's
// log lines keep the human format a terminal gets without it, not
// logfmt: the logger writes through the bar's writer and must still see
// the terminal.
func TestPTYRationLogFormat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ration binary")
	}
	bin, err := testutil.BuildRation(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, bar := range []string{"--bar", "--no-bar"} {
		t.Run(bar, func(t *testing.T) {
			tty, wait := openPTY(t)
			setWidth(t, tty, 120)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "run", bar, "-j", "1", "false", ":::", "a")
			cmd.Stdout, cmd.Stderr = tty, tty
			_ = cmd.Run()
			out := wait()
			var failed string
			for _, l := range screen(out) {
				if strings.Contains(l, "job failed") {
					failed = l
				}
			}
			if failed == "" || strings.Contains(failed, "level=") || strings.Contains(failed, "msg=") || !strings.Contains(failed, " WARN ") {
				t.Errorf("the failed job's line %q, want the human format (HH:MM:SS WARN  job failed ...):\n%q", failed, out)
			}
		})
	}
}
