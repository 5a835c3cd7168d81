package joblog

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitColumns: a job killed by an outside signal is
// "0 <sig>" in GNU parallel's joblog, not "-1 <sig>" (what Go's
// ProcessState.ExitCode gives); -1 is for jobs the runner killed.
func TestExitColumns(t *testing.T) {
	for _, c := range []struct {
		code, sig       int
		byRunner        bool
		exitval, signal int
	}{
		{0, 0, false, 0, 0},
		{3, 0, false, 3, 0},
		{137, 0, false, 137, 0}, // a shell's "exit 137" is not a kill
		{-1, 9, false, 0, 9},    // kill -9 from outside, or by the job itself
		{-1, 11, false, 0, 11},
		{-1, 15, true, -1, 15}, // --timeout
		{7, 0, true, 7, 0},     // signalled on timeout, exited on its own
	} {
		e, s := ExitColumns(c.code, c.sig, c.byRunner)
		if e != c.exitval || s != c.signal {
			t.Errorf("ExitColumns(%d, %d, %v) = %d, %d, want %d, %d", c.code, c.sig, c.byRunner, e, s, c.exitval, c.signal)
		}
	}
}

// TestGNUParallelKilledJobs compares ExitColumns and the line format with
// what GNU parallel itself writes for killed jobs, byte for byte, when it
// is installed (CI installs it).
func TestGNUParallelKilledJobs(t *testing.T) {
	parallel, err := exec.LookPath("parallel")
	if err != nil {
		t.Skip("GNU parallel not installed:", err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		job      string
		args     []string
		code     int
		sig      int
		byRunner bool
	}{
		{job: "kill -9 $$", code: -1, sig: 9},
		{job: "kill -TERM $$", code: -1, sig: 15},
		{job: "exit 3", code: 3},
		{job: "sleep 10", args: []string{"--timeout", "0.5"}, code: -1, sig: 15, byRunner: true},
	} {
		path := filepath.Join(dir, "log")
		args := append([]string{"--will-cite", "--joblog", path}, c.args...)
		cmd := exec.Command(parallel, append(args, c.job+" #", ":::", "1")...)
		cmd.Run() // exits with the number of failed jobs
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if len(lines) != 2 || lines[0] != Header {
			t.Fatalf("%s: GNU parallel wrote %q", c.job, b)
		}
		e, err := ParseLine(lines[1])
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSuffix(e.line(), "\n"); got != lines[1] {
			t.Errorf("%s: formatted again as\n%q, GNU parallel wrote\n%q", c.job, got, lines[1])
		}
		mine := e
		mine.Exitval, mine.Signal = ExitColumns(c.code, c.sig, c.byRunner)
		if !bytes.Equal([]byte(mine.line()), []byte(e.line())) {
			t.Errorf("%s: ExitColumns(%d, %d, %v) gives Exitval %d Signal %d; GNU parallel wrote %d %d",
				c.job, c.code, c.sig, c.byRunner, mine.Exitval, mine.Signal, e.Exitval, e.Signal)
		}
	}
}
