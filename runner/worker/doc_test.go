//go:build linux

package worker_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/runner/worker"
)

// codeBlock returns the first fenced block of lang in md that contains want.
func codeBlock(t *testing.T, md, lang, want string) string {
	t.Helper()
	for _, part := range strings.Split(md, "```"+lang+"\n")[1:] {
		code, _, ok := strings.Cut(part, "```")
		if ok && strings.Contains(code, want) {
			return code
		}
	}
	t.Fatalf("docs/workers.md has no %s block containing %q", lang, want)
	return ""
}

// TestDocExamples runs the Python and Go workers shown in docs/workers.md
// through the pool, so the documentation cannot drift from the protocol.
func TestDocExamples(t *testing.T) {
	b, err := os.ReadFile("../../docs/workers.md")
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	dir := t.TempDir()
	py := filepath.Join(dir, "worker.py")
	if err := os.WriteFile(py, []byte(codeBlock(t, md, "python", "sys.stdin")), 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(codeBlock(t, md, "go", "package main")), 0o644); err != nil {
		t.Fatal(err)
	}
	workers := []struct {
		name string
		cmd  func(t *testing.T) []string
	}{
		{"python", func(t *testing.T) []string { return append(pyWorker(t)[:1], py) }},
		{"go", func(t *testing.T) []string {
			// The worker is built from the doc's own source, so no prebuilt
			// binary ($RATION_TEST_PREBUILT) can stand in for it.
			goTool := testutil.GoTool()
			if _, err := exec.LookPath(goTool); err != nil {
				t.Skipf("no Go toolchain to build the Go worker of docs/workers.md: %v", err)
			}
			bin := filepath.Join(dir, "goworker")
			build := exec.Command(goTool, "build", "-o", bin, src)
			build.Dir = dir
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("building the Go worker of docs/workers.md: %v\n%s", err, out)
			}
			return []string{bin}
		}},
	}
	for _, w := range workers {
		t.Run(w.name, func(t *testing.T) {
			p, _ := newPool(t, worker.Config{Command: w.cmd(t), Size: 2})
			out, err := p.Do(context.Background(), "hello")
			if err != nil || worker.OutputText(out) != "HELLO" {
				t.Errorf("got %s, %v; want HELLO", out, err)
			}
			_, err = p.Do(context.Background(), "")
			var te *worker.TaskError
			if !errors.As(err, &te) {
				t.Errorf("empty input: %v, want a *TaskError", err)
			}
			if s := p.Stats(); len(s.Breaks) != 0 || s.Starts != 2 {
				t.Errorf("stats %+v: the documented workers must not break", s)
			}
		})
	}
}
