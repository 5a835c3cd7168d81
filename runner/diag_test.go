package runner

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/input"
)

// TestOmitErrorLines: a command that cannot start writes "ration: CMD:
// ..." into the job's stderr, unless OmitErrorLines; the JobFinished event
// carries the error either way.
func TestOmitErrorLines(t *testing.T) {
	for _, omit := range []bool{false, true} {
		var rec recorder
		var stderr syncBuf
		r, err := New(Config{Command: []string{"/does/not/exist"}, Input: input.Args([]string{"a"}), Jobs: 1,
			Observer: &rec, Stderr: &stderr, OmitErrorLines: omit})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := r.Run(context.Background())
		if err != nil || sum.Failed != 1 {
			t.Fatalf("omit %v: %+v, %v", omit, sum, err)
		}
		if got := stderr.String(); omit != (got == "") || (!omit && !strings.HasPrefix(got, "ration: /does/not/exist: ")) {
			t.Errorf("omit %v: stderr %q", omit, got)
		}
		fin := rec.Kind(event.JobFinished)
		if len(fin) != 1 || fin[0].Err == nil || !strings.Contains(fin[0].Err.Error(), "/does/not/exist") {
			t.Errorf("omit %v: JobFinished %+v, want the start error", omit, fin)
		}
	}
}

// TestJobOOMScoreAdj: a job's oom_score_adj is JobOOMScoreAdj above
// ration's, so that the OOM killer takes a job before ration.
func TestJobOOMScoreAdj(t *testing.T) {
	own, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		t.Skipf("no oom_score_adj: %v", err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(own)))
	var out syncBuf
	r, err := New(Config{Command: []string{"sh", "-c", "sleep 0.3; cat /proc/$$/oom_score_adj"}, Input: input.Args([]string{"a"}),
		Jobs: 1, Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(out.String()), strconv.Itoa(min(n+JobOOMScoreAdj, 1000)); got != want {
		t.Errorf("job's oom_score_adj %q, want %s (ration's %d + %d)", got, want, n, JobOOMScoreAdj)
	}
}
