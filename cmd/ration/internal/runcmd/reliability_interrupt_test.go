//go:build linux

package runcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
)

// TestReliabInterruptKeepsRetries: a job whose first attempt fails after
// SIGTERM, with --retries left, was recorded as failed, so the --resume
// that ration prints skipped it: the interrupt cost it its retries. It is
// not done: unrecorded, --resume runs it again (here it then succeeds).
func TestReliabInterruptKeepsRetries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jl := filepath.Join(dir, "jl")
	// The first attempt marks itself, waits for "go" and fails; a later
	// attempt succeeds.
	script := `if [ -e "$1.tried" ]; then echo ok; exit 0; fi; : > "$1.tried"; while [ ! -e go ]; do sleep 0.01; done; exit 3`
	args := func(resume bool) []string {
		a := []string{"run", "-j", "1", "--retries", "3", "--joblog", jl}
		if resume {
			a = append(a, "--resume")
		}
		return append(a, "--", "sh", "-c", script, "sh", ":::", "a")
	}
	cmd, out, errb := rcmd{dir: dir, args: args(false)}.start(t)
	testutil.Eventually(t, 10*time.Second, "the first attempt running", func() bool {
		_, err := os.Stat(filepath.Join(dir, "a.tried"))
		return err == nil
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "ration draining", func() bool { return strings.Contains(errb.String(), "got SIGTERM") })
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := waitRation(t, cmd, out, errb, 30*time.Second)
	if r.code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d, want 143:\n%s", r.code, r.stderr)
	}
	if recs := readJoblog(t, jl); len(recs) != 0 {
		t.Errorf("the joblog records %v: the job was denied its retries by the interrupt, yet recorded as done", recs)
	}
	r = rcmd{dir: dir, args: args(true)}.run(t)
	recs := readJoblog(t, jl)
	if r.code != 0 || len(recs) != 1 || recs[1].Exitval != 0 || r.stdout != "ok\n" {
		t.Errorf("--resume: exit %d, stdout %q, joblog %v; want the job run again and succeeded:\n%s", r.code, r.stdout, recs, r.stderr)
	}
}

// TestReliabSignalThenOutputGone: a hangup (or a Ctrl-C to a pipeline)
// that also takes ration's stdout: the jobs drained after SIGHUP could
// not print, and ration exited 141 (or 255 on a terminal that was hung
// up), not the 129 of "interrupted by SIGHUP" that the exit-status table
// promises "even if every running job then finished": the signal came
// first and is the cause.
func TestReliabSignalThenOutputGone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jl := filepath.Join(dir, "jl")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	script := `: > "$1.started"; while [ ! -e go ]; do sleep 0.01; done; echo "$1"`
	cmd, out, errb := rcmd{dir: dir, stdout: pw, args: []string{"run", "-j", "2", "--joblog", jl, "--", "sh", "-c", script, "sh", ":::", "a", "b", "c"}}.start(t)
	pw.Close()
	testutil.Eventually(t, 10*time.Second, "two jobs running", func() bool {
		_, errA := os.Stat(filepath.Join(dir, "a.started"))
		_, errB := os.Stat(filepath.Join(dir, "b.started"))
		return errA == nil && errB == nil
	})
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "ration draining", func() bool { return strings.Contains(errb.String(), "got SIGHUP") })
	pr.Close() // the terminal (here a pipe) went with the hangup
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := waitRation(t, cmd, out, errb, 30*time.Second)
	if r.code != 128+int(syscall.SIGHUP) {
		t.Errorf("exit %d, want 129 (interrupted by SIGHUP):\n%s", r.code, r.stderr)
	}
	if recs := readJoblog(t, jl); len(recs) != 0 {
		t.Errorf("the joblog records %d jobs whose output was lost, want none", len(recs))
	}
}

