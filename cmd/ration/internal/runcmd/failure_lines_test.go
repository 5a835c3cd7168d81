//go:build unix

package runcmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// failureLines: a failed job is one line on stderr, whatever made it fail
// (an exit status, a command that cannot start); --quiet prints none; a
// job the run stopped is "stopped", not "failed", in the logs.
func (e e2e) failureLines(t *testing.T) {
	e.t = t
	lines := func(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }
	count := func(ls []string, sub string) int {
		n := 0
		for _, l := range ls {
			if strings.Contains(l, sub) {
				n++
			}
		}
		return n
	}

	// Two failures by exit status, one success: two lines and the summary.
	r := e.run("", "-j", "1", "--log-format", "text", "--shell", "exit {}", ":::", "0", "3", "4")
	if ls := lines(r.stderr); r.code != 2 || len(ls) != 3 || count(ls, `msg="job failed"`) != 2 || count(ls, "ration: ") != 1 {
		t.Errorf("exit failures: exit %d, stderr:\n%s\nwant exit 2, 2 job-failed lines and the summary", r.code, r.stderr)
	}
	// A command that cannot start: one line, which names why. A program
	// named on the command line is looked up before any job starts: the
	// run's error, exit 255, no summary.
	r = e.run("", "-j", "1", "--log-format", "text", "no-such-command-for-ration", ":::", "1")
	if ls := lines(r.stderr); r.code != exitUsage || len(ls) != 1 || count(ls, "no-such-command-for-ration") != 1 || count(ls, "executable file not found") != 1 {
		t.Errorf("start failure: exit %d, stderr:\n%s\nwant exit 255 and one line naming the command and why", r.code, r.stderr)
	}
	// A program named by the input is looked up as its job starts: a job
	// that fails, one job-failed line naming the error, and the summary.
	r = e.run("", "-j", "1", "--log-format", "text", "{}", ":::", "no-such-command-for-ration")
	if ls := lines(r.stderr); r.code != 1 || len(ls) != 2 || count(ls, `msg="job failed"`) != 1 || count(ls, "executable file not found") != 1 {
		t.Errorf("start failure: exit %d, stderr:\n%s\nwant exit 1, one job-failed line naming the error, and the summary", r.code, r.stderr)
	}
	// --quiet: the exit status says it; nothing is printed.
	r = e.run("", "-q", "-j", "1", "--shell", "exit {}", ":::", "0", "3", "4")
	if r.code != 2 || r.stderr != "" {
		t.Errorf("--quiet: exit %d, stderr %q; want exit 2 and nothing", r.code, r.stderr)
	}
	// --quiet and a failure that only ration can explain (a command that
	// cannot start, a worker's task error): no log record, but still the
	// one line that says why, as a shell or xargs prints it, and as
	// --help promises ("log warnings and errors only"). Before, the run
	// failed with nothing on stderr at all.
	r = e.run("", "-q", "-j", "1", "{}", ":::", "no-such-command-for-ration")
	if ls := lines(r.stderr); r.code != 1 || len(ls) != 1 || count(ls, "no-such-command-for-ration") != 1 || count(ls, "executable file not found") != 1 {
		t.Errorf("--quiet start failure: exit %d, stderr %q; want exit 1 and one line naming the command and why", r.code, r.stderr)
	}
	r = e.run("", "-q", "-j", "1", "no-such-command-for-ration", ":::", "1")
	if ls := lines(r.stderr); r.code != exitUsage || len(ls) != 1 || count(ls, "no-such-command-for-ration") != 1 || count(ls, "executable file not found") != 1 {
		t.Errorf("--quiet, a program not found: exit %d, stderr %q; want exit 255 and one line naming the command and why", r.code, r.stderr)
	}
	failing := `sed -u 's/^{"id":\([0-9]*\),.*/{"id":\1,"ok":false,"error":"cannot parse"}/'`
	r = e.run("", "-q", "-j", "1", "--worker", failing, ":::", "in-put")
	if ls := lines(r.stderr); r.code != 1 || len(ls) != 1 || count(ls, "in-put") != 1 || count(ls, "cannot parse") != 1 {
		t.Errorf("--quiet task error: exit %d, stderr %q; want exit 1 and one line naming the input and the error", r.code, r.stderr)
	}
	// --halt now stops job 2 while it sleeps: job 1 failed, job 2 stopped.
	r = e.run("", "-j", "2", "--log-format", "json", "--halt", "now,fail=1", "--shell",
		`if [ {} = 1 ]; then sleep 0.2; exit 1; fi; sleep 30`, ":::", "1", "2")
	got := map[string]string{} // input -> msg/outcome of its job_finished
	for _, l := range lines(r.stderr) {
		var rec struct{ Msg, Event, Outcome, Input string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		if rec.Event == "job_finished" {
			got[rec.Input] = rec.Msg + "/" + rec.Outcome
		}
	}
	if got["1"] != "job failed/failed" || got["2"] != "job stopped/stopped" {
		t.Errorf("--halt now: job_finished records %v; want 1: job failed/failed, 2: job stopped/stopped\n%s", got, r.stderr)
	}
}
