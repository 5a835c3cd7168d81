//go:build linux

package worker_test

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ration-run/ration/runner/worker"
)

// TestWorkerOOMScoreAdj: a worker's oom_score_adj is OOMScoreAdj above
// this process's, so that the OOM killer takes a worker before the pool's
// owner.
func TestWorkerOOMScoreAdj(t *testing.T) {
	own, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		t.Skipf("no oom_score_adj: %v", err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(own)))
	p, _ := newPool(t, worker.Config{Command: pyWorker(t), Size: 1})
	out, err := p.Do(context.Background(), "who")
	if err != nil {
		t.Fatal(err)
	}
	var a struct{ PID int }
	if err := json.Unmarshal(out, &a); err != nil || a.PID == 0 {
		t.Fatalf("answer %s: %v", out, err)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(a.PID) + "/oom_score_adj")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(b)), strconv.Itoa(min(n+worker.OOMScoreAdj, 1000)); got != want {
		t.Errorf("worker's oom_score_adj %s, want %s", got, want)
	}
}
