//go:build linux

package runcmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/runner/joblog"
)

// rres is how one run of the ration binary ended.
type rres struct {
	code           int
	stdout, stderr string
	maxRSS         int64 // ration's peak RSS in bytes (VmHWM, polled while it ran)
	wall           time.Duration
}

// rcmd describes one run of the ration binary for the reliability tests.
type rcmd struct {
	dir    string
	env    []string  // added to the environment
	stdin  io.Reader // nil: empty
	stdout io.Writer // nil: captured
	args   []string
}

// start starts it; the caller waits with wait.
func (c rcmd) start(t *testing.T) (*exec.Cmd, *testutil.Buffer, *testutil.Buffer) {
	t.Helper()
	cmd := exec.Command(buildRation(t), c.args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Stdin = c.stdin
	var out, errb testutil.Buffer
	cmd.Stdout = &out
	if c.stdout != nil {
		cmd.Stdout = c.stdout
	}
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out, &errb
}

// runIntoGoneReader runs c as `ration run ... | head -c n`: its stdout
// is a pipe whose reader reads n bytes, then closes its end.
func (c rcmd) runIntoGoneReader(t *testing.T, n int, d time.Duration) rres {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c.stdout = pw
	cmd, out, errb := c.start(t)
	pw.Close()
	if _, err := io.ReadFull(pr, make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	return waitRation(t, cmd, out, errb, d)
}

// wait waits for cmd, at most d, and returns how it ended; past d it kills
// it and fails t.
func waitRation(t *testing.T, cmd *exec.Cmd, out, errb *testutil.Buffer, d time.Duration) rres {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// ration's peak RSS is its VmHWM, polled while it runs. (The
	// ru_maxrss that wait4 returns is no measure of it: a child that the
	// Go runtime starts with a vfork-style clone inherits the hiwater of
	// the parent's memory across exec, and this test binary is larger
	// than the limits checked.)
	var hwm int64
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(d)
wait:
	for {
		select {
		case <-done:
			break wait
		case <-tick.C:
			hwm = max(hwm, vmHWM(cmd.Process.Pid))
		case <-timeout:
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("ration did not end within %s; stderr:\n%s", d, errb.String())
		}
	}
	r := rres{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String(), wall: time.Since(start)}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.code = 128 + int(ws.Signal())
	}
	r.maxRSS = hwm
	return r
}

// vmHWM returns the peak resident set of process pid in bytes, from
// /proc/PID/status, 0 when it cannot be read (the process has ended).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
			return kb << 10
		}
	}
	return 0
}

// run runs ration to its end (at most 60 s).
func (c rcmd) run(t *testing.T) rres {
	t.Helper()
	cmd, out, errb := c.start(t)
	return waitRation(t, cmd, out, errb, 60*time.Second)
}

// tmpfs mounts a tmpfs of size (like "64k") for the test and unmounts it
// at its end; without root (or where mounting fails) it skips the test.
func tmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs (to fill a disk) needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs to fill: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// devNullW opens /dev/null write-only, as a shell's >/dev/null does.
func devNullW(t *testing.T) *os.File {
	t.Helper()
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// readJoblog returns the entries of a joblog by seq, failing t on any
// malformed or torn line.
func readJoblog(t *testing.T, path string) map[int64]joblog.Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[int64]joblog.Entry{}
	for e, err := range joblog.Entries(f) {
		if err != nil {
			t.Fatalf("joblog %s: %v", path, err)
		}
		m[e.Seq] = e
	}
	return m
}

// inputs returns n distinct inputs "in-1".."in-n".
func inputs(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("in-%d", i+1)
	}
	return s
}

// lineCounts counts the lines of a file.
func lineCounts(t *testing.T, path string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	m := map[string]int{}
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l != "" {
			m[l]++
		}
	}
	return m
}

// appendJob is the command of a job that appends its input to out.
func appendJob(out string) []string {
	return []string{"sh", "-c", `echo "$1" >> "$0"`, out}
}

// procsWith returns the pids of the processes whose command line holds s.
func procsWith(s string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(s)) {
			continue
		}
		st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
			continue // a zombie is dead, waiting to be reaped
		}
		pids = append(pids, pid)
	}
	return pids
}

// waitNoProcs waits up to d until no process has s in its command line,
// and returns those left.
func waitNoProcs(s string, d time.Duration) []int {
	deadline := time.Now().Add(d)
	for {
		p := procsWith(s)
		if len(p) == 0 || time.Now().After(deadline) {
			return p
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// countRecords counts the whole records of a joblog being written (lines
// with their newline, less the header), without failing on a line in
// the middle of its write.
func countRecords(path string) int {
	b, _ := os.ReadFile(path)
	n := strings.Count(string(b), "\n")
	return max(n-1, 0)
}
