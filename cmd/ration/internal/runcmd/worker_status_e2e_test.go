//go:build linux

package runcmd

import (
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
)

// TestWorkerStatusShowsWorkers: in worker mode the SIGUSR1 report shows
// the worker processes after the running-jobs table, one line each: slot,
// pid, state, the task it holds (job number and input) and for how long,
// idle ones too, so that a hang in a worker is explained. Before, the
// report showed the jobs only, and nothing about the workers.
func TestWorkerStatusShowsWorkers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := writeWorker(t, dir, busyWorker)
	args := []string{"run", "-j", "3", "--term-timeout", "200ms", "--worker", w, ":::", "a", "b"}
	cmd, out, errb := rcmd{dir: dir, args: args}.start(t)
	testutil.Eventually(t, 30*time.Second, "both tasks taken and three workers started", func() bool {
		return strings.Contains(errb.String(), "took 1") && strings.Contains(errb.String(), "took 2") &&
			len(childrenOf(cmd.Process.Pid)) == 3
	})
	workers := childrenOf(cmd.Process.Pid)
	if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	var report string
	// The report goes out in one write.
	testutil.Eventually(t, 30*time.Second, "the SIGUSR1 report", func() bool {
		report = errb.String()
		return strings.Contains(report, "LAST OUTPUT")
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitRation(t, cmd, out, errb, 60*time.Second)
	if !regexp.MustCompile(`(?m)^ration: workers: 3 live, 2 busy, 0 retiring`).MatchString(report) {
		t.Errorf("no workers line with 3 live, 2 busy, 0 retiring")
	}
	busy := map[string]bool{}
	for _, pid := range workers {
		m := regexp.MustCompile(fmt.Sprintf(`(?m)^\d+ +%d +(busy|idle) +(\S+) +\S+ +(\S+)$`, pid)).FindStringSubmatch(report)
		switch {
		case m == nil:
			t.Errorf("no line for worker pid %d", pid)
		case m[1] == "busy":
			busy[m[2]+" "+m[3]] = true
		}
	}
	if !busy["1 a"] || !busy["2 b"] {
		t.Errorf("busy workers hold %v, want job 1 (a) and job 2 (b)", busy)
	}
	if t.Failed() {
		t.Logf("report:\n%s", report)
	}
}

// TestWorkerStatusJSON: with --log-format json the SIGUSR1 status record
// carries the workers' lines too ("workers", as the stall record carries
// "goroutines"), not only the running jobs.
func TestWorkerStatusJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := writeWorker(t, dir, busyWorker)
	args := []string{"run", "--log-format", "json", "-j", "3", "--term-timeout", "200ms", "--worker", w, ":::", "a", "b"}
	cmd, out, errb := rcmd{dir: dir, args: args}.start(t)
	testutil.Eventually(t, 30*time.Second, "both tasks taken and three workers started", func() bool {
		return strings.Contains(errb.String(), "took 1") && strings.Contains(errb.String(), "took 2") &&
			len(childrenOf(cmd.Process.Pid)) == 3
	})
	if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, "the status record", func() bool { return strings.Contains(errb.String(), `"event":"status"`) })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitRation(t, cmd, out, errb, 60*time.Second)
	recs, _ := accJSONLines(errb.String())
	for _, r := range recs {
		if r["event"] != "status" {
			continue
		}
		if ws, _ := r["workers"].(string); !strings.Contains(ws, "ration: workers: 3 live, 2 busy") {
			t.Errorf("status record's workers %q, want the workers' lines", r["workers"])
		}
		return
	}
	t.Errorf("no status record:\n%s", errb.String())
}
