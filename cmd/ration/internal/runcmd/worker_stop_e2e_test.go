//go:build linux

package runcmd

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
)

// busyWorker is a worker that says "took N" on stderr when it has read
// task N, then sits on it for a minute.
const busyWorker = `while read -r l; do
` + idOf + `  echo "took $id" >&2
  sleep 60
  printf '{"id":%s,"ok":true,"output":"x"}\n' "$id"
done
`

// TestWorkerSIGTERMStopsTasks: a task stopped because ration got SIGTERM
// (its --term-timeout ran out) is a stopped task, in worker mode as in
// one-process-per-job mode: the workers' counts in the summary line say
// "stopped", not "failed", the exit status is 143, the joblog does not
// record it, and --resume runs it again. Before, the pool counted every
// stopped task as failed ("tasks: 0 succeeded, 2 failed").
func TestWorkerSIGTERMStopsTasks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jl := filepath.Join(dir, "joblog")
	w := writeWorker(t, dir, busyWorker)
	args := []string{"run", "-j", "2", "--term-timeout", "200ms", "--worker", w, "--joblog", jl, ":::", "a", "b"}
	cmd, out, errb := rcmd{dir: dir, args: args}.start(t)
	testutil.Eventually(t, 30*time.Second, "both tasks taken", func() bool {
		return strings.Contains(errb.String(), "took 1") && strings.Contains(errb.String(), "took 2")
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := waitRation(t, cmd, out, errb, 60*time.Second)
	if r.code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d, want 143", r.code)
	}
	tasks := regexp.MustCompile(`job attempts: [^;]*`).FindString(r.stderr)
	if tasks != "job attempts: 0 succeeded, 0 failed, 0 quarantined, 2 stopped" {
		t.Errorf("summary says %q, want the 2 tasks stopped and none failed", tasks)
	}
	if !strings.Contains(r.stderr, "0 failed, 2 stopped") {
		t.Errorf("summary line does not count the 2 jobs as stopped")
	}
	if n := countRecords(jl); n != 0 {
		t.Errorf("joblog records %d jobs, want none (stopped jobs are run again by --resume)", n)
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", r.stderr)
	}
	// --resume runs both again.
	done := writeWorker(t, dir, `while read -r l; do
`+idOf+`  printf '{"id":%s,"ok":true,"output":"again"}\n' "$id"
done
`)
	args = []string{"run", "-j", "2", "--worker", done, "--joblog", jl, "--resume", ":::", "a", "b"}
	r = rcmd{dir: dir, args: args}.run(t)
	if r.code != 0 || r.stdout != "again\nagain\n" || countRecords(jl) != 2 {
		t.Errorf("--resume: exit %d, stdout %q, %d joblog records; want 0, both run again, 2 records\nstderr:\n%s",
			r.code, r.stdout, countRecords(jl), r.stderr)
	}
}

// TestWorkerStopAfterSIGTERMIsPrompt: once ration run --worker stopped its
// tasks on SIGTERM, it gives its workers the run's grace to exit after
// their stdin closed (none after a second SIGTERM), as it gives jobs, so
// the run ends with its summary before the last-resort hatch. Before, the
// workers got the full stop timeout (5 s): an idle worker that takes its
// time to exit (cleaning up; or the replacement of a worker killed with
// its task, still loading) held the run past the hatch, which ended
// ration saying its input or output was blocked, with no summary.
func TestWorkerStopAfterSIGTERMIsPrompt(t *testing.T) {
	t.Parallel()
	for _, signals := range []int{1, 2} {
		t.Run(fmt.Sprintf("%dSIGTERM", signals), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			// A worker that cleans up for half a minute when its stdin
			// closes.
			w := writeWorker(t, dir, `while :; do
  read -r l || { echo "cleaning up" >&2; sleep 30; exit 0; }
`+idOf+`  echo "took $id" >&2
  sleep 60
  printf '{"id":%s,"ok":true,"output":"x"}\n' "$id"
done
`)
			args := []string{"run", "-j", "2", "--term-timeout", "200ms", "--worker", w, ":::", "a"}
			cmd, out, errb := rcmd{dir: dir, args: args}.start(t)
			testutil.Eventually(t, 30*time.Second, "the task taken", func() bool {
				return strings.Contains(errb.String(), "took 1") && len(childrenOf(cmd.Process.Pid)) == 2
			})
			for range signals {
				if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			r := waitRation(t, cmd, out, errb, 60*time.Second)
			if r.code != 128+int(syscall.SIGTERM) || strings.Contains(r.stderr, "blocked") || !strings.Contains(r.stderr, "0 done, 0 failed, 1 stopped") {
				t.Errorf("exit %d; want 143 with the summary, not the hatch's \"blocked\"\nstderr:\n%s", r.code, r.stderr)
			}
		})
	}
}

// TestWorkerTimeoutJoblog: a task quarantined because its workers
// exceeded --timeout was stopped by ration's own timeout, and its joblog
// line says so as in one-process-per-job mode: Exitval -1 with the signal
// (GNU parallel's "-1 SIG" for the runner's kill, "0 SIG" for a kill from
// outside), and --halt now,fail=1 exits with GNU parallel's 255 for it.
// Before, the line read "0 9", as if something outside had killed it,
// and the halted run exited 137.
func TestWorkerTimeoutJoblog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jl := filepath.Join(dir, "joblog")
	w := writeWorker(t, dir, busyWorker)
	r := rcmd{dir: dir, args: []string{"run", "--timeout", "300ms", "--max-breaks", "1", "--halt", "now,fail=1",
		"--worker", w, "--joblog", jl, ":::", "a"}}.run(t)
	e, ok := readJoblog(t, jl)[1]
	if !ok || e.Exitval != -1 || e.Signal != int(syscall.SIGKILL) {
		t.Errorf("joblog line %+v, want Exitval -1, Signal 9", e)
	}
	if r.code != 255 {
		t.Errorf("exit %d, want 255 (--halt now,fail=1 after a job with Exitval -1)\nstderr:\n%s", r.code, r.stderr)
	}
}
