//go:build unix

package runcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
)

// TestStatusJSONE2E: with --log-format json, the SIGUSR1 report is one
// JSON record (msg "status", event "status", the counters and a "jobs"
// array as the stall record has), so stderr stays one JSON object per
// line. It used to write the plain-text table into the JSON log.
func TestStatusJSONE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildRation(t)
	dir := t.TempDir()
	release := filepath.Join(dir, "release")
	// A job's process runs before ration records its start, and writes
	// its line before ration reads it: SIGUSR1 must come once ration
	// printed each job's line (--line-buffer), which it does only after
	// both. The jobs run until the report is out.
	p := accStart(t, bin, nil, nil, nil, "--log-format", "json", "-j", "2", "--line-buffer", "--term-timeout", "1s", "--shell",
		`echo $$ > `+dir+`/{}.pid; echo working on {}; while [ ! -e `+release+` ]; do sleep 0.05; done`, ":::", "alpha", "beta")
	t.Cleanup(func() { os.WriteFile(release, nil, 0o644) }) // the jobs end, with or without ration
	pids := map[string]int{"alpha": readPid(t, filepath.Join(dir, "alpha.pid")), "beta": readPid(t, filepath.Join(dir, "beta.pid"))}
	testutil.WaitForText(t, 10*time.Second, p.stdout.String, "working on alpha\n")
	testutil.WaitForText(t, 10*time.Second, p.stdout.String, "working on beta\n")
	if err := p.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	testutil.WaitForText(t, 10*time.Second, p.stderr.String, `"msg":"status"`)
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.stderr.String())
	}
	recs, other := accJSONLines(p.stderr.String())
	if len(other) > 0 {
		t.Errorf("%d stderr lines are not JSON objects: %q", len(other), other)
	}
	var status []map[string]any
	for _, r := range recs {
		if r["msg"] == "status" {
			status = append(status, r)
		}
	}
	if len(status) != 1 {
		t.Fatalf("%d status records, want 1:\n%s", len(status), p.stderr.String())
	}
	s := status[0]
	jobs, _ := s["jobs"].([]any)
	if s["event"] != "status" || s["running"] != 2.0 || s["succeeded"] != 0.0 || s["failed"] != 0.0 || len(jobs) != 2 {
		t.Fatalf("status record %v, want event status, running 2, succeeded 0, failed 0 and 2 jobs", s)
	}
	for _, j := range jobs {
		m, _ := j.(map[string]any)
		in := fmt.Sprint(m["input"])
		if m["pid"] != float64(pids[in]) || !strings.HasPrefix(fmt.Sprint(m["last_line"]), "working on "+in) || m["running_seconds"] == nil {
			t.Errorf("job %v, want input alpha or beta with its pid %v and last line", m, pids[in])
		}
	}
}

// TestEveryJSONRecordHasEventE2E: docs/observability.md says every record
// carries "event" to filter on; the slow job and stall warnings, the
// metrics address and two debug records used to have none.
func TestEveryJSONRecordHasEventE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildRation(t)
	p := accStart(t, bin, nil, nil, nil, "--log-format", "json", "--debug", "--metrics-addr", "127.0.0.1:0",
		"--stall-timeout", "1s", "--slow-factor", "2", "-j", "2", "sh", "-c",
		`case $0 in slow) sleep 2.5 ;; *) sleep 0.05 ;; esac`, ":::", "1", "2", "3", "4", "5", "6", "slow")
	if code := p.wait(60 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.stderr.String())
	}
	recs, other := accJSONLines(p.stderr.String())
	if len(other) > 0 {
		t.Errorf("%d stderr lines are not JSON objects: %q", len(other), other)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		ev, ok := r["event"].(string)
		if !ok || ev == "" {
			t.Errorf("record without event: %v", r["msg"])
		}
		seen[ev] = true
	}
	for _, ev := range []string{"slow_job", "stall", "metrics_serving"} {
		if !seen[ev] {
			t.Errorf("no %s record; events seen: %v", ev, seen)
		}
	}
}

// TestProgressJSONE2E: --progress (or --bar, --eta) with --log-format json
// and stderr not a terminal logs its lines as "progress" records; it used
// to write them as plain text into the JSON log.
func TestProgressJSONE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildRation(t)
	p := accStart(t, bin, nil, nil, nil, "--log-format", "json", "--progress", "-j", "2", "sleep", ":::", "0.1", "0.1", "0.1")
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.stderr.String())
	}
	recs, other := accJSONLines(p.stderr.String())
	if len(other) > 0 {
		t.Errorf("%d stderr lines are not JSON objects: %q", len(other), other)
	}
	var last map[string]any
	for _, r := range recs {
		if r["event"] == "progress" {
			last = r
		}
	}
	if last == nil || last["done"] != 3.0 || last["total"] != 3.0 || last["failed"] != 0.0 {
		t.Errorf("last progress record %v, want done 3 of total 3, 0 failed", last)
	}
}
