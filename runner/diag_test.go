package runner

import (
	"context"
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
		fin := rec.kinds(event.JobFinished)
		if len(fin) != 1 || fin[0].Err == nil || !strings.Contains(fin[0].Err.Error(), "/does/not/exist") {
			t.Errorf("omit %v: JobFinished %+v, want the start error", omit, fin)
		}
	}
}