// TestReliabQuit: SIGQUIT (Ctrl-\) was left to the Go runtime, which
// dumps the goroutines and exits 2: "2 jobs failed" by the exit-status
// table, when none had. ration now quits at once with 131 (128+3, GNU
// parallel's death by SIGQUIT), the goroutines still dumped; the jobs die
// with it, the finished ones are in the joblog, and --resume runs the
// rest.
func TestReliabQuit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jl := filepath.Join(dir, "jl")
	args := func(resume bool) []string {
		a := []string{"run", "-j", "2", "--joblog", jl}
		if resume {
			a = append(a, "--resume")
		}
		return append(a, "--", "sh", "-c", `: > "$1.started"; [ "$1" = a ] || [ -e go ] || exec sleep 30; echo "$1"`, "sh", ":::", "a", "b", "c")
	}
	cmd, out, errb := rcmd{dir: dir, args: args(false)}.start(t)
	testutil.Eventually(t, 10*time.Second, "job 1 logged and job 2 running", func() bool {
		_, err := os.Stat(filepath.Join(dir, "b.started"))
		return err == nil && countRecords(jl) == 1
	})
	if err := cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	r := waitRation(t, cmd, out, errb, 10*time.Second)
	if r.code != 128+int(syscall.SIGQUIT) || !strings.Contains(r.stderr, "got SIGQUIT") || !strings.Contains(r.stderr, "goroutine ") {
		t.Errorf("exit %d, want 131 with a message and the goroutines:\n%.2000s", r.code, r.stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r = rcmd{dir: dir, args: args(true)}.run(t)
	if recs := readJoblog(t, jl); r.code != 0 || len(recs) != 3 || r.stdout != "b\nc\n" && r.stdout != "c\nb\n" {
		t.Errorf("--resume: exit %d, stdout %q, %d records; want b and c run, 3 records:\n%s", r.code, r.stdout, len(recs), r.stderr)
	}
}

// TestReliabResumeHintJoblogStdout: with --joblog - (the joblog on
// stdout), the hint an interrupted run printed was `ration run --resume
// ... --joblog - ...`, which ration refuses (exit 255: --resume needs a
// joblog file). The hint now says the run cannot be resumed.
func TestReliabResumeHintJoblogStdout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd, out, errb := rcmd{dir: dir, args: []string{"run", "-j", "1", "--joblog", "-", "--", "sh", "-c", `[ "$1" = a ] || exec sleep 30`, "sh", ":::", "a", "b", "c"}}.start(t)
	testutil.Eventually(t, 10*time.Second, "job 1 logged", func() bool { return strings.Contains(out.String(), "\n1\t") })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "ration draining", func() bool { return strings.Contains(errb.String(), "got SIGTERM") })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil { // kill the sleeping jobs
		t.Fatal(err)
	}
	r := waitRation(t, cmd, out, errb, 20*time.Second)
	if r.code != 128+int(syscall.SIGTERM) || strings.Contains(r.stderr, "--resume") || !strings.Contains(r.stderr, "cannot be resumed") {
		t.Errorf("exit %d; want 143 and no --resume hint (--resume refuses --joblog -):\n%s", r.code, r.stderr)
	}
}

// TestReliabResumeHintRetryFailed: the hint of an interrupted
// --retry-failed run added --resume, and ration refuses "--retry-failed
// and --resume" (exit 255): the printed way to run the rest did not run.
// The hint is now the run's own arguments, which run the rest.
func TestReliabResumeHintRetryFailed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jl := filepath.Join(dir, "jl")
	log := "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n" +
		"1\t:\t1700000000.000\t     0.001\t0\t0\t1\t0\texit 1\n" +
		"2\t:\t1700000000.000\t     0.001\t0\t0\t1\t0\t: > started; [ -e go ] || exec sleep 30\n"
	if err := os.WriteFile(jl, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, out, errb := rcmd{dir: dir, args: []string{"run", "-j", "1", "--retry-failed", "--joblog", jl}}.start(t)
	testutil.Eventually(t, 10*time.Second, "job 2 running", func() bool {
		_, err := os.Stat(filepath.Join(dir, "started"))
		return err == nil
	})
	for _, s := range []string{"got SIGTERM:", "got SIGTERM again"} { // drain, then kill
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, 10*time.Second, s, func() bool { return strings.Contains(errb.String(), s) })
	}
	r := waitRation(t, cmd, out, errb, 20*time.Second)
	_, hint, ok := strings.Cut(r.stderr, "to run the rest: ration ")
	hint, _, _ = strings.Cut(hint, "\n")
	if r.code != 128+int(syscall.SIGTERM) || !ok {
		t.Fatalf("exit %d, want 143 with a hint:\n%s", r.code, r.stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// The hint is a shell command line (its words quoted for sh).
	again := exec.Command("sh", "-c", `exec "$0" `+hint, buildRation(t))
	again.Dir = dir
	stderr, err := again.CombinedOutput()
	code := again.ProcessState.ExitCode()
	if recs := readJoblog(t, jl); code != 1 || recs[2].Exitval != 0 {
		t.Errorf("the hint %q: exit %d (%v), job 2's last record %+v; want it run again and succeeded (job 1 failed again: exit 1):\n%s", hint, code, err, recs[2], stderr)
	}
}
