//go:build unix

package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/runner/input"
)

// TestProcessExecutorEdges runs real processes through ProcessExecutor,
// one edge of starting, output capture and waiting each.
func TestProcessExecutorEdges(t *testing.T) {
	dir := t.TempDir()
	noExec := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(noExec, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RATION_EXEC_TEST", "from-the-environment")
	const big = 1 << 20 // more than a pipe holds, on both streams at once
	tests := []struct {
		name       string
		argv       []string
		nilOut     bool
		exit, sig  int
		stdout     string // exact, unless bigOut
		stderr     string // substring
		bigOut     bool
		wantErr    bool
		minElapsed time.Duration
	}{
		{name: "not found", argv: []string{"/nonexistent/cmd"}, exit: 127, stderr: "/nonexistent/cmd", wantErr: true},
		{name: "not in PATH", argv: []string{"ration-no-such-command"}, exit: 127, stderr: "ration-no-such-command", wantErr: true},
		{name: "not executable", argv: []string{noExec}, exit: 126, stderr: "permission denied", wantErr: true},
		{name: "exit status", argv: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, exit: 3, stdout: "out\n", stderr: "err\n"},
		{name: "stdin is /dev/null", argv: []string{"cat"}, stdout: ""},
		{name: "environment", argv: []string{"sh", "-c", "echo $RATION_EXEC_TEST"}, stdout: "from-the-environment\n"},
		{name: "signal", argv: []string{"sh", "-c", "kill -9 $$"}, exit: -1, sig: 9},
		{name: "big output on both streams", argv: []string{"sh", "-c", "head -c 1048576 /dev/zero | tr '\\0' e >&2 & head -c 1048576 /dev/zero | tr '\\0' o; wait"}, bigOut: true},
		{name: "background child keeps stdout", argv: []string{"sh", "-c", "(sleep 0.3; echo late) & echo early"}, stdout: "early\nlate\n", minElapsed: 300 * time.Millisecond},
		{name: "stdout closed early", argv: []string{"sh", "-c", "exec >&-; sleep 0.2; echo still >&2"}, stderr: "still\n", minElapsed: 200 * time.Millisecond},
		{name: "nil writers", argv: []string{"sh", "-c", "echo discarded; echo discarded >&2"}, nilOut: true},
	}
	var e ProcessExecutor
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr syncBuf
			var startedPID int
			a := &Attempt{Seq: 1, Slot: 1, Argv: tc.argv, Stdout: &stdout, Stderr: &stderr,
				Started: func(_, pid int) { startedPID = pid }}
			if tc.nilOut {
				a.Stdout, a.Stderr, a.Diag = nil, nil, nil
			}
			res := e.Exec(context.Background(), a)
			if res.ExitCode != tc.exit || res.Signal != tc.sig {
				t.Errorf("exit %d signal %d, want %d %d (err %v)", res.ExitCode, res.Signal, tc.exit, tc.sig, res.Err)
			}
			if (res.Err != nil) != tc.wantErr {
				t.Errorf("err %v, want an error: %v", res.Err, tc.wantErr)
			}
			if tc.bigOut {
				if got := stdout.String(); len(got) != big || strings.Trim(got, "o") != "" {
					t.Errorf("stdout: %d bytes, want %d bytes of o", len(got), big)
				}
				if got := stderr.String(); len(got) != big || strings.Trim(got, "e") != "" {
					t.Errorf("stderr: %d bytes, want %d bytes of e", len(got), big)
				}
			} else if got := stdout.String(); got != tc.stdout {
				t.Errorf("stdout %q, want %q", got, tc.stdout)
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr %q, want it to contain %q", stderr.String(), tc.stderr)
			}
			if !tc.wantErr {
				if startedPID <= 0 || res.PID != startedPID {
					t.Errorf("Started(%d), result PID %d: want the same positive pid", startedPID, res.PID)
				}
				if res.PeakRSS <= 0 {
					t.Errorf("PeakRSS %d, want > 0", res.PeakRSS)
				}
			}
			if res.Duration < tc.minElapsed {
				t.Errorf("returned after %v, want at least %v (the output was not read to its end)", res.Duration, tc.minElapsed)
			}
		})
	}
}

// TestProcessExecutorStop: a cancelled job gets SIGTERM, then SIGKILL after
// the grace; a job that ignores SIGTERM is killed with its whole group, and
// the executor returns only when the group is gone.
func TestProcessExecutorStop(t *testing.T) {
	var e ProcessExecutor
	ctx, cancel := context.WithCancel(context.Background())
	stdout := testutil.NewWatchBuffer("ready")
	started := make(chan int, 1)
	a := &Attempt{Seq: 1, Slot: 1, Stdout: stdout, Stderr: stdout, Grace: 200 * time.Millisecond,
		Argv:    []string{"sh", "-c", "trap '' TERM; sleep 30 & echo ready; wait"},
		Started: func(_, pid int) { started <- pid }}
	done := make(chan AttemptResult, 1)
	go func() { done <- e.Exec(ctx, a) }()
	pid := <-started
	select {
	case <-stdout.Seen(): // the shell set its trap and started the sleep
	case <-time.After(10 * time.Second):
		t.Fatal("the job did not say it was ready")
	}
	cancel()
	var res AttemptResult
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Exec did not return 10 s after the cancel")
	}
	if !res.Stopped || res.Signal != int(syscall.SIGKILL) {
		t.Errorf("stopped %v signal %d, want stopped by SIGKILL", res.Stopped, res.Signal)
	}
	// The group got SIGKILL before Exec returned; its last member (the
	// orphaned sleep, which ignores SIGTERM like its shell) is gone as soon
	// as its new parent reaps it.
	deadline := time.Now().Add(2 * time.Second)
	for syscall.Kill(-pid, 0) != syscall.ESRCH {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still exists 2 s after Exec returned", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestGNUJobEnv: every job sees GNU parallel's $PARALLEL_SEQ ({#}),
// $PARALLEL_JOBSLOT ({%}) and $PARALLEL_PID (ration's pid), in place of
// inherited ones, as scripts written for GNU parallel expect (parallel -j1
// 'echo $PARALLEL_SEQ $PARALLEL_JOBSLOT' ::: a b prints "1 1" and "2 1").
func TestGNUJobEnv(t *testing.T) {
	t.Setenv("PARALLEL_SEQ", "99")
	_, out, _, err := run(t, Config{Command: []string{"sh", "-c", `echo "$PARALLEL_SEQ $PARALLEL_JOBSLOT $PARALLEL_PID $1"`, "sh"},
		Input: input.Args([]string{"a", "b"}), Jobs: 1, KeepOrder: true})
	pid := os.Getpid()
	if want := fmt.Sprintf("1 1 %d a\n2 1 %d b\n", pid, pid); err != nil || out != want {
		t.Errorf("got %q, %v; want %q", out, err, want)
	}
}
