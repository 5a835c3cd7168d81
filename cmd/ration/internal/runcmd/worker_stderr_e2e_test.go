//go:build linux

package runcmd

import (
	"strings"
	"testing"
	"time"
)

// TestWorkerAnswersOnStderrFails: a worker that writes its answers on
// stderr, with no --timeout, gets the hint and fails the run within
// seconds (each task quarantined after its breaks), where it hung.
func TestWorkerAnswersOnStderrFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := writeWorker(t, dir, `while read -r l; do
`+idOf+`  printf '{"id":%s,"ok":true,"output":"x"}\n' "$id" >&2
done
`)
	c, out, errb := rcmd{dir: dir, args: []string{"run", "--worker", w, ":::", "a", "b"}}.start(t)
	r := waitRation(t, c, out, errb, 20*time.Second)
	if r.code != 2 || !strings.Contains(r.stderr, "hint") || !strings.Contains(r.stderr, "answered task 1 on its stderr") {
		t.Errorf("exit %d after %s, want 2 (two failed) with the hint and the break:\n%s", r.code, r.wall, r.stderr)
	}
}
