//go:build unix

package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/runner/event"
)

// TestProcessExecutorStdin: a job reads its Attempt.Stdin whole (--pipe's
// block), and a job that reads none of a block larger than a pipe holds
// still ends, its Exec returning (the feed's goroutine is checked by
// TestMain's goleak).
func TestProcessExecutorStdin(t *testing.T) {
	var e ProcessExecutor
	for _, tc := range []struct {
		name  string
		argv  []string
		stdin string
		want  string
	}{
		{"read whole", []string{"wc", "-c"}, strings.Repeat("x", 1<<20), "1048576\n"},
		{"empty block", []string{"wc", "-c"}, "", "0\n"},
		{"not read", []string{"true"}, strings.Repeat("x", 1<<20), ""},
		{"closed early", []string{"head", "-c", "3"}, strings.Repeat("abc\n", 1<<18), "abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out testutil.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res := e.Exec(ctx, &Attempt{Argv: tc.argv, Stdout: &out, Stderr: &out, Stdin: strings.NewReader(tc.stdin)})
			if res.Outcome != event.Succeeded || strings.TrimLeft(out.String(), " ") != tc.want {
				t.Errorf("got %v %v, output %q; want success, %q", res.Outcome, res.Err, out.String(), tc.want)
			}
		})
	}
}
