//go:build linux

package runcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 16, items 13-16: every buffer bounded.

const mib = 1 << 20

// TestReliabLineBufferLongLine (item 13): --line-buffer prints a line
// longer than MaxPartialLine in pieces instead of holding it.
func TestReliabLineBufferLongLine(t *testing.T) {
	t.Parallel()
	r := rcmd{dir: t.TempDir(), stdout: devNullW(t), args: []string{"run", "--line-buffer", "--",
		"sh", "-c", "head -c 200000000 /dev/zero", ":::", "x"}}.run(t)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r.maxRSS > 100*mib {
		t.Errorf("ration's peak RSS %d MiB for a 200 MB line, want < 100", r.maxRSS/mib)
	}
}

// TestReliabSpillMissingTmpdir (item 14): without a usable TMPDIR, output
// beyond the memory window fails the job, saying why, in bounded memory.
func TestReliabSpillMissingTmpdir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jl := filepath.Join(dir, "jl")
	r := rcmd{dir: dir, env: []string{"TMPDIR=" + filepath.Join(dir, "missing")}, stdout: devNullW(t),
		args: []string{"run", "--joblog", jl, "--", "sh", "-c", "head -c 100000000 /dev/zero", ":::", "x"}}.run(t)
	if r.code != 1 || !strings.Contains(r.stderr, "output lost") || !strings.Contains(r.stderr, "spill file") {
		t.Errorf("exit %d, want 1 with the reason:\n%s", r.code, r.stderr)
	}
	if r.maxRSS > 80*mib {
		t.Errorf("ration's peak RSS %d MiB for 100 MB of output kept nowhere, want < 80", r.maxRSS/mib)
	}
	if e := readJoblog(t, jl)[1]; e.Succeeded() {
		t.Errorf("joblog: %+v, want failed", e)
	}
}

// TestReliabHugeJobsClamped (item 15): a huge -j is clamped with a
// warning, and memory does not grow with it.
func TestReliabHugeJobsClamped(t *testing.T) {
	t.Parallel()
	r := rcmd{dir: t.TempDir(), args: []string{"run", "-j", "200000", "--", "true", ":::", "1"}}.run(t)
	if r.code != 0 || !strings.Contains(r.stderr, "using 10000") {
		t.Errorf("exit %d, want 0 with a warning:\n%s", r.code, r.stderr)
	}
	if r.maxRSS > 150*mib {
		t.Errorf("ration's peak RSS %d MiB with -j 200000, want < 150", r.maxRSS/mib)
	}
}

// answerWorker writes a worker script that answers every task with an
// output of n bytes (an "x" per byte) and returns its --worker command.
func answerWorker(t *testing.T, dir string, n int) string {
	t.Helper()
	p := filepath.Join(dir, "worker.sh")
	script := `while read -r l; do
  id=$(printf '%s' "$l" | sed 's/^{"id":\([0-9]*\).*/\1/')
  printf '{"id":%s,"ok":true,"output":"' "$id"
  head -c ` + itoa(n) + ` /dev/zero | tr '\0' x
  printf '"}\n'
done
`
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return "sh " + p
}

func itoa(n int) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}

// TestReliabWorkerAnswerTooLong (item 16): a worker answer longer than
// worker.DefaultMaxLine (16 MiB) is a clear protocol break, in bounded
// memory; an answer below it is printed.
func TestReliabWorkerAnswerTooLong(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := rcmd{dir: dir, stdout: devNullW(t), args: []string{"run", "--worker", answerWorker(t, dir, 20_000_000), "--max-breaks", "1", ":::", "x"}}.run(t)
	if r.code != 1 || !strings.Contains(r.stderr, "longer than the limit") {
		t.Errorf("exit %d, want 1 with a protocol break:\n%s", r.code, r.stderr)
	}
	if r.maxRSS > 200*mib {
		t.Errorf("ration's peak RSS %d MiB for a 20 MB answer, want < 200", r.maxRSS/mib)
	}
}

// TestReliabWorkerHugeInputResumes (item 16): a 2 MB input in --worker
// mode makes a joblog line of at most joblog.MaxLine (1 MiB), which
// --resume reads.
func TestReliabWorkerHugeInputResumes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jl, in := filepath.Join(dir, "jl"), filepath.Join(dir, "in")
	if err := os.WriteFile(in, []byte(strings.Repeat("y", 2_000_000)+"\nsmall\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := accGoWorker(t)
	r := rcmd{dir: dir, stdout: devNullW(t), args: []string{"run", "--worker", w, "--joblog", jl, "-a", in}}.run(t)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	r = rcmd{dir: dir, stdout: devNullW(t), args: []string{"run", "--worker", w, "--joblog", jl, "--resume", "-a", in}}.run(t)
	if r.code != 0 || !strings.Contains(r.stderr, "2 skipped") {
		t.Errorf("--resume: exit %d, want both skipped:\n%s", r.code, r.stderr)
	}
}
