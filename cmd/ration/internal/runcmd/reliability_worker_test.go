//go:build linux

package runcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 16, items 12, 18 and 20: workers.

// writeWorker writes a worker shell script and returns its --worker
// command.
func writeWorker(t *testing.T, dir, script string) string {
	t.Helper()
	p := filepath.Join(dir, "worker.sh")
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return "sh " + p
}

// idOf is the shell code that sets $id to the request line $l's id.
const idOf = `id=$(printf '%s' "$l" | sed 's/^{"id":\([0-9]*\).*/\1/')` + "\n"

// TestReliabWorkerAnswersOnStderr (item 12): a worker that writes its
// answers on stderr gets a hint, not a silent hang.
func TestReliabWorkerAnswersOnStderr(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := writeWorker(t, dir, `while read -r l; do
`+idOf+`  printf '{"id":%s,"ok":true,"output":"x"}\n' "$id" >&2
done
`)
	r := rcmd{dir: dir, args: []string{"run", "--worker", w, "--timeout", "1s", "--max-breaks", "1", ":::", "a"}}.run(t)
	if r.code != 1 || !strings.Contains(r.stderr, "hint") || !strings.Contains(r.stderr, "answers go to stdout") {
		t.Errorf("exit %d, want 1 with a hint:\n%s", r.code, r.stderr)
	}
}

// TestReliabWorkerNotFound (item 18): --worker with a program that does
// not exist fails at once with 255.
func TestReliabWorkerNotFound(t *testing.T) {
	t.Parallel()
	r := rcmd{dir: t.TempDir(), args: []string{"run", "--worker", "nosuchcmd-reliab --flag", ":::", "a", "b"}}.run(t)
	if r.code != exitUsage || !strings.Contains(r.stderr, "nosuchcmd-reliab") || r.wall > 5*time.Second {
		t.Errorf("exit %d after %s, want 255 at once naming the command:\n%s", r.code, r.wall, r.stderr)
	}
}

// TestReliabWorkerIDIsJobNumber (item 20): the id sent to a worker is the
// job number that --dry-run shows, also when --resume skips jobs.
func TestReliabWorkerIDIsJobNumber(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jl, ids := filepath.Join(dir, "jl"), filepath.Join(dir, "ids")
	w := writeWorker(t, dir, `while read -r l; do
`+idOf+`  echo "$id" >> `+ids+`
  printf '{"id":%s,"ok":true,"output":"x"}\n' "$id"
done
`)
	r := rcmd{dir: dir, args: []string{"run", "--worker", w, "--dry-run", ":::", "a", "b", "c"}}.run(t)
	if !strings.Contains(r.stdout, `{"id":2,"input":"b"}`) {
		t.Fatalf("--dry-run: %q", r.stdout)
	}
	// Job 1's record holds the command a worker job records: the
	// worker's command and the input (--resume matches by command).
	log := "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n1\t:\t1795216618.196\t     0.000\t0\t2\t0\t0\t" + w + " a\n"
	if err := os.WriteFile(jl, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	r = rcmd{dir: dir, args: []string{"run", "-j", "1", "--worker", w, "--joblog", jl, "--resume", ":::", "a", "b", "c"}}.run(t)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(ids); string(b) != "2\n3\n" {
		t.Errorf("ids sent: %q, want the job numbers 2 and 3", b)
	}
}

// TestReliabWorkerAnswersTwice (item 20): a worker that answers every
// task twice breaks itself only: no task is quarantined for it.
func TestReliabWorkerAnswersTwice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := writeWorker(t, dir, `while read -r l; do
`+idOf+`  printf '{"id":%s,"ok":true,"output":"x"}\n' "$id"
  printf '{"id":%s,"ok":true,"output":"x"}\n' "$id"
done
`)
	r := rcmd{dir: dir, args: append([]string{"run", "-j", "2", "--worker", w, ":::"}, inputs(8)...)}.run(t)
	if r.code != 0 || strings.Count(r.stdout, "x\n") != 8 {
		t.Errorf("exit %d, %d answers, want 0 and 8:\n%s", r.code, strings.Count(r.stdout, "x\n"), r.stderr)
	}
}
