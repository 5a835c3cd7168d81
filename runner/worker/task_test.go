//go:build linux

package worker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/worker"
)

// answerOn is a worker script that answers each task with "x" on fd 2,
// fd 1 or both (stderr first).
func answerOn(fds ...string) string {
	var b strings.Builder
	b.WriteString(`while read -r l; do id=$(printf '%s' "$l" | sed 's/^{"id":\([0-9]*\).*/\1/'); `)
	for _, fd := range fds {
		b.WriteString(`printf '{"id":%s,"ok":true,"output":"x"}\n' "$id" >&` + fd + `; `)
	}
	b.WriteString("done")
	return b.String()
}

// TestAnswerOnStderr: a worker that writes its answers on stderr breaks
// with a protocol error StderrAnswerGrace after each, so that the task is
// quarantined within seconds, with no Timeout; it held the task until
// the timeout, or forever. A worker that logs its answer on stderr and
// sends it on stdout is fine.
func TestAnswerOnStderr(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, _ := newPool(t, worker.Config{Command: []string{"sh", "-c", answerOn("2")}, Size: 1})
	start := time.Now()
	r := p.Run(ctx, worker.Task{Seq: 1, Input: "a"})
	took := time.Since(start)
	if r.Outcome != event.Quarantined || r.Cause != event.CauseProtocol || r.Err == nil || !strings.Contains(r.Err.Error(), "on its stderr") {
		t.Fatalf("got %v %v %v, want quarantined for a protocol break naming stderr", r.Outcome, r.Cause, r.Err)
	}
	if max := worker.DefaultMaxBreaks*worker.StderrAnswerGrace + 5*time.Second; took > max {
		t.Errorf("took %s, want at most %s", took, max)
	}

	p2, _ := newPool(t, worker.Config{Command: []string{"sh", "-c", answerOn("2", "1")}, Size: 1})
	if r := p2.Run(ctx, worker.Task{Seq: 1, Input: "a"}); r.Outcome != event.Succeeded || string(r.Output) != `"x"` {
		t.Errorf("logged on stderr, answered on stdout: %v %v %q", r.Outcome, r.Err, r.Output)
	}
}
