//go:build linux

package runcmd

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
)

// Issue 16, items 9, 10, 11 and 17: signals and blocked input or output.

// TestReliabSignalsWithBlockedStdout (item 9): with stdout blocked (its
// reader stopped reading), SIGUSR1 still reports and does not kill, and
// two SIGTERMs end ration within seconds.
func TestReliabSignalsWithBlockedStdout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close() // never read
	cmd, out, errb := rcmd{dir: dir, stdout: pw, args: []string{"run", "-j", "2", "--line-buffer", "--term-timeout", "1s", "--",
		"sh", "-c", "yes | head -c 1000000; sleep 30", ":::", "a", "b", "c"}}.start(t)
	pw.Close()
	time.Sleep(500 * time.Millisecond) // the jobs filled the pipe
	if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	testutil.WaitForText(t, 5*time.Second, errb.String, "running")
	_ = cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(100 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	r := waitRation(t, cmd, out, errb, 15*time.Second)
	if r.code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d, want 143:\n%s", r.code, r.stderr)
	}
}

// TestReliabSignalsWhileInputBlocks (item 10): a run waiting for an input
// line (tail -f | ration run) ends on the second SIGTERM.
func TestReliabSignalsWhileInputBlocks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jl := filepath.Join(dir, "jl")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close() // the input never ends
	cmd, out, errb := rcmd{dir: dir, stdin: pr, args: []string{"run", "--joblog", jl, "--term-timeout", "1s", "--", "true"}}.start(t)
	pr.Close()
	if _, err := pw.WriteString("a\n"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "job 1 logged", func() bool { return countRecords(jl) == 1 })
	_ = cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(100 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	r := waitRation(t, cmd, out, errb, 15*time.Second)
	if r.code != 128+int(syscall.SIGTERM) || !strings.Contains(r.stderr, "blocked") {
		t.Errorf("exit %d, want 143 with a message:\n%s", r.code, r.stderr)
	}
	if recs := readJoblog(t, jl); len(recs) != 1 {
		t.Errorf("joblog has %d records, want 1", len(recs))
	}
}

// mkfifo makes a FIFO in dir.
func mkfifo(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	return p
}

// feedFIFO opens fifo for writing (waiting for the reader), writes s and
// closes it; the error comes on the channel.
func feedFIFO(fifo, s string) <-chan error {
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			done <- err
			return
		}
		_, err = f.WriteString(s)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		done <- err
	}()
	return done
}

// TestReliabArgFileFIFO (item 11): -a FIFO is opened once: the writer is
// not cut off, and ration does not block in a second open.
func TestReliabArgFileFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := mkfifo(t, dir)
	fed := feedFIFO(fifo, "a\nb\nc\n")
	cmd, out, errb := rcmd{dir: dir, args: []string{"run", "-k", "-a", fifo, "--", "echo"}}.start(t)
	r := waitRation(t, cmd, out, errb, 15*time.Second)
	if err := <-fed; err != nil {
		t.Errorf("the FIFO's writer: %v", err)
	}
	if r.code != 0 || r.stdout != "a\nb\nc\n" {
		t.Errorf("exit %d, stdout %q, want every input:\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestReliabUSR1BeforeRun (item 17): SIGUSR1 before the run started (ration
// blocked opening a FIFO) does not kill ration; SIGTERM then ends it with
// a message.
func TestReliabUSR1BeforeRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := mkfifo(t, dir)
	cmd, out, errb := rcmd{dir: dir, args: []string{"run", "-a", fifo, "--", "echo"}}.start(t)
	time.Sleep(300 * time.Millisecond) // ration is in open(fifo)
	if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if err := <-feedFIFO(fifo, "a\n"); err != nil {
		t.Fatal(err)
	}
	r := waitRation(t, cmd, out, errb, 20*time.Second)
	if r.code != 0 || r.stdout != "a\n" {
		t.Errorf("exit %d, stdout %q, want 0 and a:\n%s", r.code, r.stdout, r.stderr)
	}

	// SIGTERM at the same point: an exit with a message.
	cmd, out, errb = rcmd{dir: dir, args: []string{"run", "-a", fifo, "--", "echo"}}.start(t)
	time.Sleep(300 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	r = waitRation(t, cmd, out, errb, 20*time.Second)
	if r.code != 128+int(syscall.SIGTERM) || !strings.Contains(r.stderr, "SIGTERM") {
		t.Errorf("SIGTERM before the run: exit %d, want 143 with a message:\n%s", r.code, r.stderr)
	}
}
